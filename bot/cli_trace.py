"""``python -m bot trace``: run an entry's launcher and benchmark script for real, with
stand-in commands, in a sandbox, and show what ran (docs/trace.md). Only when a person asks,
on a checkout they trust: it executes the repository's scripts (the pull-request bot never
imports this module)."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.report import visible

if TYPE_CHECKING:
    from bot.repo.facts import Facts
    from bot.trace.agree import Disagreement
    from bot.trace.run import Traced

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trace", help="run an entry's launcher and script with stand-ins in a sandbox (executes the "
                                     "repo's code: only on a checkout you trust)")
    p.add_argument("path", nargs="?", default=".", help="repo root, a work tree (default: .)")
    p.add_argument("--entry", action="append", required=True, help="entries to trace (repeatable; glob patterns)")
    p.add_argument("--all-points", action="store_true",
                   help="every point at every concurrency (default: one point per group, as lint evaluates)")
    p.add_argument("--launcher", help="only this launcher (a repo path, e.g. runners/launch_b200-nv.sh)")
    p.add_argument("--compare", action="store_true",
                   help="also compare with the static answer (dispatch and serve); exit 1 on a disagreement")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds one launcher run may take (default 30)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="text or json (docs/trace.md)")
    p.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="run without bubblewrap (a throwaway machine only: the scripts can reach the network "
                        "and write where the user can)")
    p.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")
    p.set_defaults(rev=None)  # a work tree only: its files are copied into the sandbox


def run(args: argparse.Namespace, entry_hint: Callable[[list[str], str], str]) -> int:
    from bot.cli_serve import entry_facts
    from bot.report.trace import text_lines, to_json
    from bot.trace import sandbox
    from bot.trace.run import runs, trace_one

    if not args.unsafe_no_sandbox:
        why = sandbox.available()
        if why is not None:
            print(f"benchbot: trace needs a sandbox and there is none here: {visible(why)} "
                  "(--unsafe-no-sandbox runs without one, on a throwaway machine only)", file=sys.stderr)
            return EXIT_USAGE
    if args.timeout <= 0 or args.timeout > 3600:
        print("benchbot: --timeout takes seconds from 0 to 3600", file=sys.stderr)
        return EXIT_USAGE
    facts = entry_facts(args, entry_hint)
    if isinstance(facts, int):
        return facts
    entries = [e for e in facts.entries if any(fnmatch.fnmatchcase(e.name, p) for p in args.entry)]
    repo = Path(facts.tree.root)
    traced = [trace_one(facts, repo, *r, timeout=args.timeout, unsafe_no_sandbox=args.unsafe_no_sandbox)
              for r in runs(facts, entries, args.all_points, args.launcher)]
    verdicts: list[list[Disagreement]] | None = None
    if args.compare:
        verdicts = _compare(facts, traced, args.all_points)
    if args.format == "json":
        print(json.dumps(to_json(traced, verdicts), indent=2))
    else:
        for line in text_lines(traced, verdicts):
            print(visible(line))
    if verdicts is not None and any(verdicts):
        return EXIT_FINDINGS
    return EXIT_OK


def _compare(facts: Facts, traced: Sequence[Traced], all_points: bool) -> list[list[Disagreement]]:
    """Per traced run, its disagreements with ``serve``'s answer for the same point and launcher."""
    from bot.trace.agree import static_launches

    served = static_launches(facts, [t.entry for t in traced], all_points)
    from bot.trace.agree import verdict

    return [verdict(served, t) for t in traced]
