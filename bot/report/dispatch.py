"""The dispatch table: for every (entry, search-space point, launcher), what runs."""

from __future__ import annotations

from collections.abc import Mapping

from bot.repo.facts import Facts, Run
from bot.report import visible
from bot.shell.ir.values import describe, known


def workflow_of(facts: Facts, run: Run) -> str:
    """The workflow path whose env the run got (or the profile's table when none says)."""
    call = facts.envs.call_for(run.entry, run.point, run.node, run.label)
    return call.name if call is not None else "profile env table"


def rows(facts: Facts) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for run in facts.runs:
        point = f"{run.point.scenario} spec={run.point.spec_decoding} line {run.point.pos.line}"
        base = {"entry": run.entry.name, "point": point, "label": run.label, "node": run.node,
                "launcher": run.launcher, "workflow": workflow_of(facts, run)}
        if not run.dispatches and run.handoffs:
            at = run.handoffs[0].loc
            out.append({**base, "script": None, "exists": None, "built_at": f"{at.path}:{at.line}",
                        "handed_to": _handed(facts, run)})
            continue
        if not run.dispatches:
            out.append({**base, "script": None, "exists": None,
                        "built_at": "exits before dispatching" if run.exits_early else "-"})
            continue
        for d in run.dispatches:
            path = known(d.target)
            exists = facts.tree.is_file(path) if path is not None else None
            out.append({**base, "script": describe(d.target), "exists": exists,
                        "built_at": f"{d.built_at.path}:{d.built_at.line}", "via": d.via})
    out.extend(_other_paths(facts))
    return out


def _other_paths(facts: Facts) -> list[dict[str, object]]:
    """Rows for the other workflow paths where what runs differs from the main path."""
    out: list[dict[str, object]] = []
    for pr in facts.path_runs:
        main = pr.main
        mine = {known(d.target) for d in pr.result.dispatches()}
        if main is not None and mine == {known(d.target) for d in main.dispatches}:
            continue
        name = pr.entry.name if pr.entry is not None else "(no entry)"
        point = (f"{pr.point.scenario} spec={pr.point.spec_decoding} line {pr.point.pos.line}"
                 if pr.point is not None else "-")
        base = {"entry": name, "point": point, "label": pr.label, "node": pr.node, "launcher": pr.launcher,
                "workflow": pr.group.name}
        ds = pr.result.dispatches()
        if not ds:
            out.append({**base, "script": None, "exists": None, "built_at": "exits before dispatching"})
        for d in ds:
            path = known(d.target)
            out.append({**base, "script": describe(d.target),
                        "exists": facts.tree.is_file(path) if path is not None else None,
                        "built_at": f"{d.built_at.path}:{d.built_at.line}", "via": d.via})
    return out


def _handed(facts: Facts, run: Run) -> dict[str, object]:
    """The tool a run hands the job to and the recipes its point names: where each is in the
    repo (``exists`` False: its folder is there, the file is not; None: only the tool's repo)."""
    tool = run.handoffs[0].name
    job = facts.jobs.of(run.entry)
    recipes: list[dict[str, object]] = []
    for ref in job.refs if job is not None else ():
        if ref.point is run.point and job is not None:
            recipe = job.recipe(ref)
            recipes.append({"setting": ref.setting, "value": ref.value, "repo": recipe.found or recipe.expected,
                            "exists": True if recipe.found else False if recipe.expected else None})
    return {"tool": tool, "recipes": recipes}


def text_line(row: Mapping[str, object]) -> str:
    """One row as ``entry  [point]  launcher  ->  what runs  @where``."""
    handed = row.get("handed_to")
    if row["script"]:
        mark = {True: "", False: "  (missing)", None: "  (unknown)"}[row["exists"]]  # type: ignore[index]
        target = f"{row['script']}{mark}"
    elif isinstance(handed, Mapping):
        recipes = [r for r in handed["recipes"] if isinstance(r, Mapping)]
        named = ", ".join(str(r["value"]) for r in recipes) or "no recipe named"
        missing = "  (missing)" if any(r["exists"] is False for r in recipes) else ""
        target = f"(handed to {handed['tool']}: {named}){missing}"
    else:
        target = "(nothing dispatched)"
    via = f"  [{row['workflow']}]" if row.get("workflow") else ""
    return visible(f"{row['entry']}  [{row['point']}]{via}  {row['launcher']}  ->  {target}  @{row['built_at']}")
