"""The fixing half of ``benchbot lint``: ``--fix`` and ``--unsafe-fixes``.

Lint, apply the chosen fixes (bot/fix.py), lint again, until nothing more applies (at most
``fix.MAX_ROUNDS`` rounds); then say what changed. Never prints (the CLI does).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot import fix
from bot.findings import Finding
from bot.repo.files.tree import Tree, WorkTree
from bot.settings import Config

if TYPE_CHECKING:
    from bot.lint import LintResult


def add_arguments(lint_parser: argparse.ArgumentParser) -> None:
    g = lint_parser.add_argument_group("fixes")
    g.add_argument("--fix", action="store_true",
                   help="apply the safe fixes to the work tree, lint again and report what is left")
    g.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix, also apply the fixes that need a review (implies --fix)")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.fix or args.unsafe_fixes)


def usage_error(args: argparse.Namespace) -> str | None:
    if wanted(args) and (args.rev or getattr(args, "staged", False)):
        return "--fix edits the work tree; it does not go with --rev or --staged"
    return None


@dataclass
class Outcome:
    result: LintResult
    tree: Tree
    fixed: list[Finding] = field(default_factory=list)  # findings a written fix resolved
    unresolved: list[Finding] = field(default_factory=list)  # a fix was written but the finding stayed
    files: list[str] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.fixed:
            out.append(f"fixed {len(self.fixed)} finding{'s' if len(self.fixed) > 1 else ''} in "
                       f"{', '.join(dict.fromkeys(self.files))}:")
            out.extend(f"  {f.path}:{f.line}: {f.code} {f.rule}: {f.fix.description if f.fix else ''}"
                       for f in self.fixed)
        for f in self.unresolved:
            out.append(f"fix applied but {f.rule} at {f.path}:{f.line} is still reported: review the change")
        for f, why in self.skipped:
            out.append(f"not fixed: {f.path}:{f.line}: {f.code} {f.rule}: {why}")
        if not out:
            out.append("nothing to fix")
        return out


def run(args: argparse.Namespace, tree: Tree, conf: Config, result: LintResult) -> Outcome:
    """Fix rounds over a work tree. Raises fix.FixError when a file cannot be written."""
    from bot.lint import lint

    root = tree.root
    out = Outcome(result, tree)
    written: dict[str, Finding] = {}
    for _ in range(fix.MAX_ROUNDS):
        chosen = fix.plan(out.result.findings, args.unsafe_fixes, fix.read_current(root))
        if not chosen.edits:
            out.skipped = chosen.skipped
            break
        out.files += fix.write(root, chosen.edits)
        written.update((f.fingerprint, f) for f in chosen.chosen)
        out.tree = WorkTree(root)
        out.result = lint(out.tree, conf)
        out.skipped = chosen.skipped
    still = {f.fingerprint for f in out.result.findings}
    out.fixed = [f for fp, f in written.items() if fp not in still]
    out.unresolved = [f for fp, f in written.items() if fp in still]
    return out
