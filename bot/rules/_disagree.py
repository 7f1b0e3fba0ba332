"""Nodes of one runner label whose launchers dispatch the same (entry, point) differently.

A label (``h200``) lists nodes of several families (``h200-cw_0``, ``h200-nb_1``); each
family has its own launcher. The job runs on whichever node picks it up, so when the
launchers disagree the published number depends on the machine. Shared by
``inconsistent-dispatch`` (which reports each disagreement once, at the launcher line that
differs) and by ``ignored-variant``/``missing-script`` (which leave those entries to it).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from bot.repo.env.points import point_key
from bot.repo.facts import Facts, Run
from bot.rules._variants import Miss, misses
from bot.shell.evaluator.state import Dispatch, Loc
from bot.shell.ir.values import known


@dataclass
class Disagreement:
    """One launcher line that makes its nodes run something other than the label's other nodes."""

    label: str
    launcher: str  # the launcher that differs, as the runners name it
    real: str  # the file holding the line
    built_at: Loc  # the line that builds the differing path
    # entry -> (what the differing launcher runs, what the other launchers run)
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)  # the differing runs, one per (entry, point)
    others: dict[str, Run] = field(default_factory=dict)  # other launcher -> a run of it
    missing: set[str] = field(default_factory=set)  # entries whose differing script does not exist
    miss: Miss | None = None  # the ignored variant that explains it, when there is one
    unused: tuple[str, int] | None = None  # (variable, line) the launcher sets but never uses

    @property
    def key(self) -> tuple[str, int]:
        return self.real, self.built_at.line


def disagreements(facts: Facts) -> list[Disagreement]:
    memo: dict[str, Any] = facts.memo
    if "disagreements" in memo:
        return memo["disagreements"]  # type: ignore[no-any-return]
    groups: dict[tuple[str, str, str, tuple[object, ...]], list[Run]] = {}
    for run in facts.runs:
        key = (run.label, run.entry.path, run.entry.name, point_key(facts.profile, run.point))
        groups.setdefault(key, []).append(run)
    found: dict[tuple[str, str, int], Disagreement] = {}
    miss_at = {(m.launcher, m.built_at.line): m for m in misses(facts)}
    for (label, _, name, _), runs in groups.items():
        scripts = {r.launcher: _scripts(r) for r in runs}
        if len(runs) < 2 or any(s is None for s in scripts.values()):
            continue  # one family, or a launcher whose dispatch is not known
        if len(set(scripts.values())) < 2:
            continue
        odd = max(runs, key=lambda r: _oddness(facts, r, runs, scripts, miss_at))
        others = [r for r in runs if scripts[r.launcher] != scripts[odd.launcher]]
        theirs = set().union(*(scripts[r.launcher] or frozenset() for r in others))
        differing = [d for d in odd.dispatches if known(d.target) not in theirs]
        if not differing:
            continue
        d = differing[0]
        dis = found.get((label, d.built_at.path, d.built_at.line))
        if dis is None:
            dis = found[(label, d.built_at.path, d.built_at.line)] = Disagreement(
                label, odd.launcher, d.built_at.path, d.built_at, miss=miss_at.get((d.built_at.path, d.built_at.line)),
                unused=_unused(facts, d, others))
        script = known(d.target) or ""
        other = ", ".join(sorted(theirs))
        dis.entries.setdefault(name, (script, other))
        dis.runs.append(odd)
        for r in others:
            dis.others.setdefault(r.launcher, r)
        if not facts.tree.is_file(script):
            dis.missing.add(name)
    out = sorted(found.values(), key=lambda x: (x.real, x.built_at.line, x.label))
    memo["disagreements"] = out
    return out


def covered(facts: Facts) -> set[tuple[str, str]]:
    """(entry, script the differing launcher runs) for every disagreement."""
    return {(name, pair[0]) for d in disagreements(facts) for name, pair in d.entries.items()}


def nodes_of(facts: Facts, label: str, launcher: str) -> list[str]:
    return [n for n in facts.runners.labels.get(label, []) if facts.launcher_of_node(n) == launcher]


def _scripts(run: Run) -> frozenset[str] | None:
    if run.exits_early or run.bound_hit or any(h.fatal for h in run.budget_hits) or not run.dispatches:
        return None
    out = frozenset(known(d.target) for d in run.dispatches)
    return None if None in out else out  # type: ignore[return-value]


def _oddness(facts: Facts, run: Run, runs: list[Run], scripts: dict[str, frozenset[str] | None],
             miss_at: dict[tuple[str, int], Miss]) -> tuple[int, int, int, int, str]:
    """Which launcher differs: one that sends the entry to a missing script, then one that
    ignores a variant, then one that sets a path variable and never uses it, then the one
    that fewer nodes run (then the later name, so that the choice is stable)."""
    mine = scripts[run.launcher] or frozenset()
    missing = any(not facts.tree.is_file(s) for s in mine)
    ignores = any((d.built_at.path, d.built_at.line) in miss_at for d in run.dispatches)
    others = [r for r in runs if scripts[r.launcher] != mine]
    unused = any(_unused(facts, d, others) for d in run.dispatches)
    same = sum(len(nodes_of(facts, run.label, r.launcher)) for r in runs if scripts[r.launcher] == mine)
    return int(missing), int(ignores), int(unused), -same, run.launcher


def _unused(facts: Facts, d: Dispatch, others: list[Run]) -> tuple[str, int] | None:
    """A variable the other launchers build the path from (``FRAMEWORK_SUFFIX``) that this
    launcher sets and never expands: the suffix someone meant to append."""
    text = facts.tree.text(d.built_at.path)
    if text is None:
        return None
    names = [v for r in others for od in r.dispatches for v, _ in od.var_parts]
    names += _SUFFIX_VAR.findall(text)
    for name in dict.fromkeys(names):
        if name in {v for v, _ in d.var_parts}:
            continue
        at = re.search(rf"^[ \t]*(?:export[ \t]+|local[ \t]+|readonly[ \t]+)?{re.escape(name)}=", text, re.M)
        if at is None:
            continue
        if re.search(rf"\$\{{?{re.escape(name)}\b", text):
            continue
        return name, text.count("\n", 0, at.start()) + 1
    return None


_SUFFIX_VAR = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*SUFFIX[A-Za-z0-9_]*)=", re.M)


def family(launcher: str) -> str:
    return posixpath.basename(launcher)
