"""Helpers for the comment-command tests: a PR that changes one entry, and delivering a
comment to ``benchbot event`` through the fake GitHub (the ``entry_pr`` fixture is in conftest)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.cli import main
from tests.conftest import git
from tests.github.conftest import ACTIONS_BOT, PR, REPO, pr_files

WORKFLOW = ".github/workflows/e2e-tests.yml"


def _setup(pr: PR) -> None:
    gh = pr.gh
    gh.add_workflow(REPO, id=101, path=WORKFLOW, name="End-to-End Tests",
                    inputs=["generate-cli-command", "test-name", "ref"])
    gh.run_title = lambda inputs: f"e2e Test - {inputs.get('test-name', '')}"
    gh.set_permission(REPO, "reader", "read")
    gh.set_permission(REPO, "maint", "maintain")
    git(pr.repo, "checkout", "-q", "main")  # the commands workflow checks out the default branch


def make_entry_pr(seed_pr: PR) -> PR:
    """A PR on top of the seed's head that changes one MI325X entry (not an MTP one)."""
    repo = seed_pr.repo
    git(repo, "checkout", "-q", "-B", "main", seed_pr.head)  # the seed (with its MTP bug) is main
    seed_pr.base = seed_pr.head
    git(repo, "checkout", "-q", "-b", "conc")
    cfg = repo / "configs/amd-master.yaml"
    text = cfg.read_text()
    start = text.index("kimik2.5-int4-mi325x-vllm:")
    cfg.write_text(text[:start] + text[start:].replace("conc-end: 64 }", "conc-end: 128 }", 1))
    git(repo, "commit", "-qam", "mi325x: conc up to 128")
    head = git(repo, "rev-parse", "HEAD").strip()
    seed_pr.gh.add_pull(REPO, number=9, head_sha=head, base_sha=seed_pr.base, head_ref="conc", base_ref="main",
                        user="alice", title="conc", files=pr_files(repo, seed_pr.base, head))
    seed_pr.number, seed_pr.head = 9, head
    _setup(seed_pr)
    force_pushed_earlier(seed_pr)
    return seed_pr


def force_pushed_earlier(pr: PR, minutes: int = 5) -> None:
    """The PR's head arrives by a force push some minutes before the test's comments: the timeline
    has a server-timed ``head_ref_force_pushed`` event for it, so a plain ``/bench`` is bound to it."""
    pr.gh.clock = lambda: datetime.now(UTC) - timedelta(minutes=minutes)
    pr.gh.push(REPO, pr.number, head_sha=pr.head, force=True)
    pr.gh.clock = lambda: datetime.now(UTC)


def _comment(pr: PR, body: str, user: str = "alice", *, kind: str = "User") -> tuple[int, dict[str, Any]]:
    pr.gh.add_user(user, type=kind)
    c = pr.gh.add_issue_comment(REPO, pr.number, user=user, body=body)
    event = pr.gh.event_issue_comment(REPO, pr.number, c, sender=user)
    path = pr.tmp / f"comment-{c['id']}.json"
    path.write_text(json.dumps(event))
    env = {"GITHUB_API_URL": pr.gh.api_url, "GITHUB_TOKEN": "tok-actions", "GITHUB_REPOSITORY": REPO,
           "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(path), "GITHUB_WORKSPACE": str(pr.repo),
           "BENCHBOT_GITHUB_BACKOFF": "0.01", "BENCHBOT_GITHUB_WRITE_INTERVAL": "0"}
    for k, v in env.items():
        pr.monkeypatch.setenv(k, v)
    return int(c["id"]), event


def _run(pr: PR, body: str, user: str = "alice", **kw: Any) -> tuple[int, int]:
    cid, _ = _comment(pr, body, user, **kw)
    return main(["event"]), cid


def _replies(pr: PR) -> list[str]:
    return [c["body"] for c in pr.gh.issue_comments(REPO, pr.number) if c["user"]["login"] == ACTIONS_BOT]


def _reactions(pr: PR, cid: int) -> list[str]:
    return sorted(r["content"] for r in pr.gh.reactions_of_comment(REPO, cid) if r["user"]["login"] == ACTIONS_BOT)
