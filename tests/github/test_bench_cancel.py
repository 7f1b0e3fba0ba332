"""``/bench status`` and ``/bench cancel`` through the real PyGithub stack against the fake GitHub:
only this pull request's runs, cancel exactly once per comment (also after a 502 that landed)."""

from __future__ import annotations

from bot.github import claim
from tests.github.commenting import _reactions, _replies, _run
from tests.github.conftest import PR, REPO


def _answer(pr: PR, cid: int) -> str:
    return next(b for b in _replies(pr) if claim.reply_marker(cid) in b)


def _dispatched(pr: PR) -> int:
    """One /bench on the PR, and the id of the run it started."""
    code, cid = _run(pr, "/bench mi325x")
    assert code == 0 and "Dispatched" in _answer(pr, cid)
    return int(pr.gh.runs(REPO)[-1]["id"])


def _other_pr_run(pr: PR) -> int:
    """A run of the same workflow that another pull request's command started (its own title)."""
    import github

    g = github.Github(auth=github.Auth.Token("tok-actions"), base_url=pr.gh.api_url, retry=None)
    g.get_repo(REPO).get_workflow("e2e-tests.yml").create_dispatch(
        "main", {"generate-cli-command": "x", "test-name": "benchbot #99 mi325x abc c1", "ref": "main"})
    return int(pr.gh.runs(REPO)[-1]["id"])


def test_status_lists_this_prs_runs_only(entry_pr: PR) -> None:
    mine = _dispatched(entry_pr)
    other = _other_pr_run(entry_pr)
    entry_pr.gh.update_run(REPO, mine, status="in_progress")
    code, cid = _run(entry_pr, "/bench status")
    text = _answer(entry_pr, cid)
    assert code == 0 and "Benchmark runs started on this pull request (1)" in text
    assert f"/actions/runs/{mine})" in text and "`in_progress`" in text and f"/runs/{other})" not in text
    assert _reactions(entry_pr, cid) == ["eyes", "rocket"]


def test_cancel_cancels_this_prs_running_runs_and_not_others(entry_pr: PR) -> None:
    mine = _dispatched(entry_pr)
    other = _other_pr_run(entry_pr)
    code, cid = _run(entry_pr, "/bench cancel")
    assert code == 0
    runs = {r["id"]: r for r in entry_pr.gh.runs(REPO)}
    assert (runs[mine]["status"], runs[mine]["conclusion"]) == ("completed", "cancelled")
    assert runs[other]["status"] == "queued"
    assert "Cancelled 1 benchmark run:" in _answer(entry_pr, cid)
    cancels = [r for r in entry_pr.gh.writes() if r.path.endswith("/cancel")]
    assert [r.path for r in cancels] == [f"/repos/{REPO}/actions/runs/{mine}/cancel"]
    # a second cancel: nothing is running any more
    code, cid2 = _run(entry_pr, "/bench cancel")
    assert code == 0 and "Nothing to cancel" in _answer(entry_pr, cid2)
    assert len([r for r in entry_pr.gh.writes() if r.path.endswith("/cancel")]) == 1


def test_cancel_after_a_502_that_landed_is_not_an_error(entry_pr: PR) -> None:
    mine = _dispatched(entry_pr)
    entry_pr.gh.fail("POST", rf"/repos/acme/bench/actions/runs/{mine}/cancel", 502, after=True)
    code, cid = _run(entry_pr, "/bench cancel")
    assert code == 0, _replies(entry_pr)
    run = next(r for r in entry_pr.gh.runs(REPO) if r["id"] == mine)
    assert run["conclusion"] == "cancelled"
    text = _answer(entry_pr, cid)
    assert "had finished already" in text or "Cancelled 1" in text


def test_a_redelivered_cancel_is_answered_once(entry_pr: PR) -> None:
    from bot.cli import main

    _dispatched(entry_pr)
    code, cid = _run(entry_pr, "/bench cancel")
    before = len(entry_pr.gh.writes())
    assert main(["event"]) == 0  # the same event file again
    assert len(entry_pr.gh.writes()) == before
    assert len([b for b in _replies(entry_pr) if claim.reply_marker(cid) in b]) == 1


def test_a_reader_cannot_cancel(entry_pr: PR) -> None:
    mine = _dispatched(entry_pr)
    code, cid = _run(entry_pr, "/bench cancel", user="reader")
    assert code == 0 and "need write access" in _answer(entry_pr, cid)
    assert next(r for r in entry_pr.gh.runs(REPO) if r["id"] == mine)["status"] == "queued"


def test_help_ends_with_a_reaction_and_uses_the_repositorys_labels(entry_pr: PR) -> None:
    code, cid = _run(entry_pr, "/help")
    text = _answer(entry_pr, cid)
    assert code == 0 and _reactions(entry_pr, cid) == ["eyes", "rocket"]
    assert "`/bench cancel`" in text and "--yes" in text
    # the seed's first runner label
    assert "Example: `/bench mi300x --force @5ca31cc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6`" in text
