"""The workflow checkers in ``benchbot lint``: ``--workflows`` (every workflow and action file),
and, by default, the ones a compared change touches (``--new-from-rev``, ``--staged``);
``--no-workflows`` turns them off. Never prints (the CLI does)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bot.external.places import all_files
from bot.findings import Finding
from bot.repo.files.tree import Tree
from bot.settings import Config

if TYPE_CHECKING:
    from bot.lint import LintResult


def add_arguments(lint_parser: argparse.ArgumentParser) -> None:
    g = lint_parser.add_mutually_exclusive_group()
    g.add_argument("--workflows", action="store_true",
                   help="also check every GitHub Actions workflow and action file with zizmor and actionlint "
                        "(pip install 'benchbot[workflows]'); with --new-from-rev or --staged only the changed "
                        "ones are checked unless this is given")
    g.add_argument("--no-workflows", action="store_true",
                   help="do not run zizmor and actionlint, not even on the workflows a compared change touches")


def paths(args: argparse.Namespace, head: Tree, base: Tree | None) -> list[str]:
    """The workflow files this lint checks: all with ``--workflows``; those that differ from the
    compared base by default; none without a base or with ``--no-workflows``."""
    from bot.workflow_checks import changed

    if getattr(args, "no_workflows", False):
        return []
    if getattr(args, "workflows", False):
        return all_files(head)
    return changed(base, head) if base is not None else []


def extend(result: LintResult, tree: Tree, conf: Config, files: list[str], policy: Tree | None = None
           ) -> list[str]:
    """Add zizmor's and actionlint's findings on ``files`` to a lint result; the notes to show."""
    from bot.workflow_checks import check

    if not files:
        return []
    checked = check(tree, files, conf, policy=policy)
    if checked.findings:
        result.findings = sorted(result.findings + checked.findings, key=Finding.sort_key)
    return checked.notes
