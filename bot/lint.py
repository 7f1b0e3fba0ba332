"""The lint pipeline as one pure-ish call: tree -> facts -> findings (no printing)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bot import rules
from bot.config import Config
from bot.findings import Finding
from bot.gctune import fewer_collections
from bot.repo.envcache import flush
from bot.repo.facts import Facts, gather
from bot.repo.jobs import coverage
from bot.repo.tree import Tree
from bot.report import Stats
from bot.suppress import Suppression


@dataclass
class LintResult:
    findings: list[Finding]
    facts: Facts
    stats: Stats


def lint(tree: Tree, conf: Config, honoured: Callable[[Suppression], bool] | None = None) -> LintResult:
    """``honoured``: which inline suppressions count (all by default; ``rules.run``)."""
    t0 = time.perf_counter()
    tree.limit(conf.max_file_bytes)
    with fewer_collections():
        facts = gather(tree, conf.profile)
        findings = rules.run(facts, conf, honoured)
        flush(facts)
    elapsed = time.perf_counter() - t0
    files = len(facts.configs) + len(facts.shell_files()) + (1 if facts.runners.path else 0)
    stats = Stats(files, len(facts.entries), len(facts.launcher_files), len(facts.scripts), elapsed,
                  coverage(facts, facts.jobs))
    return LintResult(findings, facts, stats)
