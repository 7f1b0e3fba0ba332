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

from bot.findings import Fix, file_diff
from bot.repo.configs import Entry, Point
from bot.repo.facts import Facts, Run
from bot.repo.profile import Variant
from bot.shell import ir
from bot.shell.evaluate import Loc
from bot.shell.values import known


@dataclass
class Miss:
    """One root cause: a launcher line that sends variant entries to the base script."""

    launcher: str  # real path of the file holding the line
    built_at: Loc
    variants: tuple[Variant, ...]
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)  # entry -> (runs, should run)
    runs: list[tuple[Run, str]] = field(default_factory=list)  # (run, expected script)
    launchers: set[str] = field(default_factory=set)  # launcher paths as named by runners

    @property
    def names(self) -> str:
        return "+".join(v.name for v in self.variants)


def _when_matches(v: Variant, entry: Entry, point: Point) -> bool:
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


def _suffix(v: Variant, entry: Entry, point: Point) -> str:
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
    suffixed = [(v, _suffix(v, entry, point)) for v in variants if v.suffix]
    # strip the suffixes the script already has (in reverse order of naming)
    present: set[str] = set()
    base = stem
    for v, s in reversed(suffixed):
        if s and base.endswith(s):
            base = base[: -len(s)]
            present.add(v.name)
    applicable = [v for v in variants if _when_matches(v, entry, point) and v.name not in present
                  and (v.suffix == "" or _suffix(v, entry, point))]
    applicable = [v for v in applicable if v.folder is None or f"/{v.folder[0]}" in f"/{folder}/"]
    out: list[tuple[str, tuple[Variant, ...]]] = []
    for size in range(len(applicable), 0, -1):
        for subset in combinations(applicable, size):
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
            if not script or not facts.tree.is_file(script) or not facts.is_script(script):
                continue
            for cand, subset in candidates(script, run.entry, run.point, facts.profile.variants):
                if cand in dispatched or not facts.tree.is_file(cand):
                    continue
                key = (d.built_at.path, d.built_at, "+".join(v.name for v in subset))
                miss = groups.get(key)
                if miss is None:
                    miss = groups[key] = Miss(d.built_at.path, d.built_at, subset)
                miss.pairs.setdefault(run.entry.name, (script, cand))
                miss.runs.append((run, cand))
                miss.launchers.add(run.launcher)
                break  # the most specific existing candidate
    out = sorted(groups.values(), key=lambda m: (m.launcher, m.built_at.line, m.names))
    memo["misses"] = out
    return out


# ------------------------------------------------------------------- fixes


def _statement_lines(script: ir.Script, line: int) -> tuple[int, int] | None:
    """First and last line of the top-level statement that contains ``line``."""
    for stmt in script.body:
        pos = stmt.pos
        if pos.line <= line <= max(pos.end_line, pos.line):
            return pos.line, max(pos.end_line, pos.line)
    return None


def _assignment_text(script: ir.Script, var: str, source: str) -> str | None:
    """Source text of the first top-level assignment to ``var`` in a script."""
    lines = source.splitlines()
    for stmt in script.body:
        assigns: tuple[ir.Assign, ...] = ()
        if isinstance(stmt, ir.Command) and not stmt.words:
            assigns = stmt.assigns
        elif isinstance(stmt, ir.Decl):
            assigns = stmt.assigns
        if any(a.name == var and a.value is not None for a in assigns):
            first, last = stmt.pos.line, max(stmt.pos.end_line, stmt.pos.line)
            return "\n".join(lines[first - 1 : last])
    return None


def _sibling_snippet(facts: Facts, miss: Miss, variant: Variant) -> tuple[str, str, str] | None:
    """(var, assignment text, sibling launcher) from a launcher that handles the variant."""
    best: list[tuple[int, str, str, str]] = []
    for run in facts.runs:
        if run.real == miss.launcher or not _when_matches(variant, run.entry, run.point):
            continue
        suffix = _suffix(variant, run.entry, run.point)
        for d in run.dispatches:
            script = known(d.target) or ""
            if not suffix or not script.endswith(suffix + ".sh"):
                continue
            for var, value in d.var_parts:
                if value != suffix:
                    continue
                sib = facts.script(d.built_at.path)
                text = facts.tree.text(d.built_at.path)
                if sib is None or text is None:
                    continue
                snippet = _assignment_text(sib, var, text)
                if snippet is not None:
                    score = _common_prefix(posixpath.basename(run.real), posixpath.basename(miss.launcher))
                    best.append((-score, run.real, var, snippet))
    if not best:
        return None
    best.sort()
    _, sibling, var, snippet = best[0]
    return var, snippet, sibling


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


_SH_END = re.compile(r"\.sh(?=[\"'\s\\);|&]|$)")


def propose_fix(facts: Facts, miss: Miss) -> tuple[Fix | None, str | None]:
    """A patch to the launcher that dispatches the variant script; checked by re-evaluating
    the launcher for every affected entry. Returns (fix, sibling launcher it came from)."""
    suffixed = [v for v in miss.variants if v.suffix and v.var]
    if len(suffixed) != 1 or len(miss.variants) != 1:
        return None, None
    variant = suffixed[0]
    found = _sibling_snippet(facts, miss, variant)
    if found is not None:
        var, snippet, sibling = found
    elif variant.snippet:
        var, snippet, sibling = variant.var, variant.snippet, ""
    else:
        return None, None
    path = miss.launcher
    text = facts.tree.text(path)
    script = facts.script(path)
    if text is None or script is None:
        return None, None
    lines = text.splitlines(keepends=True)
    line_no = miss.built_at.line
    if not 0 < line_no <= len(lines):
        return None, None
    target = lines[line_no - 1]
    col = max(miss.built_at.col - 1, 0)
    m = _SH_END.search(target, col)
    if m is None:
        return None, None
    new_line = target[: m.start()] + "${" + var + "}" + target[m.start() :]
    new_lines = list(lines)
    new_lines[line_no - 1] = new_line
    if _assignment_text(script, var, text) is None:
        span = _statement_lines(script, line_no)
        insert_at = (span[0] if span else line_no) - 1
        indent = re.match(r"[ \t]*", lines[insert_at]).group(0) if insert_at < len(lines) else ""  # type: ignore[union-attr]
        block = "".join(indent + s.strip() + "\n" if i == 0 else s + "\n"
                        for i, s in enumerate(snippet.splitlines()))
        new_lines[insert_at:insert_at] = [block, "\n"] if indent == "" else [block]
    new_text = "".join(new_lines)
    # Check: every affected run now dispatches the script it should.
    for run, expected in miss.runs:
        got = facts.resolve_with(run.launcher, new_text.encode(), run.entry, run.point, run.node, run.label)
        if expected not in {known(d.target) for d in got}:
            return None, sibling
    diff = file_diff(path, text, new_text)
    source = f" (as {sibling} does)" if sibling else ""
    desc = f"Append ${{{var}}} to the dispatched script path{source}"
    return Fix(desc, diff, safe=False), sibling


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
