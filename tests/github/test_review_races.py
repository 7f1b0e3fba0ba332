"""Exactly once under races: real ``python -m bot event`` processes for one pull_request event at
the same time, against the fake GitHub with latency on every request (the real PyGithub stack),
and the runs after a race (duplicates left behind, claims of runs that died)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.github import once, review
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.github.conftest import ACTIONS_BOT, PR, REPO, pr_files

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 0.5  # seconds before every request is served: runs interleave as over a slow network
MARKER = "<!-- benchbot:finding "


def _spawn(pr: PR, number: int, action: str, run: str) -> subprocess.Popen[str]:
    event = pr.gh.event_pull_request(REPO, number, action=action, sender="alice")
    path = pr.tmp / f"event-{run}.json"
    path.write_text(json.dumps(event))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BENCHBOT_"))}
    env.update({"GITHUB_API_URL": pr.gh.api_url, "GITHUB_TOKEN": "tok-actions", "GITHUB_REPOSITORY": REPO,
                "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path),
                "GITHUB_WORKSPACE": str(pr.repo), "GITHUB_STEP_SUMMARY": str(pr.tmp / f"summary-{run}.md"),
                "GITHUB_RUN_ID": run, "GITHUB_RUN_ATTEMPT": "1", "BENCHBOT_GITHUB_BACKOFF": "0.01",
                "BENCHBOT_GITHUB_WRITE_INTERVAL": "0", "BENCHBOT_GITHUB_MAX_WAIT": "3"})
    return subprocess.Popen([sys.executable, "-m", "bot", "event"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _race(pr: PR, number: int, action: str, runs: tuple[str, str], stagger: float) -> list[tuple[int, str]]:
    """Two runs of one event, the second ``stagger`` seconds after the first; (exit code, stderr) each."""
    procs = [_spawn(pr, number, action, runs[0])]
    time.sleep(stagger)
    procs.append(_spawn(pr, number, action, runs[1]))
    out = []
    for p in procs:
        _, err = p.communicate(timeout=180)  # a hang guard only
        print(f"--- run {runs[len(out)]} (exit {p.returncode})\n{err}")  # shown when the test fails
        out.append((p.returncode, err))
    return out


def _check_once(pr: PR, number: int, head: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Exactly one summary (for ``head``), no claim left, each finding's inline comment once."""
    comments = [c for c in pr.gh.issue_comments(REPO, number) if c["user"]["login"] == ACTIONS_BOT]
    assert len(comments) == 1, [c["body"][:80] for c in comments]
    [summary] = comments
    assert review.SUMMARY_MARKER in summary["body"] and f"Checked at head `{head}`" in summary["body"]
    inline = [c for c in pr.gh.review_comments(REPO, number) if c.get("in_reply_to_id") is None]
    fingerprints = Counter(c["body"].split(MARKER, 1)[1].split(" ", 1)[0] for c in inline)
    assert fingerprints and set(fingerprints.values()) == {1}, fingerprints
    return summary, inline


def test_two_runs_at_once_post_one_summary_one_review_each_comment_once(seed_pr: PR) -> None:
    gh = seed_pr.gh
    gh.latency = LATENCY
    # trial 1: a new pull request, both runs started together
    results = _race(seed_pr, 7, "opened", ("101", "102"), 0.0)
    for code, err in results:
        assert code == 1 and "Traceback" not in err, err
    _, inline = _check_once(seed_pr, 7, seed_pr.head)
    assert len(inline) == 2
    assert len([r for r in gh.reviews(REPO, 7) if r["body"]]) == 1
    assert any("leaves the review and the summary to it" in err or "is up to date" in err
               or "posted the summary" in err for _, err in results)

    # trial 2: another pull request of the same head, the second run a little later
    gh.add_pull(REPO, number=8, head_sha=seed_pr.head, base_sha=seed_pr.base, head_ref="kimi-mtp-2",
                base_ref="main", user="alice", title="again", files=pr_files(seed_pr.repo, seed_pr.base, seed_pr.head))
    for code, err in _race(seed_pr, 8, "opened", ("201", "202"), 0.7):
        assert code == 1 and "Traceback" not in err, err
    assert len(_check_once(seed_pr, 8, seed_pr.head)[1]) == 2
    assert len([r for r in gh.reviews(REPO, 8) if r["body"]]) == 1

    # trial 3: a push fixes one launcher; both runs for the new head race to resolve its comment
    # (one reply, one edit) while the summary exists already
    gh.latency = 0.0
    fix = next(f for f in lint(WorkTree(str(seed_pr.repo)), Config()).findings if "mi300x" in f.path)
    assert fix.fix is not None
    subprocess.run(["git", "-C", str(seed_pr.repo), "apply"], input=fix.fix.diff.encode(), check=True)
    new_head = seed_pr.commit("Dispatch MTP scripts on MI300X")
    gh.latency = LATENCY
    for code, err in _race(seed_pr, 7, "synchronize", ("301", "302"), 0.3):
        assert code == 1 and "Traceback" not in err, err
    summary, inline = _check_once(seed_pr, 7, new_head)
    assert "introduces 1 finding" in summary["body"]
    replies = [c for c in gh.review_comments(REPO, 7) if c.get("in_reply_to_id") is not None]
    resolved = [c for c in inline if "Resolved" in c["body"]]
    assert len(resolved) == 1 and [r["in_reply_to_id"] for r in replies] == [resolved[0]["id"]]
    assert len([r for r in gh.reviews(REPO, 7) if r["body"]]) == 1  # nothing new to comment on


def test_a_run_after_a_race_folds_duplicate_summaries_into_the_oldest(seed_pr: PR,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    gh = seed_pr.gh
    old = gh.add_issue_comment(REPO, 7, ACTIONS_BOT, f"{review.SUMMARY_MARKER}\n### benchbot\n\nall clear (stale)")
    gh.add_issue_comment(REPO, 7, "alice", "looks good")
    dup = gh.add_issue_comment(REPO, 7, ACTIONS_BOT, f"{review.SUMMARY_MARKER}\n### benchbot\n\nthe duplicate")
    assert seed_pr.run("opened")[0] == 1
    comments = gh.issue_comments(REPO, 7)
    assert [c["user"]["login"] for c in comments] == [ACTIONS_BOT, "alice"]
    assert comments[0]["id"] == old["id"] and "introduces 2 findings" in comments[0]["body"]
    assert f"deleted 1 duplicate ({dup['id']})" in capsys.readouterr().err
    assert not any(r.method == "DELETE" and r.path.endswith(f"/{old['id']}") for r in gh.requests)


def test_a_live_claim_of_another_run_holds_the_head(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    gh = seed_pr.gh
    claim = gh.add_issue_comment(REPO, 7, ACTIONS_BOT, once.claim_marker(seed_pr.head, "555.1") + "\nposting")
    assert seed_pr.run("opened")[0] == 1  # the exit code is this run's own
    assert "run 555.1 is posting the review" in capsys.readouterr().err
    assert gh.reviews(REPO, 7) == [] and [c["id"] for c in gh.issue_comments(REPO, 7)] == [claim["id"]]


def test_a_dead_claim_binds_nobody_and_is_deleted(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    gh = seed_pr.gh
    gh.add_user("mallory")
    gh.clock = lambda: datetime.now(UTC) - timedelta(seconds=once.STALE + 60)
    stale = gh.add_issue_comment(REPO, 7, ACTIONS_BOT, once.claim_marker(seed_pr.head, "555.1") + "\nposting")
    gh.clock = lambda: datetime.now(UTC)
    spoof = gh.add_issue_comment(REPO, 7, "mallory", once.claim_marker(seed_pr.head, "1.1") + "\nmine")
    assert seed_pr.run("opened")[0] == 1
    assert len([r for r in gh.reviews(REPO, 7) if r["body"]]) == 1 and len(gh.review_comments(REPO, 7)) == 2
    ids = [c["id"] for c in gh.issue_comments(REPO, 7)]
    assert stale["id"] not in ids and spoof["id"] in ids and len(ids) == 2  # mallory's, and the summary
    capsys.readouterr()


def test_an_earlier_attempt_of_the_same_run_holds_nothing(seed_pr: PR) -> None:
    gh = seed_pr.gh
    seed_pr.monkeypatch.setenv("GITHUB_RUN_ID", "777")
    seed_pr.monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    gh.add_issue_comment(REPO, 7, ACTIONS_BOT, once.claim_marker(seed_pr.head, "777.1") + "\nposting")
    assert seed_pr.run("opened")[0] == 1
    assert len(gh.review_comments(REPO, 7)) == 2 and len(gh.issue_comments(REPO, 7)) == 1


def test_a_run_for_a_head_the_pull_request_left_writes_nothing(seed_pr: PR,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    event = seed_pr.gh.event_pull_request(REPO, 7, action="synchronize")
    seed_pr.gh.push(REPO, 7, head_sha="e" * 40)  # moves on while the run is checking
    path = seed_pr.tmp / "event.json"
    path.write_text(json.dumps(event))
    from bot.cli import main

    for k, v in {"GITHUB_API_URL": seed_pr.gh.api_url, "GITHUB_TOKEN": "tok-actions", "GITHUB_REPOSITORY": REPO,
                 "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path),
                 "GITHUB_WORKSPACE": str(seed_pr.repo)}.items():
        seed_pr.monkeypatch.setenv(k, v)
    capsys.readouterr()
    assert main(["event"]) == 1
    assert "moved on to eeeeeeeeeeee" in capsys.readouterr().err
    assert seed_pr.gh.writes(succeeded=True) == []


def test_run_names_come_from_actions_and_cannot_break_the_marker() -> None:
    assert once.run_name({"GITHUB_RUN_ID": "123", "GITHUB_RUN_ATTEMPT": "2"}) == "123.2"
    assert once.run_name({"GITHUB_RUN_ID": "9 -->x", "GITHUB_RUN_ATTEMPT": ""}) == "9--x.1"
    local = once.run_name({})
    assert local.startswith("local-") and local != once.run_name({})
    mine = once.Claim(2, "a" * 40, "123.2", 1000.0)
    assert once.dead(once.Claim(1, "a" * 40, "123.1", 999.0), mine)  # an earlier attempt of this run
    assert not once.dead(once.Claim(1, "a" * 40, "124.1", 999.0), mine)
    assert once.dead(once.Claim(1, "a" * 40, "124.1", 1000.0 - once.STALE - 1), mine)
