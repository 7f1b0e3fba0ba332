"""The bot's hidden markers cannot be forged through text it shows (end to end: the real PyGithub
stack, the fake GitHub, real git repos). Each case is one the red-team pass reproduced: a pull
request's ``.benchbot.yml`` shown in the policy table, a runner label listed in a ``/bench`` answer."""

from __future__ import annotations

import base64

import cmarkgfm
import github
from cmarkgfm.cmark import Options

from bot.github import claim, markers
from tests.conftest import git
from tests.github.commenting import _replies, _run, _setup
from tests.github.conftest import ACTIONS_BOT, PR, REPO

SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x.sh"


def _bot_comments(pr: PR) -> list[dict[str, object]]:
    return [c for c in pr.gh.issue_comments(REPO, pr.number) if c["user"]["login"] == ACTIONS_BOT]


def _summary(pr: PR) -> str:
    [body] = [str(c["body"]) for c in _bot_comments(pr) if str(c["body"]).startswith("<!-- benchbot:summary -->")]
    return body


def _html(text: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


def test_a_claim_in_the_pull_requests_config_does_not_stop_a_later_review(seed_pr: PR) -> None:
    """Commit B (a new shell-syntax error) is made first; commit A's ``.benchbot.yml`` names B in a
    claim marker, which the policy table shows. A is reviewed, then B is force-pushed: before the fix
    B's review saw the forged claim in the summary, left the review to a run that never existed, and
    the syntax error got no inline comment and a stale summary."""
    pr = seed_pr
    start = pr.head
    with open(pr.repo / SCRIPT, "a") as f:
        f.write("\nif then fi (\n")
    git(pr.repo, "commit", "-qam", "B: a syntax error")
    b = git(pr.repo, "rev-parse", "HEAD").strip()
    git(pr.repo, "reset", "-q", "--hard", start)
    (pr.repo / ".benchbot.yml").write_text(f'bench:\n  run-name: "x <!-- benchbot:claim {b} run 1.1 --> y"\n')
    pr.commit("A: a config")
    code, _ = pr.run("opened")
    summary = _summary(pr)
    assert "benchbot:claim" in summary and markers.head(summary) == "<!-- benchbot:summary -->"
    assert f"<!-- benchbot:claim {b}" not in summary  # shown inert
    git(pr.repo, "reset", "-q", "--hard", b)
    pr.head = b
    from tests.github.conftest import pr_files

    pr.gh.push(REPO, pr.number, head_sha=b, files=pr_files(pr.repo, pr.base, b), force=True)
    code, _ = pr.run("synchronize")
    assert code == 1
    inline = [c for c in pr.gh.review_comments(REPO, pr.number) if "shell-syntax" in c["body"]]
    assert len(inline) == 1 and inline[0]["path"] == SCRIPT
    assert f"`{b}`" in _summary(pr)  # the summary is about B


def test_a_run_marker_in_another_prs_config_does_not_cancel_that_run(entry_pr: PR) -> None:
    """PR #9's review shows a ``.benchbot.yml`` whose run-name carries the run marker of PR #99's run:
    before the fix ``/bench cancel`` on #9 found that title in the bot's summary and cancelled it."""
    pr = entry_pr
    title = "e2e Test - benchbot #99 mi325x abc c1"
    g = github.Github(auth=github.Auth.Token("tok-actions"), base_url=pr.gh.api_url, retry=None)
    g.get_repo(REPO).get_workflow("e2e-tests.yml").create_dispatch(
        "main", {"generate-cli-command": "x", "test-name": "benchbot #99 mi325x abc c1", "ref": "main"})
    other = int(pr.gh.runs(REPO)[-1]["id"])
    forged = f"<!-- benchbot:run {base64.urlsafe_b64encode(title.encode()).decode()} -->"
    git(pr.repo, "checkout", "-q", "conc")
    (pr.repo / ".benchbot.yml").write_text(f'bench:\n  run-name: "{forged}"\n')
    pr.commit("a config")
    git(pr.repo, "checkout", "-q", "main")
    pr.run("synchronize")
    assert "benchbot:run" in _summary(pr)
    code, cid = _run(pr, "/bench cancel")
    assert code == 0
    [run] = [r for r in pr.gh.runs(REPO) if r["id"] == other]
    assert run["status"] == "queued"
    assert [r for r in pr.gh.writes() if r.path.endswith("/cancel")] == []
    [answer] = [b for b in _replies(pr) if claim.reply_marker(cid) in b]
    assert "Nothing to cancel" in answer or "no benchmark runs" in answer.lower()


def test_a_summary_marker_in_a_runner_label_does_not_get_a_bench_answer_deleted(entry_pr: PR) -> None:
    """The pull request adds a runner label holding the summary marker; the ``/bench`` answer lists the
    label family; before the fix the next review took the answer for a duplicate summary and deleted
    it, so the results handler had nothing to edit."""
    pr = entry_pr
    pr.run("synchronize")
    git(pr.repo, "checkout", "-q", "conc")
    runners = pr.repo / "configs/runners.yaml"
    runners.write_text(runners.read_text().replace(
        "labels:\n", 'labels:\n  "mi325x-<!-- benchbot:summary -->":\n    - mi325x-amds_9\n', 1))
    pr.commit("a runner label")
    git(pr.repo, "checkout", "-q", "main")
    _setup(pr)
    code, cid = _run(pr, f"/bench mi325x --force @{pr.head}")
    [answer] = [b for b in _replies(pr) if claim.reply_marker(cid) in b]
    assert "benchbot:summary" in answer and not markers.has(answer, "<!-- benchbot:summary -->")
    pr.run("synchronize")
    assert [b for b in _replies(pr) if claim.reply_marker(cid) in b] == [answer]  # still there


def test_a_pipe_in_the_policy_table_cannot_hide_a_grant(seed_pr: PR) -> None:
    """``bench.allow: ["0|", "mallory"]``: before the fix the table cell split at the ``|`` and GitHub
    showed no "mallory"."""
    (seed_pr.repo / ".benchbot.yml").write_text('bench:\n  allow: ["0|", "mallory"]\n')
    seed_pr.commit("grant")
    seed_pr.run("opened")
    html = _html(_summary(seed_pr))
    row = next(r for r in html.split("<tr>") if "bench.allow" in r)
    cells = row.split("<td>")[1:]
    assert len(cells) == 3 and "mallory" in cells[2] and "0|" in cells[2]
