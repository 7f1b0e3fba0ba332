"""Shared by the speculative-decoding rules: the sites they judge, where a setting was
written, and how the points of a finding are named.

The sites come from ``bot.launches.specview`` (the server each point's script starts). A site
whose entry runs a base script while its ``_mtp`` variant exists is left out: the launcher
that ignores the variant (ignored-variant) already explains why that entry does not
speculate (one finding per root cause).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.launches.specview import Site, sites
from bot.repo.facts import Facts
from bot.repo.load.configs import Entry, Point
from bot.repo.load.yamlfile import YMap
from bot.serve.model import Command

# Keys of a command's ``sources`` that hold its speculative settings, per engine
SPEC_ARGS = {
    "vllm": ("speculative_config",),
    "sglang": ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
               "speculative_num_draft_tokens", "speculative_draft_model_path"),
    "trtllm": ("speculative_config",),
    "atom": ("method", "num_speculative_tokens", "draft_model"),
}


def judged(facts: Facts) -> list[Site]:
    """The sites the spec rules judge: all but those a launcher's ignored variant explains."""
    memo = facts.memo.get("spec.judged")
    if memo is None:
        from bot.rules._variants import misses

        explained = {(id(run.entry), id(run.point), run.launcher) for m in misses(facts) for run, _ in m.runs}
        memo = facts.memo["spec.judged"] = [
            s for s in sites(facts)
            if s.run is None or (id(s.entry), id(s.run.point), s.run.launcher) not in explained]
    return list(memo)


def split_src(src: str | None) -> tuple[str, int] | None:
    """``"path:line"`` -> (path, line)."""
    if not src:
        return None
    path, _, line = src.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else None


def setting_at(cmd: Command, *keys: str) -> tuple[str, int] | None:
    """Where the first of ``keys`` that the command has was written (the line that sets it)."""
    for k in keys:
        got = split_src(cmd.sources.get(k))
        if got is not None:
            return got
    return None


def spec_at(cmd: Command) -> tuple[str, int] | None:
    """Where the command's speculative settings were written."""
    return setting_at(cmd, *SPEC_ARGS.get(cmd.engine, ()))


def command_at(cmd: Command, site: Site) -> tuple[str, int]:
    """The server command's first line (its program word), else the script's first line."""
    first = split_src(cmd.sources.get("model")) if cmd.sources else None
    for src in cmd.sources.values():
        got = split_src(src)
        if got is not None and (first is None or (got[0] == first[0] and got[1] < first[1])):
            first = got
    if first is not None:
        return first
    return (site.script or site.recipe or site.entry.path, 1)


def point_at(entry: Entry, point: Point) -> tuple[str, int, int]:
    """The search-space row of a point (its ``spec-decoding`` key when it has one)."""
    f = point.fields
    mark = f.key_pos.get("spec-decoding", f.pos) if isinstance(f, YMap) else point.pos
    return entry.path, mark.line, mark.col


def point_text(point: Point, concs: Sequence[str] = ()) -> str:
    """``tp 8, conc 24-70, 8k1k`` (the fields that tell a point apart)."""
    f = point.fields
    parts = [f"{k} {f[k]}" for k in ("tp", "ep", "dp-attn", "dcp-size") if k in f]
    if concs:
        parts.append("conc " + (concs[0] if len(concs) == 1 else ", ".join(concs)))
    elif "conc-list" in f:
        parts.append("conc " + ", ".join(str(c) for c in f["conc-list"]))
    elif "conc-start" in f:
        parts.append(f"conc {f['conc-start']}-{f.get('conc-end', f['conc-start'])}")
    isl, osl = point.seq.get("isl"), point.seq.get("osl")
    if isl is not None and osl is not None:
        parts.append(f"isl {isl} / osl {osl}")
    elif point.scenario != "fixed-seq-len":
        parts.append(point.scenario)
    return ", ".join(parts) or f"line {point.pos.line}"


def sites_text(group: Iterable[Site], limit: int = 4) -> str:
    """The points of several sites, named (``tp 8, conc 24, 32; tp 4, ...``), at most ``limit``."""
    concs: dict[int, list[str]] = {}  # a point's concurrencies over the sites (a switch on the concurrency)
    points: dict[int, Point] = {}
    for s in group:
        for p in s.points:
            points.setdefault(id(p), p)
            concs.setdefault(id(p), []).extend(c for c in s.concs if c not in concs[id(p)])
    names = list(dict.fromkeys(point_text(points[k], sorted(c, key=_num)) for k, c in concs.items()))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return "; ".join(names[:limit]) + more


def _num(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)
