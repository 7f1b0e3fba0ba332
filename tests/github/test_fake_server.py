"""The fake GitHub server, driven through the real PyGithub HTTP stack (requests/urllib3)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import github
import pytest
import requests
from fakegithub import FakeGitHub
from github.GithubObject import NotSet

REPO = "acme/bench"
HEAD = "a" * 40
BASE = "b" * 40
PATCH = "@@ -1,3 +1,4 @@\n ctx1\n-old2\n+new2\n+new3\n ctx3\n@@ -10,2 +11,2 @@\n ctx10\n-old11\n+new12"
FILES: list[dict[str, Any]] = [
    {"filename": "runners/x.sh", "status": "modified", "patch": PATCH},
    {"filename": "new.sh", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+a\n+b"},
    {"filename": "renamed.sh", "status": "renamed", "previous_filename": "old.sh", "patch": "@@ -1 +1 @@\n-x\n+y"},
    {"filename": "blob.bin", "status": "added"},
]


def client(gh: FakeGitHub, token: str = "tok-alice", **kw: Any) -> github.Github:
    kw.setdefault("retry", None)
    return github.Github(
        auth=github.Auth.Token(token),
        base_url=gh.api_url,
        seconds_between_requests=None,
        seconds_between_writes=None,
        **kw,
    )


def raw(gh: FakeGitHub, method: str, path: str, token: str | None = "tok-alice", **kw: Any) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    headers.update(kw.pop("headers", {}))
    return requests.request(method, gh.api_url + path, headers=headers, timeout=5, **kw)


def setup(gh: FakeGitHub) -> None:
    gh.add_user("alice", type="User")
    gh.add_user("bob")
    gh.add_user("github-actions[bot]", type="Bot")
    gh.add_token("tok-alice", "alice")
    gh.add_token("tok-bob", "bob")
    gh.add_token("tok-actions", "github-actions[bot]", app=True)
    gh.add_token("tok-ro", "github-actions[bot]", app=True, read_only=True)
    gh.add_repo(REPO, default_branch="main")
    gh.set_permission(REPO, "alice", "write")
    gh.add_pull(REPO, number=7, head_sha=HEAD, base_sha=BASE, head_ref="feat", base_ref="main", user="bob",
                title="Add runner", files=FILES)
    gh.add_workflow(REPO, id=101, path=".github/workflows/e2e-tests.yml", name="End-to-end tests")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        setup(fake)
        yield fake
        assert fake.errors == []


# -- server basics -------------------------------------------------------------------------------------


def test_lifecycle_and_api_url() -> None:
    fake = FakeGitHub()
    assert fake.api_url.startswith("http://127.0.0.1:") and fake.api_url.endswith("/api/v3")
    fake.start()
    setup(fake)
    assert client(fake).get_user().login == "alice"
    fake.stop()
    fake.stop()  # idempotent
    with pytest.raises(requests.ConnectionError):
        requests.get(fake.api_url + "/user", timeout=2)


def test_auth(gh: FakeGitHub) -> None:
    assert raw(gh, "GET", "/user", token=None).status_code == 401
    bad = raw(gh, "GET", "/user", token="nope")
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    assert raw(gh, "GET", "/user", token=None, headers={"Authorization": "Bearer tok-alice"}).json()["login"] == "alice"
    with pytest.raises(github.BadCredentialsException):
        client(gh, "nope").get_repo(REPO)


def test_headers_unknown_route_and_bad_json(gh: FakeGitHub) -> None:
    r = raw(gh, "GET", "/repos/acme/bench")
    assert r.headers["content-type"] == "application/json; charset=utf-8"
    for h in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-used",
              "x-ratelimit-resource", "x-github-request-id"):
        assert h in r.headers
    assert int(r.headers["content-length"]) == len(r.content)
    nf = raw(gh, "GET", "/nope/nothing")
    assert nf.status_code == 404
    assert nf.json() == {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
    assert raw(gh, "DELETE", "/repos/acme/bench").status_code == 404
    assert requests.get(gh.web_url + "/user", timeout=5).status_code == 404  # outside /api/v3
    bad = raw(gh, "POST", "/repos/acme/bench/issues/7/comments", data=b"{nope",
              headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["message"] == "Problems parsing JSON"
    assert gh.issue_comments(REPO, 7) == []


def test_rate_limit(gh: FakeGitHub) -> None:
    rl = client(gh).get_rate_limit()
    assert rl.resources.core.limit == 5000 and rl.resources.core.remaining > 0


# -- users, repositories, permissions -----------------------------------------------------------------------


def test_users(gh: FakeGitHub) -> None:
    g = client(gh)
    me = g.get_user()
    assert (me.login, me.type) == ("alice", "User")
    bot = g.get_user("github-actions[bot]")
    assert (bot.login, bot.type) == ("github-actions[bot]", "Bot")
    with pytest.raises(github.UnknownObjectException):
        _ = g.get_user("nobody").login
    with pytest.raises(github.GithubException) as e:
        _ = client(gh, "tok-actions").get_user().login
    assert e.value.status == 403 and e.value.data["message"] == "Resource not accessible by integration"


def test_repo(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(REPO)
    assert (repo.name, repo.full_name, repo.owner.login, repo.default_branch) == ("bench", REPO, "acme", "main")
    assert repo.private is False and repo.html_url.endswith("/acme/bench")
    assert repo.permissions.push and not repo.permissions.admin
    with pytest.raises(github.UnknownObjectException):
        client(gh).get_repo("acme/none")


@pytest.mark.parametrize(("role", "legacy"), [("admin", "admin"), ("maintain", "write"), ("write", "write"),
                                              ("triage", "read"), ("read", "read"), ("none", "none")])
def test_permission(gh: FakeGitHub, role: str, legacy: str) -> None:
    gh.set_permission(REPO, "bob", role)
    repo = client(gh).get_repo(REPO)
    assert repo.get_collaborator_permission("bob") == legacy
    assert repo.get_collaborator_role_name("bob") == role


def test_permission_unset_and_unknown(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(REPO)
    assert repo.get_collaborator_permission("github-actions[bot]") == "none"
    assert repo.get_collaborator_permission("acme") == "admin"  # the owner
    with pytest.raises(github.UnknownObjectException):
        repo.get_collaborator_permission("stranger")
    assert repo.has_in_collaborators("alice") and not repo.has_in_collaborators("bob")


# -- pull requests and issues ----------------------------------------------------------------------------


def test_pull_and_files(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    assert (pr.number, pr.state, pr.draft, pr.title, pr.user.login) == (7, "open", False, "Add runner", "bob")
    assert (pr.head.sha, pr.head.ref, pr.head.label, pr.head.repo.full_name) == (HEAD, "feat", "acme:feat", REPO)
    assert (pr.base.sha, pr.base.ref) == (BASE, "main")
    assert pr.html_url.endswith("/acme/bench/pull/7") and pr.mergeable is None
    files = {f.filename: f for f in pr.get_files()}
    assert list(files) == ["runners/x.sh", "new.sh", "renamed.sh", "blob.bin"]
    x = files["runners/x.sh"]
    assert (x.status, x.additions, x.deletions, x.changes, x.patch) == ("modified", 3, 2, 5, PATCH)
    assert files["renamed.sh"].previous_filename == "old.sh"
    assert files["blob.bin"].patch is None and len(x.sha) == 40 and HEAD in x.blob_url
    assert [p.number for p in client(gh).get_repo(REPO).get_pulls()] == [7]
    assert [f["filename"] for f in gh.pull_files(REPO, 7)] == list(files)
    assert gh.pull_files(REPO, 7)[0]["patch"] == PATCH


def test_fork_pull_and_draft(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, 8, user="mallory", head_repo="mallory/bench", draft=True, files=[])
    pr = client(gh).get_repo(REPO).get_pull(8)
    assert pr.draft and pr.head.repo.full_name == "mallory/bench" and pr.head.label == "mallory:feature"
    assert pr.base.repo.full_name == REPO


def test_issue(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(REPO)
    issue = repo.get_issue(7)
    assert issue.pull_request is not None and issue.pull_request.html_url.endswith("/pull/7")
    gh.add_issue(REPO, 9, user="alice", title="bug")
    plain = repo.get_issue(9)
    assert plain.pull_request is None and plain.title == "bug"
    with pytest.raises(github.UnknownObjectException):
        repo.get_pull(9)
    with pytest.raises(github.UnknownObjectException):
        repo.get_issue(99)


# -- issue comments ------------------------------------------------------------------------------------------


def test_issue_comment_crud(gh: FakeGitHub) -> None:
    seeded = gh.add_issue_comment(REPO, 7, user="bob", body="/bench mi325x")
    pr = client(gh).get_repo(REPO).get_pull(7)
    c = pr.create_issue_comment("report")
    assert c.id > seeded["id"] and c.user.login == "alice" and c.body == "report"
    assert c.html_url.endswith(f"/pull/7#issuecomment-{c.id}")
    issue = client(gh).get_repo(REPO).get_issue(7)
    assert [x.body for x in issue.get_comments()] == ["/bench mi325x", "report"]
    got = issue.get_comment(c.id)
    got.edit("report v2")
    assert issue.get_comment(c.id).body == "report v2"
    assert [x["body"] for x in gh.issue_comments(REPO, 7)] == ["/bench mi325x", "report v2"]
    got.delete()
    with pytest.raises(github.UnknownObjectException):
        issue.get_comment(c.id)
    assert [x["id"] for x in gh.issue_comments(REPO, 7)] == [seeded["id"]]
    with pytest.raises(github.GithubException) as e:
        pr.create_issue_comment("x" * 65537)
    assert e.value.status == 422


def test_pagination_walks_250_comments(gh: FakeGitHub) -> None:
    for i in range(250):
        gh.add_issue_comment(REPO, 7, user="bob", body=f"c{i}")
    gh.clear_requests()
    g = client(gh, per_page=100)
    comments = list(g.get_repo(REPO).get_issue(7).get_comments())
    assert [c.body for c in comments] == [f"c{i}" for i in range(250)]
    pages = [r for r in gh.requests if r.path.endswith("/comments")]
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]
    assert all(r.query["per_page"] == "100" for r in pages)
    assert g.get_repo(REPO).get_issue(7).get_comments().totalCount == 250


def test_link_header(gh: FakeGitHub) -> None:
    for i in range(25):
        gh.add_issue_comment(REPO, 7, user="bob", body=f"c{i}")
    r = raw(gh, "GET", "/repos/acme/bench/issues/7/comments?per_page=10&page=2&since=2000-01-01T00:00:00Z")
    assert len(r.json()) == 10
    base = f"{gh.api_url}/repos/acme/bench/issues/7/comments?per_page=10"
    since = "since=2000-01-01T00%3A00%3A00Z"
    assert r.links["next"]["url"] == f"{base}&page=3&{since}"
    assert r.links["prev"]["url"] == f"{base}&page=1&{since}"
    assert r.links["last"]["url"] == f"{base}&page=3&{since}"
    assert r.links["first"]["url"] == f"{base}&page=1&{since}"
    first = raw(gh, "GET", "/repos/acme/bench/issues/7/comments?per_page=10")
    assert set(first.links) == {"next", "last"}
    assert "link" not in raw(gh, "GET", "/repos/acme/bench/issues/7/comments").headers  # 25 <= 30: one page


# -- reactions -------------------------------------------------------------------------------------------------


def test_comment_reactions(gh: FakeGitHub) -> None:
    seeded = gh.add_issue_comment(REPO, 7, user="bob", body="/bench mi325x")
    path = f"/repos/acme/bench/issues/comments/{seeded['id']}/reactions"
    first = raw(gh, "POST", path, json={"content": "eyes"})
    again = raw(gh, "POST", path, json={"content": "eyes"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert raw(gh, "POST", path, json={"content": "thumbsup"}).status_code == 422
    comment = client(gh).get_repo(REPO).get_issue(7).get_comment(seeded["id"])
    comment.create_reaction("rocket")
    assert sorted(r.content for r in comment.get_reactions()) == ["eyes", "rocket"]
    assert [r["content"] for r in gh.reactions_of_comment(REPO, seeded["id"])] == ["eyes", "rocket"]
    rollup = client(gh).get_repo(REPO).get_issue(7).get_comment(seeded["id"]).reactions
    assert (rollup["total_count"], rollup["eyes"], rollup["rocket"], rollup["heart"]) == (2, 1, 1, 0)
    assert comment.delete_reaction(first.json()["id"])
    assert [r["content"] for r in gh.reactions_of_comment(REPO, seeded["id"])] == ["rocket"]


def test_review_comment_reactions(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    pr.create_review(body="", event="COMMENT", comments=[{"path": "new.sh", "line": 1, "body": "x"}])
    c = pr.get_review_comments()[0]
    assert c.create_reaction("heart").content == "heart"
    assert [r.content for r in c.get_reactions()] == ["heart"]
    assert pr.get_review_comment(c.id).reactions["heart"] == 1


def test_issue_reactions(gh: FakeGitHub) -> None:
    issue = client(gh).get_repo(REPO).get_issue(7)
    r = issue.create_reaction("+1")
    assert r.content == "+1" and r.user.login == "alice"
    assert [x.content for x in issue.get_reactions()] == ["+1"]
    assert [x["content"] for x in gh.reactions_of_issue(REPO, 7)] == ["+1"]


# -- reviews and review comments ---------------------------------------------------------------------------------


def test_review_with_comments(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    review = pr.create_review(body="lint", event="COMMENT", comments=[
        {"path": "runners/x.sh", "line": 3, "body": "on new3"},
        {"path": "runners/x.sh", "line": 2, "side": "LEFT", "body": "on old2"},
        {"path": "runners/x.sh", "start_line": 2, "line": 3, "side": "RIGHT", "body": "range"},
        {"path": "new.sh", "position": 2, "body": "by position"},
    ])
    assert (review.state, review.body, review.commit_id, review.user.login) == ("COMMENTED", "lint", HEAD, "alice")
    comments = pr.get_review_comments()
    got = [(c.path, c.line, c.side, c.start_line, c.position, c.body) for c in comments]
    assert got == [
        ("runners/x.sh", 3, "RIGHT", None, 4, "on new3"),
        ("runners/x.sh", 2, "LEFT", None, 2, "on old2"),
        ("runners/x.sh", 3, "RIGHT", 2, 4, "range"),
        ("new.sh", 2, "RIGHT", None, 2, "by position"),
    ]
    first = comments[0]
    assert first.pull_request_review_id == review.id and first.in_reply_to_id is None
    assert (first.commit_id, first.original_commit_id, first.original_line) == (HEAD, HEAD, 3)
    assert first.diff_hunk == "@@ -1,3 +1,4 @@\n ctx1\n-old2\n+new2\n+new3"
    assert first.subject_type == "line"
    assert [r.id for r in pr.get_reviews()] == [review.id]
    assert pr.get_review(review.id).body == "lint"
    assert [c.body for c in pr.get_single_review_comments(review.id)] == ["on new3", "on old2", "range", "by position"]
    assert [c["line"] for c in gh.review_comments(REPO, 7)] == [3, 2, 3, 2]
    assert [r["state"] for r in gh.reviews(REPO, 7)] == ["COMMENTED"]


def test_review_comment_reply_edit_delete(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    pr.create_review(body="", event="COMMENT", comments=[{"path": "runners/x.sh", "line": 12, "body": "top"}])
    top = pr.get_review_comments()[0]
    reply = client(gh, "tok-bob").get_repo(REPO).get_pull(7).create_review_comment_reply(top.id, "answer")
    assert (reply.in_reply_to_id, reply.path, reply.line, reply.user.login) == (top.id, "runners/x.sh", 12, "bob")
    nested = pr.create_review_comment_reply(reply.id, "again")
    assert nested.in_reply_to_id == top.id  # replies to replies join the thread's root
    assert len(gh.reviews(REPO, 7)) == 3  # each reply is its own review, as on GitHub
    c = pr.get_review_comment(top.id)
    c.edit("top v2")
    assert pr.get_review_comment(top.id).body == "top v2"
    c.delete()
    with pytest.raises(github.UnknownObjectException):
        pr.get_review_comment(top.id)
    assert [x["body"] for x in gh.review_comments(REPO, 7)] == ["answer", "again"]


def test_single_review_comment(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    commit = client(gh).get_repo(REPO).get_pull(7).head.sha
    r = raw(gh, "POST", "/repos/acme/bench/pulls/7/comments",
            json={"body": "one", "commit_id": commit, "path": "new.sh", "line": 1})
    assert r.status_code == 201 and r.json()["line"] == 1
    assert [c.body for c in pr.get_review_comments()] == ["one"]


def _unprocessable(gh: FakeGitHub, **kw: Any) -> dict[str, Any]:
    pr = client(gh).get_repo(REPO).get_pull(7)
    with pytest.raises(github.GithubException) as e:
        pr.create_review(**kw)
    assert e.value.status == 422
    data: dict[str, Any] = e.value.data
    return data


def test_review_validation(gh: FakeGitHub) -> None:
    not_in_diff = {"message": "Unprocessable Entity",
                   "errors": ["Pull request review thread line must be part of the diff"],
                   "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"}
    assert _unprocessable(gh, body="b", event="COMMENT",
                          comments=[{"path": "runners/x.sh", "line": 8, "body": "x"}]) == not_in_diff
    assert _unprocessable(gh, body="b", event="COMMENT",  # line 12 exists on the RIGHT side only
                          comments=[{"path": "runners/x.sh", "line": 12, "side": "LEFT", "body": "x"}]) == not_in_diff
    assert _unprocessable(gh, body="b", event="COMMENT",
                          comments=[{"path": "blob.bin", "line": 1, "body": "x"}]) == not_in_diff
    assert _unprocessable(gh, body="b", event="COMMENT", comments=[
        {"path": "new.sh", "line": 1, "body": "fine"}, {"path": "other.sh", "line": 1, "body": "x"}
    ])["errors"] == ["Path could not be resolved"]
    assert "same hunk" in _unprocessable(gh, body="b", event="COMMENT", comments=[
        {"path": "runners/x.sh", "start_line": 2, "line": 12, "body": "x"}])["errors"][0]
    assert _unprocessable(gh, body="", event="COMMENT", comments=[])["message"] == "Unprocessable Entity"
    assert _unprocessable(gh, event="REQUEST_CHANGES")["message"] == "Unprocessable Entity"
    assert gh.reviews(REPO, 7) == [] and gh.review_comments(REPO, 7) == []
    bad_commit = raw(gh, "POST", "/repos/acme/bench/pulls/7/reviews",
                     json={"commit_id": "c" * 40, "body": "b", "event": "COMMENT"})
    assert bad_commit.status_code == 422
    own = raw(gh, "POST", "/repos/acme/bench/pulls/7/reviews", token="tok-bob", json={"event": "APPROVE"})
    assert own.status_code == 422
    assert client(gh).get_repo(REPO).get_pull(7).create_review(event="APPROVE").state == "APPROVED"


def test_push_new_head(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    pr.create_review(body="", event="COMMENT", comments=[
        {"path": "runners/x.sh", "line": 3, "body": "stays"}, {"path": "new.sh", "line": 1, "body": "outdated"}])
    new_files = [FILES[0], {"filename": "new.sh", "status": "added", "patch": "@@ -0,0 +1 @@\n+z"}]
    gh.push(REPO, 7, head_sha="c" * 40, files=new_files)
    pr = client(gh).get_repo(REPO).get_pull(7)
    assert pr.head.sha == "c" * 40 and [f.filename for f in pr.get_files()] == ["runners/x.sh", "new.sh"]
    stays, outdated = gh.review_comments(REPO, 7)
    assert (stays["commit_id"], stays["original_commit_id"], stays["line"]) == ("c" * 40, HEAD, 3)
    assert (outdated["commit_id"], outdated["line"], outdated["original_line"]) == (HEAD, None, 1)
    # an earlier head is still a valid commit_id; the new patch is what is validated
    ok = raw(gh, "POST", "/repos/acme/bench/pulls/7/reviews",
             json={"commit_id": HEAD, "body": "old head", "event": "COMMENT"})
    assert ok.status_code == 200 and ok.json()["commit_id"] == HEAD
    assert _unprocessable(gh, body="b", event="COMMENT",
                          comments=[{"path": "new.sh", "line": 2, "body": "x"}])["message"] == "Unprocessable Entity"
    sync = gh.event_pull_request(REPO, 7, action="synchronize")
    assert (sync["before"], sync["after"]) == (HEAD, "c" * 40)


# -- actions ---------------------------------------------------------------------------------------------------


def test_workflows(gh: FakeGitHub) -> None:
    gh.add_workflow(REPO, id=102, path=".github/workflows/nightly.yml", name="Nightly")
    repo = client(gh).get_repo(REPO)
    assert [(w.id, w.name) for w in repo.get_workflows()] == [(101, "End-to-end tests"), (102, "Nightly")]
    assert repo.get_workflows().totalCount == 2
    assert repo.get_workflow(101).path == ".github/workflows/e2e-tests.yml"
    assert repo.get_workflow("e2e-tests.yml").id == 101
    with pytest.raises(github.UnknownObjectException):
        _ = repo.get_workflow("missing.yml").name


def test_dispatch_creates_run(gh: FakeGitHub) -> None:
    gh.run_title = lambda inputs: f"bench {inputs.get('sku', '?')}"
    wf = client(gh, "tok-actions").get_repo(REPO).get_workflow("e2e-tests.yml")
    assert wf.create_dispatch("main", {"sku": "mi325x", "pr": "7"}) is True
    assert gh.dispatches(REPO) == [{"workflow_id": 101, "ref": "main", "inputs": {"sku": "mi325x", "pr": "7"}}]
    (run,) = gh.runs(REPO)
    assert (run["name"], run["display_title"], run["event"], run["status"]) == (
        "End-to-end tests", "bench mi325x", "workflow_dispatch", "queued")
    assert (run["head_branch"], run["workflow_id"], run["actor"]["login"]) == ("main", 101, "github-actions[bot]")
    assert run["html_url"].endswith(f"/acme/bench/actions/runs/{run['id']}")
    details = wf.create_dispatch("refs/pull/7/head", {}, throw=True, return_run_details=True)
    assert details.id > run["id"] and gh.runs(REPO)[-1]["head_sha"] == HEAD
    gh.update_run(REPO, run["id"], status="completed", conclusion="success")
    assert client(gh).get_repo(REPO).get_workflow_run(run["id"]).conclusion == "success"


def test_dispatch_errors(gh: FakeGitHub) -> None:
    base = "/repos/acme/bench/actions/workflows"
    assert raw(gh, "POST", f"{base}/nope.yml/dispatches", json={"ref": "main"}).status_code == 404
    assert raw(gh, "POST", f"{base}/101/dispatches", json={}).status_code == 422
    assert raw(gh, "POST", f"{base}/101/dispatches", json={"ref": "main", "inputs": {"n": 1}}).status_code == 422
    nested = {"ref": "main", "inputs": {"n": {"a": "b"}}}
    assert raw(gh, "POST", f"{base}/101/dispatches", json=nested).status_code == 422
    assert raw(gh, "POST", f"{base}/101/dispatches", json={"ref": "main", "inputs": []}).status_code == 422
    gh.add_workflow(REPO, id=103, path=".github/workflows/typed.yml", inputs=["sku"])
    assert raw(gh, "POST", f"{base}/103/dispatches", json={"ref": "main", "inputs": {"x": "1"}}).status_code == 422
    assert not client(gh).get_repo(REPO).get_workflow(101).create_dispatch("main", {"n": 1})
    assert gh.dispatches(REPO) == [] and gh.runs(REPO) == []
    ok = raw(gh, "POST", f"{base}/103/dispatches", json={"ref": "main", "inputs": {"sku": "a"}})
    assert ok.status_code == 204 and ok.content == b""


def test_runs_filters(gh: FakeGitHub) -> None:
    from datetime import UTC, datetime, timedelta

    t = [datetime(2026, 12, 3, 4, 0, tzinfo=UTC)]
    gh.clock = lambda: t[0]
    gh.add_workflow(REPO, id=102, path=".github/workflows/nightly.yml", name="Nightly")
    repo = client(gh).get_repo(REPO)
    for hour, wf, ref in ((4, 101, "main"), (5, 101, "feat"), (6, 102, "main")):
        t[0] = datetime(2026, 12, 3, hour, 0, tzinfo=UTC)
        assert repo.get_workflow(wf).create_dispatch(ref)
    t[0] += timedelta(hours=1)
    runs = list(repo.get_workflow_runs())
    assert [r.created_at.hour for r in runs] == [6, 5, 4]  # newest first
    on_main = repo.get_workflow_runs(branch="main")  # type: ignore[arg-type]
    assert [r.head_branch for r in on_main] == ["main", "main"]
    assert len(list(repo.get_workflow_runs(event="workflow_dispatch"))) == 3
    assert list(repo.get_workflow_runs(event="push")) == []
    assert [r.created_at.hour for r in repo.get_workflow_runs(created=">=2026-12-03T05:00:00Z")] == [6, 5]
    assert [r.created_at.hour for r in repo.get_workflow_runs(created="<2026-12-03T05:00:00Z")] == [4]
    assert len(list(repo.get_workflow_runs(created="2026-12-03"))) == 3
    assert list(repo.get_workflow_runs(created="2026-12-02")) == []
    range_ = "2026-12-03T04:30:00Z..2026-12-03T05:00:00Z"
    assert [r.created_at.hour for r in repo.get_workflow_runs(created=range_)] == [5]
    assert len(list(repo.get_workflow_runs(head_sha=runs[0].head_sha))) == 2
    assert [r.name for r in repo.get_workflow(101).get_runs()] == ["End-to-end tests"] * 2
    assert repo.get_workflow_runs().totalCount == 3
    page = raw(gh, "GET", "/repos/acme/bench/actions/runs?per_page=2")
    assert page.json()["total_count"] == 3 and len(page.json()["workflow_runs"]) == 2 and "next" in page.links


def test_repository_dispatch(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(REPO)
    assert repo.create_repository_dispatch("bench", {"pr": 7}) is True
    assert gh.repository_dispatches(REPO) == [{"event_type": "bench", "client_payload": {"pr": 7}}]
    assert raw(gh, "POST", "/repos/acme/bench/dispatches", json={}).status_code == 422


# -- tokens, faults, retries ------------------------------------------------------------------------------------


def test_read_only_token(gh: FakeGitHub) -> None:
    g = client(gh, "tok-ro")
    pr = g.get_repo(REPO).get_pull(7)  # reads work
    with pytest.raises(github.GithubException) as e:
        pr.create_issue_comment("x")
    assert e.value.status == 403 and e.value.data["message"] == "Resource not accessible by integration"
    assert not g.get_repo(REPO).get_workflow(101).create_dispatch("main")
    assert gh.issue_comments(REPO, 7) == [] and gh.dispatches(REPO) == []
    assert [(w.method, w.status) for w in gh.writes()] == [("POST", 403), ("POST", 403)]
    assert gh.writes(succeeded=True) == []


def test_fault_surfaces_without_retry(gh: FakeGitHub) -> None:
    gh.fail("POST", r"/repos/acme/bench/issues/\d+/comments", status=502, times=2)
    pr = client(gh).get_repo(REPO).get_pull(7)
    for _ in range(2):
        with pytest.raises(github.GithubException) as e:
            pr.create_issue_comment("x")
        assert e.value.status == 502 and e.value.data == {"message": "Server Error"}
    assert gh.issue_comments(REPO, 7) == [] and gh.writes() == []
    pr.create_issue_comment("x")
    assert [r.status for r in gh.requests if r.method == "POST"] == [502, 502, 201]
    assert [r.faulted for r in gh.requests if r.method == "POST"] == [True, True, False]
    (w,) = gh.writes()
    assert (w.path, w.body, w.token, w.status) == ("/repos/acme/bench/issues/7/comments", {"body": "x"}, "tok-alice",
                                                   201)


def test_fault_fullmatch_and_custom_body(gh: FakeGitHub) -> None:
    gh.fail("GET", r"/repos/acme/bench", status=404, body={"message": "gone"})
    gh.fail("*", r"/user", status=500, body="<html>oops</html>")
    r = raw(gh, "GET", "/repos/acme/bench/pulls/7")  # the fault must match the whole path
    assert r.status_code == 200
    assert raw(gh, "GET", "/repos/acme/bench").json() == {"message": "gone"}
    html = raw(gh, "GET", "/user")
    assert html.status_code == 500 and html.text == "<html>oops</html>"
    assert raw(gh, "GET", "/user").status_code == 200


def _scenario(gh: FakeGitHub, retry: github.GithubRetry | None) -> None:
    g = client(gh, retry=retry)
    pr = g.get_repo(REPO).get_pull(7)
    pr.create_review(body="lint", event="COMMENT", comments=[{"path": "new.sh", "line": 2, "body": "x"}])
    pr.create_issue_comment("summary")


def _normalized(gh: FakeGitHub) -> Any:
    def strip(d: dict[str, Any]) -> dict[str, Any]:
        drop = {"id", "node_id", "url", "html_url", "created_at", "updated_at", "submitted_at", "_links",
                "pull_request_review_id", "user", "reactions"}
        return {k: v for k, v in d.items() if k not in drop and not k.endswith("url")}

    return ([strip(c) for c in gh.issue_comments(REPO, 7)], [strip(r) for r in gh.reviews(REPO, 7)],
            [strip(c) for c in gh.review_comments(REPO, 7)])


def test_retry_survives_502_and_primary_rate_limit() -> None:
    with FakeGitHub() as clean:
        setup(clean)
        _scenario(clean, None)
        expected = _normalized(clean)
    with FakeGitHub() as gh:
        setup(gh)
        gh.fail("POST", r"/repos/acme/bench/pulls/\d+/reviews", status=502, times=1)
        gh.fail("GET", r"/repos/acme/bench/pulls/7", status=403, times=1,
                headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 1)},
                body={"message": "API rate limit exceeded for installation ID 1.",
                      "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
        retry = github.GithubRetry(total=3, backoff_factor=0.01, status_forcelist=list(range(500, 600)) + [429])
        _scenario(gh, retry)
        assert _normalized(gh) == expected
        faulted = [(r.method, r.status) for r in gh.requests if r.faulted]
        assert faulted == [("GET", 403), ("POST", 502)]
        assert len([r for r in gh.writes() if r.path.endswith("/reviews")]) == 1


def test_retry_after_429_and_secondary_rate_limit(gh: FakeGitHub) -> None:
    gh.fail("GET", r"/repos/acme/bench", status=429, headers={"Retry-After": "0"})
    gh.fail("POST", r"/repos/acme/bench/issues/7/comments", status=403, headers={"Retry-After": "0"},
            body={"message": "You have exceeded a secondary rate limit."})
    retry = github.GithubRetry(total=3, backoff_factor=0.01, status_forcelist=list(range(500, 600)) + [429])
    client(gh, retry=retry).get_repo(REPO).get_pull(7).create_issue_comment("ok")
    assert [c["body"] for c in gh.issue_comments(REPO, 7)] == ["ok"]
    assert [r.status for r in gh.requests] == [429, 200, 200, 403, 201]


# -- events and concurrency -------------------------------------------------------------------------------------


def test_event_payloads(gh: FakeGitHub) -> None:
    ev = gh.event_pull_request(REPO, 7, action="opened", sender="bob")
    assert ev["action"] == "opened" and ev["number"] == 7
    pr = ev["pull_request"]
    assert (pr["number"], pr["head"]["sha"], pr["head"]["ref"], pr["head"]["repo"]["full_name"]) == (
        7, HEAD, "feat", REPO)
    assert (pr["base"]["sha"], pr["base"]["ref"], pr["user"]["login"], pr["user"]["type"]) == (
        BASE, "main", "bob", "User")
    assert pr["draft"] is False and pr["state"] == "open" and pr["title"] == "Add runner" and pr["html_url"]
    assert ev["repository"]["full_name"] == REPO and ev["repository"]["owner"]["login"] == "acme"
    assert ev["repository"]["default_branch"] == "main" and ev["repository"]["name"] == "bench"
    assert ev["sender"] == {**ev["sender"], "login": "bob", "type": "User"}
    comment = gh.add_issue_comment(REPO, 7, user="alice", body="/bench mi325x")
    ic = gh.event_issue_comment(REPO, 7, comment)
    assert ic["action"] == "created" and ic["issue"]["number"] == 7 and "url" in ic["issue"]["pull_request"]
    c = ic["comment"]
    assert (c["id"], c["body"], c["user"]["login"], c["user"]["type"]) == (comment["id"], "/bench mi325x", "alice",
                                                                            "User")
    assert c["author_association"] == "COLLABORATOR" and c["html_url"] and ic["sender"]["login"] == "alice"
    assert ic["repository"]["full_name"] == REPO


def test_concurrent_writes_get_unique_ids(gh: FakeGitHub) -> None:
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            pr = client(gh).get_repo(REPO).get_pull(7)
            for i in range(5):
                pr.create_issue_comment(f"{n}-{i}")
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    ids = [c["id"] for c in gh.issue_comments(REPO, 7)]
    assert len(ids) == 20 and ids == sorted(set(ids))


def test_unset_not_sent(gh: FakeGitHub) -> None:
    pr = client(gh).get_repo(REPO).get_pull(7)
    pr.create_review(body="x", event="COMMENT", commit=NotSet)
    (w,) = gh.writes()
    assert w.body == {"body": "x", "event": "COMMENT", "comments": []}
