"""``python -m bot trace``: what ran, as text and as JSON (docs/trace.md; the fields it shares
with ``serve``'s JSON have the same names and shapes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.report.serve import command_json
from bot.serve.model import Command

VERSION = 1


def _point(t: Any) -> dict[str, Any]:
    p = t.point
    out: dict[str, Any] = {k: v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
                           for k, v in p.fields.items()}
    out["scenario"] = p.scenario
    out["isl"] = p.seq.get("isl")
    out["osl"] = p.seq.get("osl")
    out["spec-decoding"] = p.spec_decoding
    out["conc"] = int(t.conc) if t.conc and t.conc.isdigit() else t.conc
    return out


def trace_json(t: Any, disagreements: Sequence[Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"entry": t.entry.name, "point": _point(t), "launcher": t.launcher, "node": t.node,
                           "script": t.script, "workflow_env": dict(sorted(t.env.items()))}
    server: Command | None = t.server
    if server is not None:
        out.update(command_json(server))
    else:
        out.update({"engine": None, "model": None, "argv": [], "args": {}, "env": {}, "spec": None, "unknown": [],
                    "sources": {}, "notes": []})
    out["client"] = ({"argv": list(t.client.argv), "args": dict(t.client.args)} if t.client is not None else None)
    out["others"] = [command_json(c) for c in t.others]
    out["exit"] = {"code": t.code, "ended": t.ended, "message": t.message}
    out["calls"] = [dict(c) for c in t.calls]
    if disagreements is not None:
        out["disagreements"] = [{"part": d.part, "key": d.key, "static": d.static, "traced": d.traced}
                                for d in disagreements]
    return out


def to_json(traced: Sequence[Any], verdicts: Sequence[Sequence[Any]] | None = None) -> dict[str, Any]:
    return {"version": VERSION,
            "traces": [trace_json(t, verdicts[i] if verdicts is not None else None) for i, t in enumerate(traced)]}


def text_lines(traced: Sequence[Any], verdicts: Sequence[Sequence[Any]] | None = None) -> list[str]:
    lines: list[str] = []
    for i, t in enumerate(traced):
        p = t.point
        conc = f", conc={t.conc}" if t.conc else ""
        lines.append(f"{t.entry.name}  [tp={p.get('tp')}, spec-decoding={p.spec_decoding}{conc}]  on {t.node}")
        lines.append(f"  {t.launcher} -> {t.script or '(no benchmark script ran)'}")
        if t.server is not None:
            lines.append(f"  server: {t.server.engine} {' '.join(t.server.argv)}")
        else:
            lines.append("  server: none started")
        if t.client is not None:
            lines.append(f"  client: {' '.join(t.client.argv)}")
        lines.append(f"  {t.message}")
        for c in t.calls:
            argv = " ".join(str(a) for a in (c.get("argv") or []))
            lines.append(f"    [{c.get('role')}] {argv[:300]}")
        if verdicts is not None:
            found = verdicts[i]
            lines.append("  agrees with the static answer" if not found else
                         f"  {len(found)} disagreement{'s' if len(found) != 1 else ''} with the static answer:")
            lines += [f"    {d.text()}" for d in found]
    return lines
