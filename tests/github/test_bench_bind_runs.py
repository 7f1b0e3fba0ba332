"""``/bench`` bound by the repository's workflow runs, end to end (the real PyGithub stack, the fake
GitHub with an ``on: pull_request`` review workflow, so every push gets a run at server time, real
git repos): a plain push is proven by its run; a force push back before the comment, a push after
it, a run from another fork's branch, unreadable runs and more than a page of runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.cli import main
from bot.github import bind, comments
from tests.conftest import git
from tests.github.commenting import _comment, _replies, _run, _setup
from tests.github.conftest import PR, REPO, pr_files

REVIEW = ".github/workflows/benchbot-review.yml"
MI325X = "kimik2.5-int4-mi325x-vllm"


def _at(pr: PR, minutes_ago: float) -> None:
    pr.gh.clock = lambda: datetime.now(UTC) - timedelta(minutes=minutes_ago)


def _now(pr: PR) -> None:
    pr.gh.clock = lambda: datetime.now(UTC)


def _commit(pr: PR, old: str, new: str) -> str:
    """A new commit on the PR's branch (``conc``) replacing ``old`` with ``new`` in the config."""
    git(pr.repo, "checkout", "-q", "conc")
    cfg = pr.repo / "configs/amd-master.yaml"
    text = cfg.read_text()
    start = text.index(f"{MI325X}:")
    cfg.write_text(text[:start] + text[start:].replace(old, new, 1))
    git(pr.repo, "commit", "-qam", f"{old} -> {new}")
    sha = git(pr.repo, "rev-parse", "HEAD").strip()
    git(pr.repo, "checkout", "-q", "main")
    return sha


def _push(pr: PR, sha: str, **kw: Any) -> None:
    pr.gh.push(REPO, pr.number, head_sha=sha, files=pr_files(pr.repo, pr.base, sha), **kw)
    pr.head = sha


def _answer(pr: PR, cid: int) -> str:
    [body] = [b for b in _replies(pr) if comments.reply_marker(cid) in b]
    return body


@pytest.fixture
def runs_pr(seed_pr: PR) -> PR:
    """PR #9 (branch ``conc``, head A changing one MI325X entry) opened 30 minutes ago in a repository
    whose review workflow runs on ``pull_request``; no force push on its timeline."""
    pr = seed_pr
    pr.gh.add_workflow(REPO, path=REVIEW, name="benchbot review", dispatchable=False, on_pull_request=True)
    git(pr.repo, "checkout", "-q", "-B", "main", pr.head)
    pr.base = pr.head
    git(pr.repo, "checkout", "-q", "-b", "conc")
    git(pr.repo, "checkout", "-q", "main")
    a = _commit(pr, "conc-end: 64 }", "conc-end: 128 }")
    _at(pr, 30)
    pr.gh.add_pull(REPO, number=9, head_sha=a, base_sha=pr.base, head_ref="conc", base_ref="main", user="alice",
                   title="conc", files=pr_files(pr.repo, pr.base, a))
    _now(pr)
    pr.number, pr.head = 9, a
    _setup(pr)
    return pr


def test_a_plain_push_is_bound_by_its_run(runs_pr: PR) -> None:
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _at(runs_pr, 10)
    _push(runs_pr, h)  # a plain push: the timeline has no server time for it, the run has
    _now(runs_pr)
    [review_run] = [r for r in runs_pr.gh.runs(REPO) if r["event"] == "pull_request" and r["head_sha"] == h]
    assert review_run["head_branch"] == "conc" and review_run["head_repository"]["full_name"] == REPO
    code, cid = _run(runs_pr, "/bench mi325x")
    assert code == 0
    [d] = runs_pr.gh.dispatches(REPO)
    assert d["inputs"]["ref"] == h and "the head when you commented" in _answer(runs_pr, cid)


@pytest.mark.parametrize("skip_runs", [True, False])
def test_force_push_back_then_fast_forward_after_the_comment_is_refused(runs_pr: PR, skip_runs: bool) -> None:
    """Push H (its run), force-push back to A, the maintainer comments seeing A, the author
    fast-forwards to H after the comment: with a run for it, or none (the PR edited the review
    workflow's trigger away): the latest server-timed push before the comment is the one to A."""
    a = runs_pr.head
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _at(runs_pr, 20)
    _push(runs_pr, h)
    _at(runs_pr, 10)
    _push(runs_pr, a, force=True)
    _now(runs_pr)
    cid, _ = _comment(runs_pr, "/bench mi325x", "maint")  # the maintainer reviewed A
    _push(runs_pr, h, skip_runs=skip_runs)
    assert main(["event"]) == 0
    assert runs_pr.gh.dispatches(REPO) == []
    answer = _answer(runs_pr, cid)
    assert f"@{h}" in answer
    assert (f"`{a[:12]}`" in answer) if skip_runs else ("after your comment" in answer)


def test_a_push_after_the_comment_is_refused_by_its_run(runs_pr: PR) -> None:
    """The comment is written while A is the head (its run proves it); a plain push lands before the
    commands workflow reads the PR: its run is at or after the comment."""
    cid, _ = _comment(runs_pr, "/bench mi325x")
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _push(runs_pr, h)
    assert main(["event"]) == 0
    assert runs_pr.gh.dispatches(REPO) == []
    answer = _answer(runs_pr, cid)
    assert "workflow run after your comment" in answer and f"@{h}" in answer


def test_a_run_for_the_head_from_another_fork_does_not_count(runs_pr: PR) -> None:
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _at(runs_pr, 10)  # mallory opens a PR with the same commit from her fork's branch of the same name
    runs_pr.gh.add_user("mallory")
    runs_pr.gh.add_pull(REPO, number=10, head_sha=h, base_sha=runs_pr.base, head_ref="conc", base_ref="main",
                        user="mallory", head_repo="mallory/bench", files=pr_files(runs_pr.repo, runs_pr.base, h))
    _at(runs_pr, 5)
    _push(runs_pr, h, skip_runs=True)  # PR #9 gets H with no run of its own
    _now(runs_pr)
    assert [r["head_repository"]["full_name"] for r in runs_pr.gh.runs(REPO) if r["head_sha"] == h] == ["mallory/bench"]
    _, cid = _run(runs_pr, "/bench mi325x")
    assert runs_pr.gh.dispatches(REPO) == []
    answer = _answer(runs_pr, cid)
    assert "no server time" in answer and f"`/bench mi325x @{h}`" in answer


def test_unreadable_runs_refuse_a_plain_push_but_not_a_force_push(runs_pr: PR) -> None:
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _at(runs_pr, 10)
    _push(runs_pr, h)
    _now(runs_pr)
    runs_pr.gh.fail("GET", r"/repos/acme/bench/actions/runs", status=500, times=50)
    _, cid = _run(runs_pr, "/bench mi325x")
    assert runs_pr.gh.dispatches(REPO) == []
    answer = _answer(runs_pr, cid)
    assert "workflow runs could not be read" in answer and f"@{h}" in answer
    # the timeline alone still proves a force-pushed head
    h2 = _commit(runs_pr, "conc-end: 256 }", "conc-end: 512 }")
    _at(runs_pr, 5)
    _push(runs_pr, h2, force=True)
    _now(runs_pr)
    _, cid = _run(runs_pr, "/bench mi325x")
    [d] = runs_pr.gh.dispatches(REPO)
    assert d["inputs"]["ref"] == h2 and "the head when you commented" in _answer(runs_pr, cid)


def test_one_page_of_runs_is_read(runs_pr: PR) -> None:
    """150 runs for the head (150 ``pull_request`` workflows): the bot reads the API's first page of
    100, newest first, and no more."""
    for i in range(149):
        runs_pr.gh.add_workflow(REPO, path=f".github/workflows/ci-{i}.yml", on_pull_request=True)
    h = _commit(runs_pr, "conc-end: 128 }", "conc-end: 256 }")
    _at(runs_pr, 10)
    _push(runs_pr, h)
    _now(runs_pr)
    assert sum(r["head_sha"] == h for r in runs_pr.gh.runs(REPO)) == 150
    runs_pr.gh.clear_requests()
    _run(runs_pr, "/bench mi325x")
    [d] = runs_pr.gh.dispatches(REPO)
    assert d["inputs"]["ref"] == h
    reads = [r for r in runs_pr.gh.requests if r.method == "GET" and r.path == "/repos/acme/bench/actions/runs"]
    assert [(r.query.get("head_sha"), r.query.get("per_page")) for r in reads] == [(h, str(bind.MAX_RUNS))]
    assert not [r for r in runs_pr.gh.requests if r.path.startswith("/repos/acme/bench/actions/runs/")]
