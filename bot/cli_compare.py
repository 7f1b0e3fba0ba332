"""The comparing half of ``benchbot lint``: ``--staged``, ``--new-from-rev``, ``--baseline``,
``--write-baseline``. Opens trees, lints the base, reads baseline files; never prints (the CLI
does) and never judges (bot/newonly.py compares)."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.config import Config, ConfigError, load_config
from bot.findings import Finding
from bot.newonly import Comparison, against_baseline, compare, write_baseline
from bot.newonly import read_baseline as parse_baseline
from bot.repo.files.git import STAGED, IndexTree, has_commit, open_tree, renames
from bot.repo.files.tree import Tree
from bot.report import visible

if TYPE_CHECKING:
    from bot.lint import LintResult


def add_arguments(lint_parser: argparse.ArgumentParser) -> None:
    g = lint_parser.add_argument_group("only what a change introduces")
    g.add_argument("--staged", action="store_true",
                   help="lint what is staged (the git index), not the work tree; compares with HEAD unless "
                        "--new-from-rev or --baseline says otherwise (the pre-commit hook)")
    g.add_argument("--new-from-rev", metavar="REV",
                   help="also lint git revision REV and report only the findings it does not have (renames "
                        "followed)")
    g.add_argument("--baseline", metavar="FILE", help="report only findings whose fingerprint is not in FILE")
    g.add_argument("--write-baseline", metavar="FILE",
                   help="write every current finding's fingerprint to FILE (for --baseline) and exit 0")


def usage_error(args: argparse.Namespace) -> str | None:
    """Options that do not go together, or None."""
    if args.staged and args.rev:
        return "--staged lints the index; it does not go with --rev"
    if args.new_from_rev and args.baseline:
        return "use one of --new-from-rev and --baseline"
    if args.write_baseline and (args.new_from_rev or args.baseline):
        return "--write-baseline writes every current finding; it does not go with --new-from-rev or --baseline"
    return None


def open_head(args: argparse.Namespace) -> Tree:
    """What is linted: the index with --staged, else the work tree or --rev."""
    return IndexTree(args.path) if args.staged else open_tree(args.path, args.rev)


def base_rev(args: argparse.Namespace) -> str | None:
    if args.new_from_rev:
        return str(args.new_from_rev)
    if args.staged and not args.baseline and not args.write_baseline:
        return "HEAD"
    return None


def base_tree(args: argparse.Namespace) -> Tree | None:
    """The tree a compared lint's findings are matched against (None: no revision, or a first commit)."""
    rev = base_rev(args)
    if rev is None or (args.staged and rev == "HEAD" and not has_commit(args.path, "HEAD")):
        return None
    return open_tree(args.path, rev)


def comparison(args: argparse.Namespace, conf: Config, head: LintResult) -> tuple[Comparison | None, float]:
    """The comparison the options ask for (None: report everything) and the seconds it took.
    TreeError: a revision that is not there; ValueError/OSError: an unusable baseline file."""
    from bot.lint import lint

    t0 = time.perf_counter()
    rev = base_rev(args)
    if rev is not None:
        if args.staged and rev == "HEAD" and not has_commit(args.path, "HEAD"):
            return replace(compare(head.findings, []), rev=rev), 0.0  # the first commit: everything is new
        base_tree = open_tree(args.path, rev)
        base = lint(base_tree, conf, recipes=getattr(args, "recipe_sources", None))  # ``lint --recipes``'s
        files = [p for p in getattr(args, "workflow_files", []) if base_tree.is_file(p)]
        if files:  # the base's zizmor and actionlint findings on the workflows the head's were looked for in
            from bot.cli_workflows import extend

            extend(base, base_tree, conf, files, policy=base_tree)
        moved = renames(args.path, rev, STAGED if args.staged else args.rev)
        compared = replace(compare(head.findings, base.findings, moved), rev=rev)
        if args.new_from_rev:  # a change-level rule: the change against its named base (not a hook's HEAD)
            from bot.newonly import with_change
            from bot.rules.changelog_missing import check_change

            change = check_change(base_tree, head.facts.tree, base.read_facts, head.facts, conf)
            compared = with_change(compared, change)
        return compared, time.perf_counter() - t0
    if args.baseline:
        return against_baseline(head.findings, read_baseline(args.baseline), args.baseline), 0.0
    return None, 0.0


def read_baseline(path: str) -> set[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the baseline ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a benchbot baseline: not UTF-8 text") from None
    return parse_baseline(text, path)


def save_baseline(path: str, findings: list[Finding]) -> str:
    """Write the baseline file; returns what to tell the user. OSError if it cannot be written."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(write_baseline(findings))
    n = len({f.fingerprint for f in findings})
    return f"benchbot: wrote {n} fingerprint{'' if n == 1 else 's'} to {path}"


def policy_config(args: argparse.Namespace, tree: Tree) -> Config:
    """With ``--new-from-rev REV`` (a gate on a change) the configuration is REV's, not the
    changed tree's (unless ``--config`` names one): a change cannot relax its own check. What
    it changes there is said on stderr."""
    if not args.new_from_rev or args.config:
        return load_config(tree, args.config)
    from bot.github.policy import changes

    conf = load_config(open_tree(args.path, args.new_from_rev))
    try:
        mine = load_config(tree)
    except ConfigError as exc:
        print(f"benchbot: using the configuration of {visible(args.new_from_rev)}; this tree's does not load: "
              f"{visible(str(exc))}", file=sys.stderr)
        return conf
    diff = changes(conf, mine)
    if diff:
        shown = "; ".join(f"{name}: {a} -> {b}" for name, a, b in diff[:5]) + ("; ..." if len(diff) > 5 else "")
        print(f"benchbot: using the configuration of {visible(args.new_from_rev)}; this tree changes it "
              f"({visible(shown)}), which takes effect once it is the base", file=sys.stderr)
    return conf
