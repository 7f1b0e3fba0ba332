"""The dispatch chains a pull request moves, in its summary: for each entry it adds or changes
(its YAML, its launcher, its script), a Mermaid flowchart of the chain before and after
(``bot.map.mermaid``), at most ``github.map-entries`` of them; and the link to the HTML map of
the head when the review workflow uploads one (``BENCHBOT_MAP_ARTIFACT``: the artifact's name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from bot.map.mermaid import pr_section
from bot.repo.changed import changed_entries
from bot.report import markdown as md

if TYPE_CHECKING:
    from bot.lint import LintResult
    from bot.settings import Config

_ARTIFACT = re.compile(r"[A-Za-z0-9._-]{1,100}")
_RUN_ID = re.compile(r"[0-9]{1,20}")


def section(conf: Config, base: LintResult, head: LintResult, changed_paths: Iterable[str]) -> str:
    """The "Dispatch chains" section (markdown), or "" when no entry changed or it is turned off.
    The base's facts are gathered with evaluation if its lint was a kept result."""
    if conf.github.map_entries <= 0:
        return ""
    names = changed_entries(head.facts, base.read_facts, set(changed_paths))
    if not names:
        return ""
    return pr_section(base.facts, head.facts, sorted(names), limit=conf.github.map_entries)


def artifact_line(env: Mapping[str, str], repo_url: str) -> str | None:
    """Where the HTML map of this head is: the artifact of this workflow run (None when the
    workflow uploads none, or the run is unknown)."""
    name, run = env.get("BENCHBOT_MAP_ARTIFACT", ""), env.get("GITHUB_RUN_ID", "")
    if not name or not repo_url or not _ARTIFACT.fullmatch(name) or not _RUN_ID.fullmatch(run):
        return None
    return (f"The dispatch map of this head (every entry's chain, with the findings on it) is the artifact "
            f"{md.code(name)} of [this run]({repo_url}/actions/runs/{run}).")
