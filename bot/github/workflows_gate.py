"""A pull request's workflows in its review: zizmor and actionlint on the workflow and action
files it changes, on both sides, so that only what it introduces is reported.

The configuration is the base's (as for every rule), actionlint's configuration file is the
base's, and an inline suppression counts only if the base has it: a pull request cannot switch
off the check of its own workflows, neither with ``.benchbot.yml`` nor with ``# zizmor:
ignore[...]``. What it adds is shown in the policy notice like its other suppressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.findings import Finding
from bot.github import policy
from bot.report import markdown as md
from bot.suppress import Suppression
from bot.workflow_checks import changed, check

if TYPE_CHECKING:
    from bot.lint import LintResult
    from bot.repo.files.tree import Tree
    from bot.settings import Config

Keys = frozenset[tuple[str, tuple[str, ...], str]]


@dataclass
class Checked:
    lines: tuple[str, ...] = ()  # what the summary says of the check (markdown), empty when nothing was checked
    added: list[Suppression] = field(default_factory=list)  # suppressions the PR adds to its workflows


def review(base_tree: Tree, head_tree: Tree, base: LintResult, head: LintResult, conf: Config, known: Keys
           ) -> Checked:
    """Add the checkers' findings on the changed workflows to ``base`` and ``head``."""
    files = changed(base_tree, head_tree)
    if not files:
        return Checked()
    before = check(base_tree, [p for p in files if base_tree.is_file(p)], conf, policy=base_tree)
    keys = known | policy.suppression_keys(before.suppressions)
    after = check(head_tree, files, conf, honoured=lambda s: policy.suppression_key(s) in keys, policy=base_tree)
    base.findings = sorted(base.findings + before.findings, key=Finding.sort_key)
    head.findings = sorted(head.findings + after.findings, key=Finding.sort_key)
    return Checked(tuple(_lines(after.files, after.tools, after.notes)),
                   policy.added_suppressions(after.suppressions, keys))


def _lines(files: list[str], tools: dict[str, str], notes: list[str]) -> list[str]:
    if not files:
        return []
    names = ", ".join(md.code(p) for p in files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
    ran = " and ".join(md.escape(v) for v in tools.values())
    out = [f"{ran or 'No checker'} checked the {len(files)} workflow file{'s' if len(files) != 1 else ''} "
           f"this pull request changes: {names}."]
    out += [f"- {md.escape(n)}" for n in notes]
    return out
