"""``benchbot rules`` and ``benchbot explain``: benchbot's rules, and the external workflow
checkers' (``zizmor/<audit>``, ``actionlint/<kind>``: ``benchbot lint --workflows``), which
the tools document themselves."""

from __future__ import annotations

import argparse
import json
import sys

from bot import rules
from bot.external import names

EXIT_OK, EXIT_USAGE = 0, 2

_TOOLS = (  # (tool, its version, what its ids name, where it documents them)
    ("zizmor", names.ZIZMOR_VERSION, "audit", names.ZIZMOR_DOCS),
    ("actionlint", names.ACTIONLINT_VERSION, "kind", names.ACTIONLINT_DOCS),
)


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ls = sub.add_parser("rules", help="list the rules (benchbot's, and the workflow checkers' with --external)")
    ls.add_argument("--external", action="store_true",
                    help="also list every zizmor audit and actionlint kind, one per line")
    ls.add_argument("--format", choices=("text", "json"), default="text",
                    help="text: a line per rule; json: every rule, the external ones each, as a list (default: text)")
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule", help="a rule id or code, e.g. ignored-variant or BB103 (see 'benchbot rules')")


def run_rules(args: argparse.Namespace) -> int:
    own = sorted(rules.RULES.items(), key=lambda item: item[1].CODE)
    if args.format == "json":
        rows = [{"id": rid, "code": m.CODE, "severity": m.SEVERITY.label, "summary": m.SUMMARY} for rid, m in own]
        rows += [{"id": f"{tool}/{sub}", "code": None, "severity": None, "summary": f"{tool} {version} {what}",
                  "help": names.help_uri(f"{tool}/{sub}")}
                 for tool, version, what, _ in _TOOLS for sub in sorted(names.TOOLS[tool])]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for rid, module in own:
        print(f"{module.CODE}  {rid:<22} {module.SEVERITY.label:<8} {module.SUMMARY}")
    print("\nThe workflow checkers' rules (benchbot lint --workflows; pip install 'benchbot[workflows]'):")
    for tool, version, what, docs in _TOOLS:
        print(f"       {tool + '/<' + what + '>':<22} {len(names.TOOLS[tool])} {what}s of {tool} {version}: {docs}")
        if args.external:
            for sub in sorted(names.TOOLS[tool]):
                print(f"         {tool}/{sub}")
    if not args.external:
        print("       (--external lists each; a tool's name alone, e.g. 'zizmor', selects all of its rules)")
    return EXIT_OK


def run_explain(args: argparse.Namespace) -> int:
    from bot.report import rule_text

    found = rules.resolve_rule(args.rule)
    if found is None:
        print(f"benchbot: unknown rule {args.rule!r}; see 'benchbot rules'", file=sys.stderr)
        return EXIT_USAGE
    if found not in rules.RULES:  # zizmor/<audit>, actionlint/<kind>: the tool documents it
        print(f"{found}: a rule of an external workflow checker (benchbot lint --workflows); "
              f"see {names.help_uri(found)}")
        return EXIT_OK
    module = rules.RULES[found]
    print(f"{found} ({module.CODE}, {module.SEVERITY.label})\n")
    print(rule_text(module))
    return EXIT_OK
