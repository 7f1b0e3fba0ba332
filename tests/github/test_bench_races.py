"""Exactly one dispatch per ``/bench`` comment: two real ``python -m bot event`` processes on one
delivery against a slow fake GitHub, and runs of the bot that died between claim and answer."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from bot.github import claim
from tests.conftest import ROOT
from tests.github.commenting import (
    _comment,
    _reactions,
    _replies,
    _run,
)
from tests.github.conftest import ACTIONS_BOT, PR, REPO

TRIALS = 3


def _env(pr: PR, event: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BENCHBOT_"))}
    env.update({"GITHUB_API_URL": pr.gh.api_url, "GITHUB_TOKEN": "tok-actions", "GITHUB_REPOSITORY": REPO,
                "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": event,
                "GITHUB_WORKSPACE": str(pr.repo), "BENCHBOT_GITHUB_BACKOFF": "0.01",
                "BENCHBOT_GITHUB_WRITE_INTERVAL": "0", "PYTHONPATH": str(ROOT)})
    return env


def test_two_processes_on_one_delivery_dispatch_once(entry_pr: PR) -> None:
    # 0.5 s on every conversation read and write (comments, reactions, timeline) and on the dispatch:
    # both processes see "not answered yet" and race to claim.
    entry_pr.gh.slow("*", r"/repos/acme/bench/issues/.*", 0.5)
    entry_pr.gh.slow("POST", r"/repos/acme/bench/actions/workflows/[^/]+/dispatches", 0.5)
    for trial in range(TRIALS):
        cid, _ = _comment(entry_pr, "/bench mi325x")
        event = str(entry_pr.tmp / f"comment-{cid}.json")
        procs = [subprocess.Popen([sys.executable, "-m", "bot", "event"], env=_env(entry_pr, event), cwd=str(ROOT),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        logs = [p.communicate(timeout=120) for p in procs]  # a hang guard, not a timing assertion
        assert [p.returncode for p in procs] == [0, 0], logs
        assert len(entry_pr.gh.dispatches(REPO)) == trial + 1, logs
        mine = [b for b in _replies(entry_pr) if claim.reply_marker(cid) in b]
        assert len(mine) == 1 and "Dispatched 1 entry" in mine[0] and claim.claim_marker(cid) not in mine[0], logs
        stderr = "".join(err for _, err in logs)
        assert "claimed comment" in stderr or "answered already" in stderr or "being answered" in stderr, logs
        assert _reactions(entry_pr, cid) == ["eyes", "rocket"]


def _dead_claim(pr: PR, cid: int, minutes: int, dispatching: str | None = None) -> int:
    """A claim left by a run of the bot that died ``minutes`` ago."""
    pr.gh.clock = lambda: datetime.now(UTC) - timedelta(minutes=minutes)
    hidden = claim.dispatching_marker(dispatching) if dispatching else ""
    c = pr.gh.add_issue_comment(REPO, pr.number, user=ACTIONS_BOT,
                                body=f"{claim.reply_marker(cid)}{claim.claim_marker(cid)}{hidden}\n{claim.WORKING}")
    pr.gh.clock = lambda: datetime.now(UTC)
    return int(c["id"])


def _body(pr: PR, comment_id: int) -> str:
    return next(c["body"] for c in pr.gh.issue_comments(REPO, pr.number) if c["id"] == comment_id)


def test_a_fresh_claim_is_left_to_its_run(entry_pr: PR) -> None:
    from bot.cli import main

    cid, _ = _comment(entry_pr, "/bench mi325x")
    held = _dead_claim(entry_pr, cid, minutes=1)
    assert main(["event"]) == 0
    assert entry_pr.gh.dispatches(REPO) == [] and _body(entry_pr, held).endswith(claim.WORKING)


def test_a_run_that_died_before_dispatching_is_completed_not_retried(entry_pr: PR) -> None:
    from bot.cli import main

    cid, _ = _comment(entry_pr, "/bench mi325x")
    held = _dead_claim(entry_pr, cid, minutes=20)
    assert main(["event"]) == 0
    assert entry_pr.gh.dispatches(REPO) == []
    body = _body(entry_pr, held)
    assert "stopped before it dispatched anything" in body and claim.claim_marker(cid) not in body
    assert main(["event"]) == 0 and entry_pr.gh.dispatches(REPO) == []  # answered now
    assert "confused" in _reactions(entry_pr, cid)


def test_a_run_that_died_after_dispatching_is_completed_as_dispatched(entry_pr: PR) -> None:
    from bot.cli import main

    # the first run dispatched, then died: its run exists, its claim still says "dispatching"
    code, first = _run(entry_pr, "/bench mi325x")
    [run] = entry_pr.gh.runs(REPO)
    cid, _ = _comment(entry_pr, "/bench mi325x")
    title = run["display_title"]
    held = _dead_claim(entry_pr, cid, minutes=20, dispatching=title)
    assert main(["event"]) == 0
    assert len(entry_pr.gh.dispatches(REPO)) == 1
    body = _body(entry_pr, held)
    assert "Dispatched by an earlier run" in body and run["html_url"] in body
    # without a run to find (and no 🚀), it is completed as interrupted
    cid, _ = _comment(entry_pr, "/bench mi325x")
    held = _dead_claim(entry_pr, cid, minutes=20, dispatching="e2e Test - never started")
    assert main(["event"]) == 0
    assert len(entry_pr.gh.dispatches(REPO)) == 1 and "no such run can be found" in _body(entry_pr, held)



def test_a_failure_after_the_dispatch_does_not_invite_a_second_one(entry_pr: PR) -> None:
    from bot.cli import main

    # looking up the run (after the dispatch) fails every try
    entry_pr.gh.fail("GET", r"/repos/acme/bench/actions/workflows/[^/]+/runs", status=500, times=50)
    _, cid = _run(entry_pr, "/bench mi325x")
    assert len(entry_pr.gh.dispatches(REPO)) == 1
    [answer] = [b for b in _replies(entry_pr) if claim.reply_marker(cid) in b]
    assert "was dispatched, then this failed" in answer and "do not comment again" in answer
    assert "confused" in _reactions(entry_pr, cid)
    assert main(["event"]) == 0 and len(entry_pr.gh.dispatches(REPO)) == 1  # redelivered: answered


def test_a_process_killed_mid_dispatch_is_completed_by_the_next_run(entry_pr: PR) -> None:
    """A real crash: the bot is SIGKILLed while its dispatch is on the wire (the server still carries
    it out). The next delivery, once the claim is stale, dispatches nothing and completes the claim."""
    import time

    from bot.cli import main

    entry_pr.gh.slow("POST", r"/repos/acme/bench/actions/workflows/[^/]+/dispatches", 2.0)
    cid, _ = _comment(entry_pr, "/bench mi325x")
    entry_pr.gh.clock = lambda: datetime.now(UTC) - timedelta(minutes=20)  # the claim it makes is old at once
    proc = subprocess.Popen([sys.executable, "-m", "bot", "event"], cwd=str(ROOT),
                            env=_env(entry_pr, str(entry_pr.tmp / f"comment-{cid}.json")),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a hang guard only
        while not any("benchbot:dispatching" in b for b in _replies(entry_pr)) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the dispatch request is now waiting in the server
    finally:
        proc.kill()
        proc.wait(timeout=30)
    entry_pr.gh.clock = lambda: datetime.now(UTC)
    deadline = time.monotonic() + 30
    while not entry_pr.gh.dispatches(REPO) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(entry_pr.gh.dispatches(REPO)) == 1  # it landed although its sender died
    [held] = [b for b in _replies(entry_pr) if claim.reply_marker(cid) in b]
    assert claim.claim_marker(cid) in held  # left open by the dead run
    assert main(["event"]) == 0  # the redelivery
    assert len(entry_pr.gh.dispatches(REPO)) == 1
    [done] = [b for b in _replies(entry_pr) if claim.reply_marker(cid) in b]
    assert "Dispatched by an earlier run" in done and claim.claim_marker(cid) not in done
