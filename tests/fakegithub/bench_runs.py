"""Endpoints of the bench commands: cancelling a workflow run (POST /actions/runs/{id}/cancel:
202 and the run completed/cancelled, 409 when it had finished, as GitHub answers), removing a
label (DELETE /issues/{n}/labels/{name}, 404 when it is not there); and ``add_label``, the test
driver that labels a pull request (timeline event and webhook payload)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .api import ApiError, Ctx, Reply, found, route
from .state import Json

if TYPE_CHECKING:
    from .server import FakeGitHub

DOC_CANCEL = "https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run"


@route("POST", r"{repo}/actions/runs/(?P<id>\d+)/cancel")
def cancel_run(ctx: Ctx) -> Reply:
    run = found(ctx.repo().runs, ctx.num("id"))
    if run["status"] == "completed":
        raise ApiError(409, "Cannot cancel a workflow run that is completed.", doc=DOC_CANCEL)
    run.update(status="completed", conclusion="cancelled", updated_at=ctx.state.now())
    return Reply(202, {})


@route("DELETE", r"{repo}/issues/(?P<number>\d+)/labels/(?P<name>[^/]+)")
def remove_label(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.issue(repo)
    name = ctx.arg("name")
    if name not in issue.labels:
        raise ApiError(404, "Label does not exist")
    issue.labels.remove(name)
    return Reply(200, [{"name": n} for n in issue.labels])


def add_label(fake: FakeGitHub, repo: str, number: int, label: str, actor: str) -> Json:
    """The label lands on the pull request: a ``labeled`` timeline event (server-timed, with an id)
    and the ``pull_request`` ``labeled`` webhook payload, which this returns."""
    state = fake.state
    with state.lock:
        r = state.repo(repo)
        issue, pull = state.pull(r, number)
        state.user(actor)
        if label not in issue.labels:
            issue.labels.append(label)
        eid = state.new_id()
        pull.timeline.append({
            "_seq": eid, "id": eid, "node_id": f"LE_fake{eid}", "url": f"{state.api}/repos/{repo}/issues/events/{eid}",
            "actor": state.render_user(actor), "event": "labeled", "created_at": state.now(),
            "label": {"name": label, "color": "ededed"}, "performed_via_github_app": None,
        })
    payload = fake.event_pull_request(repo, number, action="labeled", sender=actor)
    payload["label"] = {"name": label, "color": "ededed"}
    return payload
