"""Recipe parity reports: text, the JSON contract (docs/recipes.md) and the markdown section
of the pull-request summary. Pure: every repository or recipe string in markdown goes
through :mod:`bot.report.markdown`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.recipes.compare import Comparison, definite
from bot.recipes.model import Difference
from bot.report import markdown as md

JSON_VERSION = 1
SHOWN = 12  # difference rows shown open in markdown (MAJOR ones always are)


def point_json(c: Comparison) -> dict[str, Any]:
    p = c.point
    out: dict[str, Any] = {"scenario": p.scenario}
    out.update({k: _plain(v) for k, v in p.seq.items() if k in ("isl", "osl", "trace-source")})
    out.update({k: _plain(v) for k, v in p.fields.items()})
    if len(c.points) > 1:
        out["group"] = len(c.points)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return str(v)


def diff_json(d: Difference) -> dict[str, Any]:
    return {"key": d.key, "class": d.klass, "status": d.status, "recipe": _plain(d.recipe),
            "script": _plain(d.script), "where": d.where, "notes": list(d.notes), "judged": definite(d)}


def to_json(found: Sequence[Comparison], notes: Sequence[str] = ()) -> dict[str, Any]:
    out = []
    for c in found:
        recipe = None
        if c.recipe is not None:
            prov = c.recipe.provenance
            recipe = {"source": prov.source, "revision": prov.revision, "path": prov.path,
                      "selection": dict(prov.selection), "fallback": prov.fallback}
        item_notes = list(c.notes) + ([c.miss.reason] if c.miss is not None else [])
        if c.recipe is not None:
            item_notes += list(c.recipe.notes)
        out.append({"entry": c.entry.name, "point": point_json(c), "engine": c.engine, "recipe": recipe,
                    "differences": [diff_json(d) for d in c.differences], "notes": item_notes})
    return {"version": JSON_VERSION, "comparisons": out, "notes": list(notes)}


def text_lines(found: Sequence[Comparison], notes: Sequence[str] = ()) -> list[str]:
    lines = [f"note: {n}" for n in notes]
    for c in found:
        head = f"{c.entry.name} [{_point_text(c)}] ({c.engine})"
        if c.recipe is None:
            lines.append(f"{head}: no recipe: {c.miss.reason if c.miss else 'not compared'}")
            continue
        prov = c.recipe.provenance
        sel = ", ".join(f"{k}={v}" for k, v in prov.selection)
        fb = f", {prov.fallback}" if prov.fallback else ""
        lines.append(f"{head}: {prov.source} {prov.path} @ {prov.revision[:12]} ({sel}{fb})")
        for n in c.notes:
            lines.append(f"    note: {n}")
        if not c.differences:
            lines.append("    matches the recipe")
        for d in c.differences:
            at = f"  ({d.where})" if d.where else ""
            lines.append(f"    {d.klass:<10} {d.status:<18} {d.key}: script {_v(d.script)}, recipe {_v(d.recipe)}{at}")
    return lines


def _point_text(c: Comparison) -> str:
    p = c.point
    bits = [f"tp={p.get('tp')}"]
    if p.get("ep") not in (None, 1):
        bits.append(f"ep={p.get('ep')}")
    if p.get("dp-attn") is True:
        bits.append("dp-attn")
    bits.append(f"spec={p.spec_decoding}")
    return " ".join(bits)


def _v(value: object) -> str:
    if value is None:
        return "-"
    return str(value)


def markdown(found: Sequence[Comparison], link: Any = None) -> list[str]:
    """The "Recipe parity" section: one block per entry, a table per compared point group
    (MAJOR and MAJOR-spec rows first, the rest collapsed)."""
    out = ["### Recipe parity", ""]
    by_entry: dict[str, list[Comparison]] = {}
    for c in found:
        by_entry.setdefault(c.entry.name, []).append(c)
    for name, cs in by_entry.items():
        out.append(f"**{md.code(name)}**")
        out.append("")
        for c in cs:
            out += _block(c, link)
    return out


def _block(c: Comparison, link: Any) -> list[str]:
    point = md.escape(_point_text(c))
    if c.recipe is None:
        why = c.miss.reason if c.miss else "not compared"
        return [f"- {point}: no official recipe to compare with ({md.escape(why)}).", ""]
    prov = c.recipe.provenance
    sel = ", ".join(f"{k}={v}" for k, v in prov.selection)
    fb = f"; fallback {md.escape(prov.fallback)}" if prov.fallback else ""
    head = (f"- {point}: compared with {md.escape(prov.source)} {md.code(prov.path)} @ "
            f"{md.code(prov.revision[:12])} ({md.escape(sel)}{fb})")
    lines = [head]
    lines += [f"  - {md.escape(n)}" for n in c.notes]
    if not c.differences:
        return [*lines, "  - the serve command matches the recipe", ""]
    major = [d for d in c.differences if d.klass in ("MAJOR", "MAJOR-spec")]
    rest = [d for d in c.differences if d.klass not in ("MAJOR", "MAJOR-spec")]
    counts = f"{len(major)} MAJOR, {len(rest)} other"
    lines += ["", f"  {counts}", ""]
    lines += ["  " + row for row in _table(major or rest[:SHOWN], link)]
    hidden = rest if major else rest[SHOWN:]
    if hidden:
        lines += ["", f"  <details><summary>{len(hidden)} tuning, harness and feature differences</summary>", ""]
        lines += ["  " + row for row in _table(hidden, link)]
        lines += ["", "  </details>"]
    return [*lines, ""]


def _table(diffs: Sequence[Difference], link: Any) -> list[str]:
    rows = ["| key | class | status | script | recipe | where |", "|---|---|---|---|---|---|"]
    for d in diffs:
        where = "" if not d.where else _where(d.where, link)
        rows.append("| " + " | ".join(md.cell(x) for x in (
            md.code(d.key), d.klass, d.status, _val(d.script), _val(d.recipe), where)) + " |")
    return rows


def _val(value: object) -> str:
    return "" if value is None else md.code(str(value)[:80])


def _where(at: str, link: Any) -> str:
    path, _, line = at.rpartition(":")
    if not path or not line.isdigit():
        return md.code(at)
    return md.where(path, int(line), link)
