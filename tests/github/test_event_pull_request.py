"""``python -m bot event`` on a pull_request, end to end: a real git repo, the real
PyGithub HTTP stack, the fake GitHub server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest
from fakegithub import graphql

from bot.config import Config
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.github.conftest import ACTIONS_BOT, MTP_ENTRIES, MTP_SCRIPTS, PR, REPO, with_base_config

CONFIG = "configs/amd-master.yaml"


def _state(pr: PR) -> dict[str, Any]:
    gh = pr.gh
    return {
        "reviews": [(r["user"]["login"], r["commit_id"], r["body"]) for r in gh.reviews(REPO, pr.number)],
        "review_comments": sorted((c["user"]["login"], c["path"], c["line"], c.get("in_reply_to_id") is not None,
                                   c["body"]) for c in gh.review_comments(REPO, pr.number)),
        "comments": [(c["user"]["login"], c["body"]) for c in gh.issue_comments(REPO, pr.number)],
    }


def test_base_is_clean_and_head_has_the_seed_bug(seed_pr: PR) -> None:
    from bot.repo.files.git import GitTree

    assert lint(GitTree(str(seed_pr.repo), seed_pr.base), Config()).findings == []
    rules = sorted(f.rule for f in lint(WorkTree(str(seed_pr.repo)), Config()).findings)
    # two causes, each carrying the _mtp script it leaves dead
    assert rules == ["ignored-variant", "ignored-variant"]


def test_seed_pr_review_then_rerun_then_fix(seed_pr: PR) -> None:
    gh = seed_pr.gh
    code, step_summary = seed_pr.run("opened")
    assert code == 1  # the PR introduces errors

    # exactly one review, by the Actions bot, on the head commit
    reviews = gh.reviews(REPO, 7)
    assert len(reviews) == 1 and reviews[0]["user"]["login"] == ACTIONS_BOT
    assert reviews[0]["commit_id"] == seed_pr.head
    inline = gh.review_comments(REPO, 7)
    added = {f["filename"]: f for f in gh.pull_files(REPO, 7)}
    # one inline comment per root cause, on the new _mtp script (a line the PR added) it leaves dead
    assert sorted(c["path"] for c in inline) == sorted(MTP_SCRIPTS)
    config_text = (seed_pr.repo / CONFIG).read_text().splitlines()
    for c in inline:
        assert c["path"] in added
        assert f"+{(seed_pr.repo / c['path']).read_text().splitlines()[c['line'] - 1]}" in added[c["path"]]["patch"]
        # each names the launcher and the line that cause it
        launcher = "launch_mi300x-amds.sh:32" if "mi300x" in c["path"] else "launch_mi325x-amds.sh:26"
        assert f"runners/{launcher}" in c["body"], c["body"]
        # and the entry it sends to the wrong script
        entry = next(e for e in MTP_ENTRIES if ("mi300x" in e) == ("mi300x" in c["path"]))
        assert entry in c["body"]
    assert config_text  # the entries are named in the comments, not commented on separately

    # one summary comment; the launcher fixes (outside the diff) are diff blocks in it
    comments = gh.issue_comments(REPO, 7)
    assert len(comments) == 1 and comments[0]["user"]["login"] == ACTIONS_BOT
    summary = comments[0]["body"]
    assert summary.count("```diff") == 2 and "+SPEC_SUFFIX" in summary.replace(" ", "")
    assert f"Checked at head `{seed_pr.head}`" in summary
    assert summary.rstrip().endswith(f"To benchmark this head: `/bench <gpu> @{seed_pr.head}`")
    assert "introduces 2 findings" in summary
    assert "`kimik2.5-int4-mi325x-vllm-mtp`" in step_summary  # the job summary has the same review

    # the same event again: nothing new is posted, nothing is edited
    before = _state(seed_pr)
    writes = len(gh.writes())
    assert seed_pr.run("opened")[0] == 1
    assert _state(seed_pr) == before
    assert len(gh.writes()) == writes

    # a second commit applies the proposed fixes to both launchers: clean, old comments resolved
    for f in lint(WorkTree(str(seed_pr.repo)), Config()).findings:
        if f.rule == "ignored-variant":
            assert f.fix is not None
            subprocess.run(["git", "-C", str(seed_pr.repo), "apply"], input=f.fix.diff.encode(), check=True)
    new_head = seed_pr.commit("Dispatch MTP scripts on MI300X and MI325X")
    code, _ = seed_pr.run("synchronize")
    assert code == 0
    # no new review (GitHub files each reply to a thread as a review of its own, with no body)
    assert len([r for r in gh.reviews(REPO, 7) if r["body"]]) == 1
    comments = gh.issue_comments(REPO, 7)
    assert len(comments) == 1  # edited in place
    assert "introduces no findings" in comments[0]["body"]
    assert f"Checked at head `{new_head}`" in comments[0]["body"]
    assert comments[0]["body"].rstrip().endswith(f"@{new_head}`")
    top = [c for c in gh.review_comments(REPO, 7) if c.get("in_reply_to_id") is None]
    replies = [c for c in gh.review_comments(REPO, 7) if c.get("in_reply_to_id") is not None]
    assert len(top) == 2 and all("Resolved" in c["body"] for c in top)
    assert sorted(r["in_reply_to_id"] for r in replies) == sorted(c["id"] for c in top)
    # their review threads are resolved too (GraphQL resolveReviewThread): "require conversation resolution" passes
    threads = graphql.threads(gh.state, REPO, 7)
    assert len(threads) == 2 and all(t["isResolved"] for t in threads)
    # and once more: resolved comments are not replied to twice
    writes = len(gh.writes())
    seed_pr.run("synchronize")
    assert len(gh.writes()) == writes


def test_faults_are_retried_to_the_same_end_state(seed_pr: PR, fake_github: Any) -> None:
    gh = seed_pr.gh
    gh.fail("POST", r"/repos/acme/bench/pulls/\d+/reviews$", status=502, times=1)
    gh.fail("GET", r"/repos/acme/bench/issues/\d+/comments$", status=403, times=1,
            headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()))},
            body={"message": "API rate limit exceeded for installation ID 1.",
                  "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
    gh.fail("PATCH", r"/repos/acme/bench/issues/comments/\d+$", status=429, times=1, headers={"Retry-After": "1"})
    assert seed_pr.run("opened")[0] == 1
    faulted = [r for r in gh.requests if r.faulted]
    assert len(faulted) == 2  # the PATCH fault waits for a second run
    assert len(gh.reviews(REPO, 7)) == 1 and len(gh.issue_comments(REPO, 7)) == 1
    assert len(gh.review_comments(REPO, 7)) == 2
    (seed_pr.repo / "README.md").write_text("touch\n")
    seed_pr.commit("touch the readme")
    assert seed_pr.run("synchronize")[0] == 1
    assert any(r.status == 429 for r in gh.requests)
    assert len(gh.issue_comments(REPO, 7)) == 1 and (
        f"Checked at head `{seed_pr.head}`" in gh.issue_comments(REPO, 7)[0]["body"])
    assert len(gh.review_comments(REPO, 7)) == 2 and len(gh.reviews(REPO, 7)) == 1


def test_fork_token_falls_back_to_job_summary(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    code, step_summary = seed_pr.run("opened", "tok-ro")
    assert code == 1  # the same exit code as with a writing token
    err = capsys.readouterr()
    assert "GitHub refused to" in err.err and "read-only token" in err.err
    assert "::error file=runners/launch_mi325x-amds.sh,line=26" in err.out
    assert "`kimik2.5-int4-mi325x-vllm-mtp`" in step_summary
    assert seed_pr.gh.writes(succeeded=True) == []


def test_personal_token_identity_from_get_user(seed_pr: PR) -> None:
    assert seed_pr.run("opened", "tok-pat")[0] == 1
    assert [c["user"]["login"] for c in seed_pr.gh.issue_comments(REPO, 7)] == ["bench-bot"]
    seed_pr.run("opened", "tok-pat")
    assert len(seed_pr.gh.issue_comments(REPO, 7)) == 1
    # the Actions bot does not take over bench-bot's comments: it finds none of its own
    seed_pr.run("opened", "tok-actions")
    assert [c["user"]["login"] for c in seed_pr.gh.issue_comments(REPO, 7)] == ["bench-bot", ACTIONS_BOT]


def test_base_outside_history_is_a_clear_error(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    seed_pr.base = "0" * 40
    seed_pr.gh.add_pull(REPO, number=8, head_sha=seed_pr.head, base_sha="0" * 40, head_ref="x", base_ref="main",
                        user="alice", title="t", files=[])
    seed_pr.number = 8
    assert seed_pr.run("opened")[0] == 2
    assert "fetch-depth: 0" in capsys.readouterr().err
    assert seed_pr.gh.writes(succeeded=True) == []


def test_drafts_and_other_actions_do_nothing(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    assert seed_pr.run("closed")[0] == 0
    assert "nothing to do" in capsys.readouterr().err
    assert seed_pr.gh.writes(succeeded=True) == []


def test_a_post_that_landed_behind_a_502_is_not_posted_again(seed_pr: PR) -> None:
    gh = seed_pr.gh
    gh.fail("POST", r"/repos/acme/bench/issues/\d+/comments", status=502, after=True)
    gh.fail("POST", r"/repos/acme/bench/pulls/\d+/reviews", status=504, after=True)
    assert seed_pr.run("opened")[0] == 1
    assert len(gh.issue_comments(REPO, 7)) == 1
    assert len(gh.reviews(REPO, 7)) == 1 and len(gh.review_comments(REPO, 7)) == 2
    assert sum(r.faulted for r in gh.requests) == 2


def test_config_names_the_bot_and_adds_the_recipe_reminder_once(seed_pr: PR) -> None:
    pr = with_base_config(seed_pr, "github:\n  bot-login: github-actions[bot]\n  recipe-reminder: |\n"
                                   "    Compare the serve command with the official vLLM recipe or SGLang cookbook.\n")
    pr.run("opened")
    pr.run("synchronize")
    assert not any(r.path == "/user" for r in pr.gh.requests)  # the login came from the (base's) config
    [summary] = pr.gh.issue_comments(REPO, 8)
    assert summary["body"].count("official vLLM recipe") == 1
    assert "> **Recipe reminder**" in summary["body"]


def test_reminder_only_when_configs_or_scripts_change() -> None:
    from bot.config import GitHubConfig

    conf = GitHubConfig(recipe_reminder="check the recipe")
    assert conf.reminds(["configs/amd-master.yaml"]) and conf.reminds(["benchmarks/single_node/x.sh"])
    assert not conf.reminds(["README.md", "runners/launch_mi300x-amds.sh"])
    assert not GitHubConfig().reminds(["configs/amd-master.yaml"])


def test_event_prints_the_new_findings_in_the_chosen_format(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    seed_pr.run("opened", "tok-actions", "--format", "json", "--sarif-file", str(seed_pr.tmp / "r.sarif"))
    doc = json.loads(capsys.readouterr().out)
    assert sorted(f["rule"] for f in doc["findings"]) == ["ignored-variant", "ignored-variant"]
    sarif = json.loads((seed_pr.tmp / "r.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == 2


def test_missing_token_is_a_clear_error(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    seed_pr.monkeypatch.setenv("GITHUB_TOKEN", "")
    event = seed_pr.gh.event_pull_request(REPO, 7, action="opened")
    path = seed_pr.tmp / "e.json"
    path.write_text(json.dumps(event))
    for k, v in {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path),
                 "GITHUB_WORKSPACE": str(seed_pr.repo), "GITHUB_REPOSITORY": REPO}.items():
        seed_pr.monkeypatch.setenv(k, v)
    from bot.cli import main

    assert main(["event"]) == 2
    assert "GITHUB_TOKEN is not set" in capsys.readouterr().err
    assert seed_pr.gh.requests == []


def test_unreadable_event_payload(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    bad = tmp_path / "event.json"
    bad.write_text('{"action": "opened",\n "number": }')
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(bad))
    assert main(["event"]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err


def test_inline_comments_refused_by_github_go_to_the_summary(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    seed_pr.gh.fail("POST", r"/repos/acme/bench/pulls/\d+/reviews", status=422,
                    body={"message": "Unprocessable Entity",
                          "errors": ["Pull request review thread line must be part of the diff"]})
    assert seed_pr.run("opened")[0] == 1
    assert seed_pr.gh.reviews(REPO, 7) == [] and seed_pr.gh.review_comments(REPO, 7) == []
    [summary] = seed_pr.gh.issue_comments(REPO, 7)
    assert "introduces 2 findings" in summary["body"] and "inline comment" not in summary["body"]
    assert summary["body"].count("```diff") == 2
    assert "they are in the summary comment instead" in capsys.readouterr().err


def test_a_failed_analysis_replaces_the_all_clear_and_exits_3(seed_pr: PR, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.rules import ignored_variant

    for f in lint(WorkTree(str(seed_pr.repo)), Config()).findings:
        assert f.fix is not None
        subprocess.run(["git", "-C", str(seed_pr.repo), "apply"], input=f.fix.diff.encode(), check=True)
    seed_pr.commit("the fixed launchers")
    assert seed_pr.run("opened")[0] == 0
    [clear] = seed_pr.gh.issue_comments(REPO, 7)
    assert "introduces no findings" in clear["body"]

    (seed_pr.repo / "README.md").write_text("touch\n")
    head = seed_pr.commit("touch the readme")

    def crash(*args: object) -> Any:
        raise RuntimeError("boom <b>@alice</b>\nsecond line")

    capsys.readouterr()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ignored_variant, "check", crash)
        code, step_summary = seed_pr.run("synchronize")
    assert code == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"could not analyse {head[:12]}: RuntimeError: boom" in err
    [summary] = seed_pr.gh.issue_comments(REPO, 7)  # the same comment, edited
    body = summary["body"]
    assert summary["id"] == clear["id"] and "introduces no findings" not in body
    assert f"could not analyse head `{head[:12]}`" in body and f"Not analysed: head `{head}`" in body
    assert "RuntimeError: boom" in body and "second line" in body  # one line
    assert " at test\\_event\\_pull\\_request.py:" in body  # the place it was raised (escaped markdown)
    assert "<b>" not in body and "@alice" not in body  # escaped: no markup, no mention
    assert "Traceback" not in body and "File \"" not in body
    assert "could not analyse" in step_summary
    assert seed_pr.gh.review_comments(REPO, 7) == []
    # the next run that can analyse the head puts its results back
    assert seed_pr.run("synchronize")[0] == 0
    assert "introduces no findings" in seed_pr.gh.issue_comments(REPO, 7)[0]["body"]
