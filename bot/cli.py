"""Command line: ``python -m bot lint|dispatch|event|rules|explain``. The only module that prints."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Sequence

from bot import rules
from bot.config import Config, ConfigError, load_config
from bot.findings import Finding, Severity
from bot.repo.tree import Tree, TreeError, open_tree
from bot.report import Stats

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "sarif", "github", "markdown")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchbot", description="Static dispatch linter for GPU benchmark repos.")
    sub = p.add_subparsers(dest="command", required=True)
    lint = sub.add_parser("lint", help="lint a benchmark repo (work tree or git revision)")
    lint.add_argument("path", nargs="?", default=".", help="repo root (default: .)")
    lint.add_argument("--rev", help="lint this git revision of PATH instead of its work tree")
    lint.add_argument("--format", choices=FORMATS, default=None,
                      help="output format (default: github when GITHUB_ACTIONS=true, else text)")
    lint.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    lint.add_argument("--sarif-file", metavar="FILE", help="also write a SARIF 2.1.0 report to FILE")
    lint.add_argument("--frames", action=argparse.BooleanOptionalAction, default=None,
                      help="show a code frame under each finding (text; default: on when stdout is a terminal)")
    lint.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")
    lint.add_argument("--select", help="comma-separated rule ids or codes to run")
    lint.add_argument("--ignore", help="comma-separated rule ids or codes to skip")
    lint.add_argument("--fail-on", choices=("error", "warning", "info"), help="lowest severity that fails")
    lint.add_argument("--show-fixes", action="store_true", help="print proposed fixes as diffs (text)")
    lint.add_argument("--timings", action="store_true", help="print phase timings to stderr")
    dispatch = sub.add_parser("dispatch", help="show the script every (entry, launcher) pair runs")
    dispatch.add_argument("path", nargs="?", default=".", help="repo root (default: .)")
    dispatch.add_argument("--rev", help="a git revision of PATH instead of its work tree")
    dispatch.add_argument("--entry", action="append", help="only these entries (repeatable; glob patterns)")
    dispatch.add_argument("--format", choices=("text", "json"), default="text")
    dispatch.add_argument("--config", help="configuration file")
    event = sub.add_parser("event", help="handle the GitHub Actions event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH)")
    event.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml of the head)")
    event.add_argument("--fail-on", choices=("error", "warning", "info"),
                       help="lowest severity of a new finding that fails the job")
    event.add_argument("--sarif-file", metavar="FILE", help="also write a SARIF 2.1.0 report of the head to FILE")
    event.add_argument("--format", choices=FORMATS, default=None,
                       help="how the findings the PR introduces are printed (default: github annotations)")
    sub.add_parser("rules", help="list the rules")
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "rules":
        for rid, module in rules.RULES.items():
            print(f"{module.CODE}  {rid:<22} {module.SEVERITY.label:<8} {module.SUMMARY}")
        return EXIT_OK
    if args.command == "explain":
        found = rules.resolve_rule(args.rule)
        if found is None:
            print(f"benchbot: unknown rule {args.rule!r}; see 'benchbot rules'", file=sys.stderr)
            return EXIT_USAGE
        module = rules.RULES[found]
        print(f"{found} ({module.CODE}, {module.SEVERITY.label})\n")
        print(inspect.cleandoc(module.__doc__ or ""))
        return EXIT_OK
    if args.command == "dispatch":
        return _dispatch(args)
    if args.command == "event":
        return _event(args)
    return _lint(args)


def _dispatch(args: argparse.Namespace) -> int:
    import fnmatch
    import json

    from bot.repo.facts import gather
    from bot.report.dispatch import rows

    try:
        tree = open_tree(args.path, args.rev)
        conf = load_config(tree, args.config)
    except (TreeError, ConfigError) as exc:
        print(f"benchbot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    facts = gather(tree, conf.profile)
    table = [r for r in rows(facts)
             if not args.entry or any(fnmatch.fnmatchcase(str(r["entry"]), pat) for pat in args.entry)]
    if args.format == "json":
        print(json.dumps(table, indent=2))
    else:
        for r in table:
            mark = {True: "", False: "  (missing)", None: "  (unknown)"}[r["exists"]]  # type: ignore[index]
            print(f"{r['entry']}  [{r['point']}]  {r['launcher']}  ->  {r['script'] or '(nothing dispatched)'}"
                  f"{mark}  @{r['built_at']}")
    return EXIT_OK


def _event(args: argparse.Namespace) -> int:
    import logging

    from bot.github import event
    from bot.github.adapter import SettingsError, from_env
    from bot.github.port import GitHubError, Port

    logging.basicConfig(level=logging.WARNING, format="benchbot: %(message)s")
    logging.getLogger("github").setLevel(logging.WARNING)  # PyGithub logs every retried 403 at INFO
    env = dict(os.environ)
    try:
        name, payload = event.read_event(env)
    except ValueError as exc:
        print(f"benchbot: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def port() -> Port:
        try:
            return from_env(env)
        except SettingsError as exc:
            raise GitHubError(0, str(exc), "connect") from None

    opts = event.Options(args.config, Severity.parse(args.fail_on) if args.fail_on else None)
    out = event.route(name, payload, env, port, opts)
    sarif = None
    if out.findings is not None and out.stats is not None:
        sys.stdout.write(_render(args.format or "github", out.findings, out.stats, out.root, None, False, False))
        if out.head_findings is not None:
            sarif = _render("sarif", out.head_findings, out.stats, out.root, None, False, False)
    for line in out.logs:
        print(line, file=sys.stderr)
    files = [(args.sarif_file, sarif, "w")]
    if env.get("GITHUB_STEP_SUMMARY"):
        files.append((env["GITHUB_STEP_SUMMARY"], out.step_summary, "a"))
    for path, text, mode in files:
        if path and text is not None:
            try:
                with open(path, mode, encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                print(f"benchbot: cannot write {path}: {exc.strerror}", file=sys.stderr)
                return EXIT_USAGE
    return out.code


def _rule_list(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    out = set()
    for name in (t.strip() for t in text.split(",")):
        if not name:
            continue
        rid = rules.resolve_rule(name)
        if rid is None:
            raise ConfigError(f"unknown rule {name!r}; see 'benchbot rules'")
        out.add(rid)
    return frozenset(out)


def _use_color(tty: bool) -> bool:
    """Colour on a terminal; NO_COLOR turns it off, FORCE_COLOR on (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return tty and os.environ.get("TERM") != "dumb"


def _render(fmt: str, findings: list[Finding], stats: Stats, root: str, tree: Tree | None, show_fixes: bool,
            frames: bool, color: bool = False, rev: bool = False) -> str:
    """A report in one of FORMATS. ``root``: the repo root (a directory, or ``repo@rev``)."""
    from pathlib import Path

    from bot.report import github, markdown, sarif
    from bot.report import json as json_report
    from bot.report import text as text_report

    if fmt == "json":
        return json_report.render(findings, stats, root)
    if fmt == "sarif":
        return sarif.render(findings, stats, root_uri=Path(root).as_uri() + "/" if not rev and tree else None)
    if fmt == "github":
        return github.render(findings, stats)
    if fmt == "markdown":
        return markdown.render(findings, stats)
    return text_report.render(findings, stats, show_fixes=show_fixes, source=tree.text if tree else (lambda _: None),
                              frames=frames, color=color)


def _lint(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bot.lint import lint
    from bot.report import text as text_report

    try:
        tree: Tree = open_tree(args.path, args.rev)
        conf: Config = load_config(tree, args.config)
        select = _rule_list(args.select)
        ignore = _rule_list(args.ignore)
        if select is not None:
            conf = replace(conf, select=select)
        if ignore:
            conf = replace(conf, ignore=conf.ignore | ignore)
        if args.fail_on:
            conf = replace(conf, fail_on=Severity.parse(args.fail_on))
    except (TreeError, ConfigError) as exc:
        print(f"benchbot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    result = lint(tree, conf)
    fmt = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    to_tty = args.output is None and sys.stdout.isatty()
    frames = to_tty if args.frames is None else args.frames
    root = os.path.abspath(args.path) if not args.rev else tree.root
    out = _render(fmt, result.findings, result.stats, root, tree, args.show_fixes and fmt == "text", frames,
                  color=args.output is None and _use_color(sys.stdout.isatty()), rev=bool(args.rev))
    if args.sarif_file is not None:
        try:
            with open(args.sarif_file, "w", encoding="utf-8") as fh:
                # repo-relative URIs, as GitHub code scanning wants them
                fh.write(_render("sarif", result.findings, result.stats, root, None, False, False))
        except OSError as exc:
            print(f"benchbot: cannot write {args.sarif_file}: {exc.strerror}", file=sys.stderr)
            return EXIT_USAGE
    if args.output is not None:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(out)
        except OSError as exc:
            print(f"benchbot: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return EXIT_USAGE
        print(f"benchbot: wrote the {fmt} report to {args.output}: "
              f"{text_report.summary(result.findings, result.stats)}")
    else:
        sys.stdout.write(out)
    if args.timings:
        for phase, secs in result.facts.timings.items():
            print(f"{phase:>10}: {secs:.3f}s", file=sys.stderr)
    failing = [f for f in result.findings if f.severity >= conf.fail_on]
    return EXIT_FINDINGS if failing else EXIT_OK
