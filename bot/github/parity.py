"""The "Recipe parity" section of the pull-request summary: for each single-node vLLM or
SGLang entry the pull request adds or changes (its config entry, or the script one of its
launcher runs dispatches), the official recipe it was compared with and the differences
that matter. It replaces the recipe reminder when every such entry found a recipe; the
reminder stays, naming them, for those that did not.

Pure planning: the sources are opened by the caller (``bot.github.event``), from the
base's configuration; the comparisons are facts (``bot.recipes.compare``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.findings import Finding
from bot.github.adapter_contents import from_env
from bot.github.port import ChangedFile, GitHubError
from bot.github.recipe_sources import configured
from bot.launches.gather import engine_of
from bot.recipes.attach import attach
from bot.recipes.compare import ENGINES, comparisons
from bot.recipes.model import Source, SourceUnavailable
from bot.repo.facts import Facts
from bot.repo.files.tree import Tree
from bot.repo.load.configs import Entry
from bot.report import markdown as md
from bot.report.recipes import markdown
from bot.rules import recipe_mismatch
from bot.settings import Config
from bot.shell.ir.values import known

MAX_ENTRIES = 12  # entries compared in one summary (the rest are named)


@dataclass(frozen=True)
class Parity:
    lines: tuple[str, ...] = ()  # the markdown section ("" when nothing was compared)
    uncovered: tuple[str, ...] = ()  # changed entries with no recipe (the reminder names them)
    compared: int = 0
    # ``recipe-mismatch`` findings of the changed entries that the base does not have: judged
    # on the change (as ``changelog-missing``), with the sources this run read
    findings: tuple[Finding, ...] = ()


def changed_entries(files: Iterable[ChangedFile], base_entries: Iterable[Entry], head: Facts) -> list[Entry]:
    """The head's single-node vLLM/SGLang entries whose config entry the pull request adds or
    changes, or whose dispatched script it changes."""
    changed = {f.path for f in files if f.status != "removed"}
    before = {(e.name): (e.fields, tuple(p.fields for p in e.points)) for e in base_entries}
    scripts: dict[str, set[str]] = {}
    for run in head.runs:
        for d in run.dispatches:
            target = known(d.target)
            if target:
                scripts.setdefault(run.entry.name, set()).add(target.lstrip("./"))
    out = []
    for e in head.entries:
        if e.multinode or engine_of(e) not in ENGINES:
            continue
        entry_changed = e.path in changed and before.get(e.name) != (e.fields, tuple(p.fields for p in e.points))
        if entry_changed or scripts.get(e.name, set()) & changed:
            out.append(e)
    return out


def for_pull_request(conf: Config, base_tree: Tree, base: Facts, head: Facts,
                     files: Iterable[ChangedFile], env: Mapping[str, str], link: md.Link | None = None) -> Parity:
    """The section for a pull request, when the base's configuration asks for recipe parity
    (a ``recipes:`` section): its ``local`` folders read from the base, then the GitHub
    repositories it names (through benchbot's cache)."""
    if not conf.recipes.given:
        return Parity()
    entries = changed_entries(files, base.entries, head)
    if not entries:
        return Parity()
    try:
        sources, notes = configured(base_tree, conf.recipes, client_factory=lambda: from_env(env))
    except (SourceUnavailable, GitHubError, OSError, ValueError) as exc:  # what open_sources does not turn into notes
        sources, notes = [], [f"the recipe sources could not be read: {exc}"]
    got = section(head, sources, notes, entries, link)
    if not sources or not conf.enabled(recipe_mismatch.ID):
        return got
    return replace(got, findings=tuple(change_findings(conf, base, head, sources, notes, entries)))


def change_findings(conf: Config, base: Facts, head: Facts, sources: Sequence[Source], notes: Sequence[str],
                    entries: Sequence[Entry]) -> list[Finding]:
    """``recipe-mismatch`` on the changed entries of the head, less what the base has (the same
    entry and recipe, the same fingerprint); per-path ignores and severities applied."""
    only = frozenset(e.name for e in entries)
    attach(head, sources, notes, only)
    attach(base, sources, notes, only)
    before = {f.fingerprint for f in recipe_mismatch.check(base, conf)}
    out = []
    for f in recipe_mismatch.check(head, conf):
        if f.fingerprint in before or conf.ignored_at(f.rule, f.path):
            continue
        out.append(dataclasses.replace(f, severity=conf.severity[f.rule]) if f.rule in conf.severity else f)
    return out


def section(head: Facts, sources: Sequence[Source], notes: Sequence[str], entries: list[Entry],
            link: md.Link | None = None) -> Parity:
    if not entries:
        return Parity()
    if not sources:
        why = "; ".join(notes) or "no recipe source is configured"
        return Parity((f"> **Recipe parity** not checked: {md.escape(why)}",), tuple(e.name for e in entries))
    shown = entries[:MAX_ENTRIES]
    found = comparisons(head, sources, shown)
    covered = {c.entry.name for c in found if c.recipe is not None}
    uncovered = tuple(e.name for e in entries if e.name not in covered)
    lines = markdown([c for c in found if c.recipe is not None], link)
    if len(entries) > MAX_ENTRIES:
        lines += [f"{len(entries) - MAX_ENTRIES} more changed entries not compared here: "
                  "`benchbot recipes --entry NAME` compares them."]
    return Parity(tuple(lines) if covered else (), uncovered, len(covered))


def reminder(parity: Parity, text: str | None) -> str | None:
    """The recipe reminder, given the parity section: none when every changed entry was
    compared, else the reminder naming the entries that found no recipe."""
    if text is None or not parity.compared:
        return text
    if not parity.uncovered:
        return None
    names = ", ".join(md.code(n) for n in parity.uncovered[:MAX_ENTRIES])  # PR-controlled: code spans
    more = f" and {len(parity.uncovered) - MAX_ENTRIES} more" if len(parity.uncovered) > MAX_ENTRIES else ""
    return f"{text.rstrip()}\n\nNo official recipe was found for: {names}{more}."
