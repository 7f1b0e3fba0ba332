"""The dispatch table: for every (entry, search-space point, launcher), what runs."""

from __future__ import annotations

from bot.repo.facts import Facts
from bot.shell.values import describe, known


def rows(facts: Facts) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for run in facts.runs:
        point = f"{run.point.scenario} spec={run.point.spec_decoding} line {run.point.pos.line}"
        base = {"entry": run.entry.name, "point": point, "label": run.label, "node": run.node,
                "launcher": run.launcher}
        if not run.dispatches:
            out.append({**base, "script": None, "exists": None,
                        "built_at": "exits before dispatching" if run.exits_early else "-"})
            continue
        for d in run.dispatches:
            path = known(d.target)
            exists = facts.tree.is_file(path) if path is not None else None
            out.append({**base, "script": describe(d.target), "exists": exists,
                        "built_at": f"{d.built_at.path}:{d.built_at.line}", "via": d.via})
    return out
