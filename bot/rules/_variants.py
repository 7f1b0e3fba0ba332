"""Shared analysis for ignored-variant and dead-script: which entries run a base script
while a script made for their variant (``_mtp``, a framework, ``agentic/``) exists."""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from bot.repo.env.profile import Variant
from bot.repo.facts import Facts, Run
from bot.repo.load.configs import Entry, Point
from bot.shell.evaluator.evaluate import Loc
from bot.shell.ir.values import known

MAX_SUBSET = 3  # variants combined in one candidate script (besides all of them at once)
MAX_CANDIDATES = 256  # candidate scripts per dispatched script


@dataclass
class Miss:
    """One root cause: a launcher line that sends variant entries to the base script."""

    launcher: str  # real path of the file holding the line
    built_at: Loc
    variants: tuple[Variant, ...]
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)  # entry -> (runs, should run)
    runs: list[tuple[Run, str]] = field(default_factory=list)  # (run, expected script)
    launchers: set[str] = field(default_factory=set)  # launcher paths as named by runners
    missing: set[str] = field(default_factory=set)  # entries whose base script does not exist either

    @property
    def names(self) -> str:
        return "+".join(v.name for v in self.variants)


def when_matches(v: Variant, entry: Entry, point: Point) -> bool:
    for key, want in v.when.items():
        if key == "@scenario":
            have: Any = point.scenario
        else:
            have = point.fields.get(key, entry.fields.get(key))
            if have is None and key == "spec-decoding":
                have = "none"
        if str(have).lower() != str(want).lower():
            return False
    return True


def suffix_for(v: Variant, entry: Entry, point: Point) -> str:
    def sub(m: re.Match[str]) -> str:
        val = point.fields.get(m.group(1), entry.fields.get(m.group(1)))
        return str(val) if val is not None else "\0"

    s = re.sub(r"\{([^{}]+)\}", sub, v.suffix)
    return "" if "\0" in s else s


def candidates(script: str, entry: Entry, point: Point, variants: tuple[Variant, ...]
               ) -> list[tuple[str, tuple[Variant, ...]]]:
    """Scripts the entry's variants would call for, most specific first."""
    folder, name = posixpath.split(script)
    stem = name[:-3] if name.endswith(".sh") else name
    suffixed = [(v, suffix_for(v, entry, point)) for v in variants if v.suffix]
    # strip the suffixes the script already has (in reverse order of naming)
    present: set[str] = set()
    base = stem
    for v, s in reversed(suffixed):
        if s and base.endswith(s):
            base = base[: -len(s)]
            present.add(v.name)
    applicable = [v for v in variants if when_matches(v, entry, point) and v.name not in present
                  and (v.suffix == "" or suffix_for(v, entry, point))]
    applicable = [v for v in applicable if v.folder is None or f"/{v.folder[0]}" in f"/{folder}/"]
    out: list[tuple[str, tuple[Variant, ...]]] = []
    # Every subset of 24 variants is 2^24 of them: all of them at once, then subsets of at
    # most MAX_SUBSET variants, most specific first; at most MAX_CANDIDATES scripts.
    top = min(len(applicable), MAX_SUBSET)
    sizes = ([len(applicable)] if len(applicable) > top else []) + list(range(top, 0, -1))
    for subset in (c for size in sizes for c in combinations(applicable, size)):
        if len(out) >= MAX_CANDIDATES:
            break
        names = present | {v.name for v in subset}
        new_stem = base + "".join(s for v, s in suffixed if v.name in names)
        new_folder = folder
        for v in subset:
            if v.folder is not None:
                new_folder = (f"/{folder}/".replace(f"/{v.folder[0]}", f"/{v.folder[1]}", 1)).strip("/")
        path = posixpath.join(new_folder, new_stem + ".sh")
        if path != script:
            out.append((path, subset))
    return out


def misses(facts: Facts) -> list[Miss]:
    memo: dict[str, Any] = facts.memo
    if "misses" in memo:
        return memo["misses"]  # type: ignore[no-any-return]
    groups: dict[tuple[str, Loc, str], Miss] = {}
    for run in facts.runs:
        dispatched = {known(d.target) for d in run.dispatches}
        for d in run.dispatches:
            script = known(d.target)
            if not script:
                continue
            exists = facts.tree.is_file(script)
            if exists and not facts.is_script(script):
                continue
            if not exists and not facts.could_be_script(script):
                continue
            for cand, subset in candidates(script, run.entry, run.point, facts.profile.variants):
                if cand in dispatched or not facts.tree.is_file(cand):
                    continue
                key = (d.built_at.path, d.built_at, "+".join(v.name for v in subset))
                miss = groups.get(key)
                if miss is None:
                    miss = groups[key] = Miss(d.built_at.path, d.built_at, subset)
                miss.pairs.setdefault(run.entry.name, (script, cand))
                if not exists:
                    miss.missing.add(run.entry.name)
                miss.runs.append((run, cand))
                miss.launchers.add(run.launcher)
                break  # the most specific existing candidate
    out = sorted(groups.values(), key=lambda m: (m.launcher, m.built_at.line, m.names))
    memo["misses"] = out
    return out


def entries_text(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def closest(name: str, options: list[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, options, n=n, cutoff=0.6)


def by_basename(paths: list[str]) -> Mapping[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in paths:
        out.setdefault(posixpath.basename(p), []).append(p)
    return out
