"""Endpoints: Actions workflows, workflow_dispatch (which records the dispatch and creates a queued
run), workflow runs with GitHub's filters, and repository_dispatch."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from .api import ApiError, Ctx, Reply, found, missing, not_found, paginate, route, wrong_type
from .state import Json, Pull, Repo, State, Workflow

DOC_DISPATCH = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"
DOC_REPO_DISPATCH = "https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event"
DOC_RUNS = "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-repository"
MAX_INPUTS = 25


def render_workflow(state: State, repo: Repo, wf: Workflow) -> Json:
    base = wf.path.rsplit("/", 1)[-1]
    return {
        "id": wf.id,
        "node_id": f"W_fake{wf.id}",
        "name": wf.name,
        "path": wf.path,
        "state": wf.state,
        "created_at": wf.created_at,
        "updated_at": wf.created_at,
        "url": f"{state.api}/repos/{repo.full_name}/actions/workflows/{wf.id}",
        "html_url": f"{state.web}/{repo.full_name}/blob/{repo.default_branch}/{wf.path}",
        "badge_url": f"{state.web}/{repo.full_name}/workflows/{base}/badge.svg",
    }


def find_workflow(repo: Repo, key: str) -> Workflow | None:
    """By numeric id or by the workflow file's base name (``e2e-tests.yml``), as GitHub accepts."""
    if key.isdigit() and int(key) in repo.workflows:
        return repo.workflows[int(key)]
    for wf in repo.workflows.values():
        if wf.path.rsplit("/", 1)[-1] == key:
            return wf
    return None


def _workflow(ctx: Ctx, repo: Repo) -> Workflow:
    wf = find_workflow(repo, ctx.arg("workflow"))
    if wf is None:
        raise not_found()
    return wf


@route("GET", r"{repo}/actions/workflows")
def list_workflows(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    items = [render_workflow(ctx.state, repo, wf) for wf in sorted(repo.workflows.values(), key=lambda w: w.id)]
    return paginate(ctx, items, "workflows")


@route("GET", r"{repo}/actions/workflows/(?P<workflow>[^/]+)")
def get_workflow(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, render_workflow(ctx.state, repo, _workflow(ctx, repo)))


def _head_sha(repo: Repo, ref: str) -> str:
    m = re.fullmatch(r"refs/pull/(\d+)/(?:head|merge)", ref)
    if m and int(m.group(1)) in repo.issues and repo.issues[int(m.group(1))].pull:
        pull = repo.issues[int(m.group(1))].pull
        assert pull is not None
        return pull.head_sha
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return ref
    branch = ref.removeprefix("refs/heads/")
    for issue in repo.issues.values():
        if issue.pull and issue.pull.head_repo == repo.full_name and issue.pull.head_ref == branch:
            return issue.pull.head_sha
    return repo.default_sha


def make_run(ctx: Ctx, repo: Repo, wf: Workflow, ref: str, inputs: dict[str, str]) -> Json:
    state = ctx.state
    rid = state.new_id()
    now = state.now()
    api = f"{state.api}/repos/{repo.full_name}/actions/runs/{rid}"
    actor = state.render_user(ctx.login)
    run: Json = {
        "id": rid,
        "name": wf.name,
        "node_id": f"WFR_fake{rid}",
        "head_branch": ref.removeprefix("refs/heads/").removeprefix("refs/tags/"),
        "head_sha": _head_sha(repo, ref),
        "path": wf.path,
        "display_title": state.run_title(dict(inputs)) if state.run_title else wf.name,
        "run_number": 1 + sum(1 for r in repo.runs.values() if r["workflow_id"] == wf.id),
        "event": "workflow_dispatch",
        "status": "queued",
        "conclusion": None,
        "workflow_id": wf.id,
        "url": api,
        "html_url": f"{state.web}/{repo.full_name}/actions/runs/{rid}",
        "pull_requests": [],
        "created_at": now,
        "updated_at": now,
        "actor": actor,
        "triggering_actor": actor,
        "run_attempt": 1,
        "run_started_at": now,
        "jobs_url": f"{api}/jobs",
        "logs_url": f"{api}/logs",
        "cancel_url": f"{api}/cancel",
        "rerun_url": f"{api}/rerun",
        "workflow_url": f"{state.api}/repos/{repo.full_name}/actions/workflows/{wf.id}",
        "repository": state.render_repo(repo),
        "head_repository": state.render_repo(repo),
    }
    repo.runs[rid] = run
    return run


def record_pull_request_runs(state: State, repo: Repo, p: Pull, actor: str) -> list[Json]:
    """A queued ``pull_request`` run of every active ``on_pull_request`` workflow for the PR's new
    head, created now (server time), with the PR's head branch and head repository (a fork's)."""
    out: list[Json] = []
    for wf in repo.workflows.values():
        if not wf.on_pull_request or wf.state != "active":
            continue
        rid = state.new_id()
        now = state.now()
        api = f"{state.api}/repos/{repo.full_name}/actions/runs/{rid}"
        who = state.render_user(actor)
        head = state.render_repo(repo) if p.head_repo == repo.full_name else state.render_fork(p.head_repo)
        run: Json = {
            "id": rid, "name": wf.name, "node_id": f"WFR_fake{rid}", "head_branch": p.head_ref,
            "head_sha": p.head_sha, "path": wf.path, "display_title": wf.name,
            "run_number": 1 + sum(1 for r in repo.runs.values() if r["workflow_id"] == wf.id),
            "event": "pull_request", "status": "queued", "conclusion": None, "workflow_id": wf.id,
            "url": api, "html_url": f"{state.web}/{repo.full_name}/actions/runs/{rid}",
            "pull_requests": [{"number": p.number, "head": {"ref": p.head_ref, "sha": p.head_sha}}],
            "created_at": now, "updated_at": now, "actor": who, "triggering_actor": who, "run_attempt": 1,
            "run_started_at": now, "jobs_url": f"{api}/jobs", "logs_url": f"{api}/logs",
            "cancel_url": f"{api}/cancel", "rerun_url": f"{api}/rerun",
            "workflow_url": f"{state.api}/repos/{repo.full_name}/actions/workflows/{wf.id}",
            "repository": state.render_repo(repo), "head_repository": head,
        }
        repo.runs[rid] = run
        out.append(run)
    return out


@route("POST", r"{repo}/actions/workflows/(?P<workflow>[^/]+)/dispatches")
def dispatch_workflow(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    wf = _workflow(ctx, repo)
    obj = ctx.obj()
    ref = obj.get("ref")
    if ref is None:
        raise missing("ref", DOC_DISPATCH)
    if not isinstance(ref, str):
        raise wrong_type("ref", ref, "a string", DOC_DISPATCH)
    inputs: Any = obj.get("inputs")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, dict):
        raise wrong_type("inputs", inputs, "an object", DOC_DISPATCH)
    for k, v in inputs.items():
        if not isinstance(v, str):
            raise wrong_type(k, v, "a string", DOC_DISPATCH)
    if len(inputs) > MAX_INPUTS:
        raise ApiError(422, f"you may only define up to {MAX_INPUTS} `inputs` for a workflow_dispatch event")
    if not wf.dispatchable:
        raise ApiError(422, "Workflow does not have 'workflow_dispatch' trigger", doc=DOC_DISPATCH)
    if wf.inputs is not None:
        unexpected = sorted(set(inputs) - set(wf.inputs))
        if unexpected:
            raise ApiError(422, f"Unexpected inputs provided: {json.dumps(unexpected)}", doc=DOC_DISPATCH)
    repo.dispatches.append({"workflow_id": wf.id, "ref": ref, "inputs": dict(inputs)})
    run = make_run(ctx, repo, wf, ref, inputs)
    if obj.get("return_run_details") is True:
        return Reply(200, {"workflow_run_id": run["id"], "run_url": run["url"], "html_url": run["html_url"]})
    return Reply(204)


def _when(value: str) -> tuple[datetime, bool]:
    """A date or date-time of a search qualifier, and whether it names a whole day."""
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return datetime.fromisoformat(value).replace(tzinfo=UTC), True
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(422, f"Invalid created filter: {value!r}", doc=DOC_RUNS) from None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)), False


def created_filter(expr: str) -> Callable[[datetime], bool]:
    """GitHub's date qualifiers: ``>=X``, ``>X``, ``<=X``, ``<X``, ``X..Y`` (``*`` open), ``X``;
    X a date (a whole day) or an ISO-8601 date-time."""

    def ge(v: str) -> Callable[[datetime], bool]:
        dt, _ = _when(v)
        return lambda t: t >= dt

    def gt(v: str) -> Callable[[datetime], bool]:
        dt, day = _when(v)
        return (lambda t: t >= dt + timedelta(days=1)) if day else (lambda t: t > dt)

    def le(v: str) -> Callable[[datetime], bool]:
        dt, day = _when(v)
        return (lambda t: t < dt + timedelta(days=1)) if day else (lambda t: t <= dt)

    def lt(v: str) -> Callable[[datetime], bool]:
        dt, _ = _when(v)
        return lambda t: t < dt

    if ".." in expr:
        a, _, b = expr.partition("..")
        lo = ge(a) if a != "*" else (lambda t: True)
        hi = le(b) if b != "*" else (lambda t: True)
        return lambda t: lo(t) and hi(t)
    for op, make in ((">=", ge), ("<=", le), (">", gt), ("<", lt)):
        if expr.startswith(op):
            return make(expr[len(op) :])
    lo, hi = ge(expr), le(expr)
    return lambda t: lo(t) and hi(t)


def _created(run: Json) -> datetime:
    return datetime.fromisoformat(str(run["created_at"]).replace("Z", "+00:00"))


def _runs(ctx: Ctx, repo: Repo, workflow_id: int | None) -> Reply:
    q = ctx.query
    runs = [r for r in repo.runs.values() if workflow_id is None or r["workflow_id"] == workflow_id]
    for name, key in (("event", "event"), ("branch", "head_branch"), ("head_sha", "head_sha")):
        if name in q:
            runs = [r for r in runs if r[key] == q[name]]
    if "status" in q:
        runs = [r for r in runs if q["status"] in (r["status"], r["conclusion"])]
    if "actor" in q:
        runs = [r for r in runs if r["actor"]["login"] == q["actor"]]
    if "created" in q:
        keep = created_filter(q["created"])
        runs = [r for r in runs if keep(_created(r))]
    runs.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    return paginate(ctx, [dict(r) for r in runs], "workflow_runs")


@route("GET", r"{repo}/actions/runs")
def list_runs(ctx: Ctx) -> Reply:
    return _runs(ctx, ctx.repo(), None)


@route("GET", r"{repo}/actions/workflows/(?P<workflow>[^/]+)/runs")
def list_workflow_runs(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return _runs(ctx, repo, _workflow(ctx, repo).id)


@route("GET", r"{repo}/actions/runs/(?P<id>\d+)")
def get_run(ctx: Ctx) -> Reply:
    run = found(ctx.repo().runs, ctx.num("id"))
    return Reply(200, dict(run))


@route("POST", r"{repo}/dispatches")
def repository_dispatch(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    obj = ctx.obj()
    event_type = obj.get("event_type")
    if event_type is None:
        raise missing("event_type", DOC_REPO_DISPATCH)
    if not isinstance(event_type, str) or not event_type:
        raise wrong_type("event_type", event_type, "a non-empty string", DOC_REPO_DISPATCH)
    payload = obj.get("client_payload", {})
    if not isinstance(payload, dict):
        raise wrong_type("client_payload", payload, "an object", DOC_REPO_DISPATCH)
    if len(payload) > 10:
        n = len(payload)
        raise ApiError(422, f"No more than 10 properties are allowed; {n} were supplied.", doc=DOC_REPO_DISPATCH)
    repo.repository_dispatches.append({"event_type": event_type, "client_payload": payload})
    return Reply(204)
