"""``/bench`` and friends, end to end: issue_comment events, the real PyGithub stack, the fake
GitHub server, a real git repo whose default branch is checked out (as the commands workflow
does) with the PR head fetched as data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.github import comments
from bot.github.adapter import PyGithubPort, Settings
from bot.github.event import Options
from tests.conftest import git
from tests.github.commenting import (
    _comment,
    _reactions,
    _replies,
    _run,
    _setup,
    force_pushed_earlier,
)
from tests.github.conftest import PR, REPO


def test_bench_dispatches_the_changed_entry_once(entry_pr: PR) -> None:
    code, cid = _run(entry_pr, "Looks good.\n/bench mi325x\n")
    assert code == 0
    [d] = entry_pr.gh.dispatches(REPO)
    assert d["ref"] == "main"
    assert d["inputs"] == {
        "generate-cli-command": ("test-config --config-keys kimik2.5-int4-mi325x-vllm "
                                 "--config-files configs/amd-master.yaml"),
        "test-name": f"benchbot #9 mi325x {entry_pr.head[:7]} c{cid}",
        "ref": entry_pr.head}
    assert _reactions(entry_pr, cid) == ["eyes", "rocket"]
    [reply] = _replies(entry_pr)
    run = entry_pr.gh.runs(REPO)[0]
    assert "`kimik2.5-int4-mi325x-vllm`" in reply and entry_pr.head in reply and run["html_url"] in reply
    # the same event delivered again: nothing more
    assert main(["event"]) == 0
    assert len(entry_pr.gh.dispatches(REPO)) == 1 and len(_replies(entry_pr)) == 1


@pytest.mark.parametrize("body", [
    "```\n/bench mi325x\n```", "> /bench mi325x", "    /bench mi325x", "<!-- /bench mi325x -->",
])
def test_commands_in_code_or_quotes_are_not_commands(entry_pr: PR, body: str) -> None:
    code, cid = _run(entry_pr, body)
    assert code == 0 and entry_pr.gh.dispatches(REPO) == [] and entry_pr.gh.writes(succeeded=True) == []


@pytest.mark.parametrize("body", [
    "/bench mi325x; curl evil", "/bench $(id)", "/bench `id`", "/bench mi325x kimik2.5-int4-mi325x-vllm|sh",
])
def test_metacharacters_never_dispatch(entry_pr: PR, body: str) -> None:
    code, cid = _run(entry_pr, body)
    assert entry_pr.gh.dispatches(REPO) == []
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]
    assert "/bench" in _replies(entry_pr)[0]  # a short help reply


def test_newline_ends_a_command(entry_pr: PR) -> None:
    _run(entry_pr, "/bench mi325x\n$(id)")
    [d] = entry_pr.gh.dispatches(REPO)
    assert "$(" not in json.dumps(d)


def test_read_permission_and_bots_are_refused(entry_pr: PR) -> None:
    code, cid = _run(entry_pr, "/bench mi325x", "reader")
    assert entry_pr.gh.dispatches(REPO) == []
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]
    assert "write access" in _replies(entry_pr)[0]
    code, cid = _run(entry_pr, "/bench mi325x", "dependabot[bot]", kind="Bot")
    assert entry_pr.gh.dispatches(REPO) == [] and _reactions(entry_pr, cid) == []
    # maintain is enough
    _run(entry_pr, "/bench mi325x", "maint")
    assert len(entry_pr.gh.dispatches(REPO)) == 1


def test_allow_list_in_the_default_branch_config(entry_pr: PR) -> None:
    (entry_pr.repo / ".benchbot.yml").write_text("bench:\n  allow: [reader]\n")
    code, cid = _run(entry_pr, "/bench mi325x", "reader")
    assert len(entry_pr.gh.dispatches(REPO)) == 1


def test_head_moved_between_command_and_dispatch(entry_pr: PR) -> None:
    cid, event = _comment(entry_pr, "/bench mi325x")
    settings = Settings(entry_pr.gh.api_url, "tok-actions", REPO, backoff=0.01, write_interval=0)

    class Moving(PyGithubPort):
        calls = 0

        def pull(self, number: int) -> Any:
            Moving.calls += 1
            if Moving.calls == 2:  # a push lands while the bot is selecting and linting
                entry_pr.gh.push(REPO, number, head_sha="f" * 40)
            return super().pull(number)

    out = comments.issue_comment(event, str(entry_pr.repo), lambda: Moving(settings), Options())
    assert entry_pr.gh.dispatches(REPO) == []
    assert "moved" in _replies(entry_pr)[0] and "f" * 12 in _replies(entry_pr)[0]
    assert _reactions(entry_pr, cid) == ["confused", "eyes"] and out.code == 0


def test_seed_pr_refused_with_the_explanation_unless_forced(seed_pr: PR) -> None:
    _setup(seed_pr)
    force_pushed_earlier(seed_pr)
    _, cid = _run(seed_pr, "/bench mi325x")
    assert seed_pr.gh.dispatches(REPO) == []
    reply = _replies(seed_pr)[0]
    assert "kimik2.5-int4-mi325x-vllm-mtp" in reply and "kimik2.5\\_int4\\_mi325x.sh" in reply
    assert "--force" in reply
    _, cid = _run(seed_pr, "/bench mi325x --force")
    [d] = seed_pr.gh.dispatches(REPO)
    assert d["inputs"]["generate-cli-command"].split("--config-keys ")[1].startswith("kimik2.5-int4-mi325x-vllm-mtp")
    assert "Forced past" in _replies(seed_pr)[-1]


def test_empty_selection_says_why_and_lists_touched_skus(entry_pr: PR) -> None:
    _, cid = _run(entry_pr, "/bench mi300x")
    assert entry_pr.gh.dispatches(REPO) == []
    reply = _replies(entry_pr)[0]
    assert "changes no entry on `mi300x`" in reply and "`mi325x`" in reply
    _run(entry_pr, "/bench mi300x --all")  # includes the MTP entry lint says runs the wrong script
    assert entry_pr.gh.dispatches(REPO) == [] and "kimik2.5-int4-mi300x-vllm-mtp" in _replies(entry_pr)[-1]
    _run(entry_pr, "/bench mi300x kimik2.5-int4-mi300x-vllm")  # an explicit entry
    [d] = entry_pr.gh.dispatches(REPO)
    assert "--config-keys kimik2.5-int4-mi300x-vllm --config-files" in d["inputs"]["generate-cli-command"]
    _run(entry_pr, "/bench mi300x kimik2.5-int4-mi325x-vllm")
    assert "runs on `mi325x`" in _replies(entry_pr)[-1] and len(entry_pr.gh.dispatches(REPO)) == 1


def test_dispatch_5xx_is_retried_and_a_final_failure_is_not_repeated(entry_pr: PR) -> None:
    path = r"/repos/acme/bench/actions/workflows/[^/]+/dispatches"
    entry_pr.gh.fail("POST", path, status=502, times=1)
    _run(entry_pr, "/bench mi325x")
    assert len(entry_pr.gh.dispatches(REPO)) == 1
    entry_pr.gh.fail("POST", path, status=503, times=50)
    code, cid = _run(entry_pr, "/bench mi325x")
    assert code == 2 and len(entry_pr.gh.dispatches(REPO)) == 1
    assert _reactions(entry_pr, cid) == ["confused", "eyes"] and "dispatch failed" in _replies(entry_pr)[-1]
    assert main(["event"]) == 0  # the event redelivered: answered already, no second try
    assert len(entry_pr.gh.dispatches(REPO)) == 1


def test_a_dispatch_that_landed_behind_a_502_is_not_sent_again(entry_pr: PR) -> None:
    entry_pr.gh.fail("POST", r"/repos/acme/bench/actions/workflows/[^/]+/dispatches", status=502, after=True)
    _run(entry_pr, "/bench mi325x")
    assert len(entry_pr.gh.dispatches(REPO)) == 1


def test_hourly_limit(entry_pr: PR) -> None:
    (entry_pr.repo / ".benchbot.yml").write_text("bench:\n  max-per-hour: 1\n  poll-seconds: 0\n")
    _run(entry_pr, "/bench mi325x")
    _, cid = _run(entry_pr, "/bench mi325x --all")
    assert len(entry_pr.gh.dispatches(REPO)) == 1 and "last hour" in _replies(entry_pr)[-1]


def test_help_and_lint(entry_pr: PR, tmp_path: Path) -> None:
    _, cid = _run(entry_pr, "/help")
    assert "/bench" in _replies(entry_pr)[0]
    git(entry_pr.repo, "checkout", "-q", "conc")
    _, cid = _run(entry_pr, "/lint")
    [answer] = [r for r in _replies(entry_pr) if comments.reply_marker(cid) in r]
    assert "Re-ran the review" in answer
    assert any("<!-- benchbot:summary -->" in b for b in _replies(entry_pr))


def test_a_claim_that_cannot_be_posted_dispatches_nothing(entry_pr: PR) -> None:
    entry_pr.gh.fail("POST", r"/repos/acme/bench/issues/\d+/comments", status=500, times=6)  # every try of the claim
    code, cid = _run(entry_pr, "/bench mi325x")
    assert code == 2 and entry_pr.gh.dispatches(REPO) == [] and _replies(entry_pr) == []
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]  # never 👀 alone
    assert main(["event"]) == 0  # redelivered: nothing was claimed, so this run answers it
    assert len(entry_pr.gh.dispatches(REPO)) == 1 and len(_replies(entry_pr)) == 1


def test_repository_dispatch_when_configured(entry_pr: PR) -> None:
    (entry_pr.repo / ".benchbot.yml").write_text(
        "bench:\n  repository-dispatch: gpu-bench\n  inputs:\n    keys: '{entries}'\n    sha: '{sha}'\n"
        "    label: '{label}'\n")
    _, cid = _run(entry_pr, "/bench MI325X")
    assert entry_pr.gh.dispatches(REPO) == []
    [d] = entry_pr.gh.repository_dispatches(REPO)
    assert d["event_type"] == "gpu-bench"
    assert d["client_payload"] == {"keys": "kimik2.5-int4-mi325x-vllm", "sha": entry_pr.head, "label": "mi325x"}
    assert _reactions(entry_pr, cid) == ["eyes", "rocket"]


def test_lint_when_the_analysis_fails(entry_pr: PR, monkeypatch: pytest.MonkeyPatch) -> None:
    """/lint on a head benchbot cannot analyse: 😕 and the reason, exit 3, never "Re-ran"."""
    from bot.rules import ignored_variant

    def boom(*_: object) -> None:
        raise ValueError("a rule broke")

    monkeypatch.setattr(ignored_variant, "check", boom)
    code, cid = _run(entry_pr, "/lint")
    [answer] = [r for r in _replies(entry_pr) if comments.reply_marker(cid) in r]
    assert code == 3 and "Could not re-run the review" in answer and "Re-ran" not in answer
    assert "could not analyse" in " ".join(r for r in _replies(entry_pr) if "benchbot:summary" in r)
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]


def test_lint_reply_counts_come_from_the_outcome() -> None:
    from bot.github.comments import _counts

    assert _counts({"new": 2, "old": 5, "fixed": 1, "inline": 1}, "main") == \
        ": 2 new findings (1 inline), 5 already on main, fixes 1"
    assert _counts({"new": 1, "inline": 0}, "") == ": 1 new finding (0 inline), 0 already on the base, fixes 0"
    assert _counts(None, "main") == ""  # before the pull_request handler sets Outcome.counts
