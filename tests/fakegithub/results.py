"""Endpoints: a run's artifacts and their zip download (a 302 to a storage URL on the same
server, as GitHub answers), and the test-side helpers ``add_artifact`` and ``event_workflow_run``."""

from __future__ import annotations

import copy
import io
import zipfile
from typing import TYPE_CHECKING, Any

from .api import Ctx, Reply, found, not_found, paginate, route
from .state import Json

if TYPE_CHECKING:
    from .server import FakeGitHub

_BLOBS: dict[int, bytes] = {}  # artifact id -> zip bytes (ids are unique across fakes: State.new_id)


@route("GET", r"{repo}/actions/runs/(?P<id>\d+)/artifacts")
def list_run_artifacts(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    found(repo.runs, ctx.num("id"))
    items = [copy.deepcopy(a) for a in repo.artifacts.get(ctx.num("id"), [])]
    return paginate(ctx, items, "artifacts")


def _artifact(ctx: Ctx) -> Json:
    repo = ctx.repo()
    for arts in repo.artifacts.values():
        for a in arts:
            if a["id"] == ctx.num("id"):
                return a
    raise not_found()


@route("GET", r"{repo}/actions/artifacts/(?P<id>\d+)")
def get_artifact(ctx: Ctx) -> Reply:
    return Reply(200, copy.deepcopy(_artifact(ctx)))


@route("GET", r"{repo}/actions/artifacts/(?P<id>\d+)/zip")
def download_artifact(ctx: Ctx) -> Reply:
    a = _artifact(ctx)
    if a["expired"]:
        raise not_found()
    return Reply(302, None, {"Location": f"{ctx.state.api}/_storage/artifacts/{a['id']}?sig=fake"})


@route("GET", r"/_storage/artifacts/(?P<id>\d+)")
def storage(ctx: Ctx) -> Reply:
    data = _BLOBS.get(ctx.num("id"))
    if data is None:
        raise not_found()
    return Reply(200, data, {"Content-Type": "application/zip"})


def make_zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def add_artifact(fake: FakeGitHub, repo: str, run_id: int, name: str, files: dict[str, bytes] | None = None,
                 *, data: bytes | None = None, expired: bool = False, size: int | None = None) -> Json:
    """An artifact of the run: a zip of ``files`` (or the raw ``data``, e.g. a hostile archive)."""
    blob = data if data is not None else make_zip(files or {})
    with fake.state.lock:
        r = fake.state.repo(repo)
        run = r.runs[run_id]
        aid = fake.state.new_id()
        api = f"{fake.state.api}/repos/{repo}/actions/artifacts/{aid}"
        art: Json = {
            "id": aid, "node_id": f"MDg6QXJ0aWZhY3Q{aid}", "name": name,
            "size_in_bytes": len(blob) if size is None else size, "url": api,
            "archive_download_url": f"{api}/zip", "expired": expired,
            "created_at": fake.state.now(), "updated_at": fake.state.now(), "expires_at": fake.state.now(),
            "digest": None,
            "workflow_run": {"id": run_id, "repository_id": r.id, "head_repository_id": r.id,
                             "head_branch": run["head_branch"], "head_sha": run["head_sha"]},
        }
        r.artifacts.setdefault(run_id, []).append(art)
        _BLOBS[aid] = blob
        return copy.deepcopy(art)


def event_workflow_run(fake: FakeGitHub, repo: str, run_id: int, action: str = "completed",
                       sender: str | None = None) -> Json:
    """A ``workflow_run`` webhook payload for the run as it is now: ``action``, ``workflow_run``
    (the run object), ``workflow`` (the workflow object), ``repository``, ``sender``."""
    from .actions import render_workflow

    with fake.state.lock:
        r = fake.state.repo(repo)
        run: dict[str, Any] = copy.deepcopy(r.runs[run_id])
        wf = r.workflows[run["workflow_id"]]
        run.setdefault("artifacts_url", f"{run['url']}/artifacts")
        return {
            "action": action,
            "workflow_run": run,
            "workflow": render_workflow(fake.state, r, wf),
            "repository": fake.state.render_repo(r),
            "sender": fake.state.render_user(sender or run["actor"]["login"]),
        }
