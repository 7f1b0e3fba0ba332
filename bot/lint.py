"""The lint pipeline as one pure-ish call: tree -> facts -> findings (no printing)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bot import lintcache
from bot.findings import Finding, Stats
from bot.repo.files.tree import Tree
from bot.settings import Config

if TYPE_CHECKING:
    from bot.recipes.model import Source
    from bot.repo.facts import Facts
    from bot.suppress import Suppression


class LintResult:
    """The findings and figures of one lint, and the facts they came from. A result the
    lint cache gave has no facts yet: they are gathered when first asked for."""

    def __init__(self, findings: list[Finding], stats: Stats, facts: Facts | None = None,
                 source: tuple[Tree, Config] | None = None) -> None:
        self.findings = findings
        self.stats = stats
        self.cached = facts is None
        self._facts = facts
        self._source = source
        self._read: Facts | None = None

    def _gather(self, evaluate: bool) -> Facts:
        """The facts of the kept result's tree (``gather`` flushes the env cache itself)."""
        assert self._source is not None
        from bot.gctune import fewer_collections
        from bot.repo.facts import gather

        tree, conf = self._source
        with fewer_collections():
            return gather(tree, conf.profile, evaluate=evaluate)

    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = self._gather(True)
        return self._facts

    @property
    def read_facts(self) -> Facts:
        """The facts as far as reading goes: entries, runners, workflows, suppressions and the
        tree, with no runs. What a change rule and the PR bot need of a base, whose lint is
        often a kept result: then nothing is parsed or evaluated for it. The full facts when
        this result has them."""
        if self._facts is not None:
            return self._facts
        if self._read is None:
            self._read = self._gather(False)
        return self._read

    def release(self) -> None:
        """Drop what the facts hold now. They can sit in reference cycles (an evaluator's
        file-system view and ``Facts.options``' closures point back at them), and then their
        whole graph waits for a full collection; ``history`` (one lint a commit) calls this
        once it has the findings. The result keeps its findings and stats."""
        if self._facts is not None:
            self._facts.__dict__.clear()
        self._facts = self._read = None
        self._source = None

    @property
    def timings(self) -> dict[str, float]:
        """Seconds per phase (``--timings``); a cached result's one phase is the lookup."""
        if self._facts is None:
            return {"cached": self.stats.seconds}
        return self._facts.timings


def lint(tree: Tree, conf: Config, honoured: Callable[[Suppression], bool] | None = None,
         recipes: tuple[Sequence[Source], Sequence[str]] | None = None) -> LintResult:
    """``honoured``: which inline suppressions count (all by default; ``rules.run``). Without
    it, the result is looked up in and kept by the lint cache (``bot.lintcache``).
    ``recipes``: the recipe sources to compare entries with, and notes of those that could not
    be read (``recipe-mismatch``); else the configuration's ``recipes.local`` folders, if any."""
    t0 = time.perf_counter()
    tree.limit(conf.max_file_bytes)
    key = lintcache.key_of(tree, conf) if honoured is None and recipes is None else None
    if key is not None:
        kept = lintcache.load(key)
        if kept is not None:
            findings, (files, entries, launchers, scripts), cover = kept
            stats = Stats(files, entries, launchers, scripts, time.perf_counter() - t0, cover)
            return LintResult(findings, stats, source=(tree, conf))
    from bot import rules
    from bot.gctune import fewer_collections
    from bot.recipes.attach import attach, tree_sources
    from bot.repo.cache.envcache import flush
    from bot.repo.facts import gather
    from bot.repo.jobs import coverage

    with fewer_collections():
        facts = gather(tree, conf.profile)
        if recipes is None and conf.recipes.local:
            recipes = tree_sources(tree, conf.recipes.local)
        if recipes is not None:
            attach(facts, *recipes)
        findings = rules.run(facts, conf, honoured)
        flush(facts)
    elapsed = time.perf_counter() - t0
    files = len(facts.configs) + len(facts.shell_files()) + (1 if facts.runners.path else 0)
    cover = coverage(facts, facts.jobs)
    if key is not None and lintcache.keepable(facts):
        lintcache.store(key, findings, (files, len(facts.entries), len(facts.launcher_files), len(facts.scripts)),
                        cover)
    stats = Stats(files, len(facts.entries), len(facts.launcher_files), len(facts.scripts), elapsed, cover)
    return LintResult(findings, stats, facts)
