"""Accuracy evidence on pull requests, end to end (``python -m bot event``, the real PyGithub
stack, the fake GitHub): a speculative change with lm_eval tables in its description gets the
comparison in the summary; one without tables is asked for them; async scheduling is named."""

from __future__ import annotations

from tests.github.conftest import MTP_ENTRIES, MTP_SCRIPTS, PR, REPO, pr_files

BASE_TABLE = """\
|Tasks|Version|     Filter     |n-shot|  Metric   |   |Value |   |Stderr|
|-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|
|gsm8k|      3|flexible-extract|     5|exact_match|↑  |0.9530|±  |0.0058|
|     |       |strict-match    |     5|exact_match|↑  |0.9500|±  |0.0060|
"""
MTP_TSV = ("Tasks\tVersion\tFilter\tn-shot\tMetric\t\tValue\t\tStderr\n"
           "gsm8k\t3\tflexible-extract\t5\texact_match\t↑\t0.9454\t±\t0.0063\n"
           "\t\tstrict-match\t5\texact_match\t↑\t0.9280\t±\t0.0071\n")
NO_ASYNC_TABLE = """\
|Tasks|Version|     Filter     |n-shot|  Metric   |   |Value |   |Stderr|
|-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|
|gsm8k|      3|flexible-extract|     5|exact_match|↑  |0.9522|±  |0.0059|
|     |       |strict-match    |     5|exact_match|↑  |0.9490|±  |0.0061|
"""
DESCRIPTION = (f"Adds MTP for Kimi on MI300X/MI325X. @alice <img src=x onerror=alert(1)>\n\nWithout MTP:\n\n"
               f"{BASE_TABLE}\nWith MTP (3 tokens):\n\n{MTP_TSV}\nWith MTP, async scheduling off:\n\n{NO_ASYNC_TABLE}")


def _with_body(pr: PR, body: str, number: int) -> PR:
    """The same branch as a new pull request whose description is ``body``."""
    pr.gh.add_pull(REPO, number=number, head_sha=pr.head, base_sha=pr.base, head_ref="kimi-mtp", base_ref="main",
                   user="alice", title="kimik2.5 MTP", body=body, files=pr_files(pr.repo, pr.base, pr.head))
    pr.number = number
    return pr


def _summary(pr: PR) -> str:
    [comment] = pr.gh.issue_comments(REPO, pr.number)
    return str(comment["body"])


def _section(summary: str) -> str:
    assert "### Accuracy evidence" in summary, summary
    return summary.split("### Accuracy evidence", 1)[1].split("\n---\n", 1)[0]


def test_tables_in_the_description_are_compared_in_the_summary(seed_pr: PR) -> None:
    pr = _with_body(seed_pr, DESCRIPTION, 12)
    code, step_summary = pr.run("opened")
    assert code == 1  # the seed bug's findings; the evidence does not change the exit code
    got = _section(_summary(pr))
    assert "The description holds 3 lm_eval tables; the first (line 5) is the base." in got
    assert ("| candidate 1 | `gsm8k` | `flexible-extract` | 5 | `exact_match` | 0.9530 ± 0.0058 | 0.9454 ± 0.0063 "
            "| -0.0076 | 0.0171 | within noise |") in got
    assert ("| candidate 2 \\(async scheduling off\\) | `gsm8k` | `flexible-extract` | 5 | `exact_match` | "
            "0.9530 ± 0.0058 | 0.9522 ± 0.0059 | -0.0008 | 0.0165 | within noise |") in got
    # strict-match fell 0.0220 with MTP: beyond 2 combined standard errors (0.0186), flagged
    assert "| candidate 1 | `gsm8k` | `strict-match` | 5 | `exact_match` | 0.9500 ± 0.0060 | 0.9280 ± 0.0071 " \
           "| -0.0220 | 0.0186 | ⚠️ **drop** |" in got
    assert ("⚠️ **Accuracy drops beyond 2 combined standard errors**: `gsm8k strict-match exact_match` "
            "(candidate 1: -0.0220") in got
    assert "Please add accuracy evidence" not in got
    assert "### Accuracy evidence" in step_summary


def test_a_speculative_change_without_tables_is_asked_for_evidence(seed_pr: PR) -> None:
    assert seed_pr.run("opened")[0] == 1
    got = _section(_summary(seed_pr))
    assert "This pull request changes an MTP script or entry" in got
    for name in (*MTP_SCRIPTS, *MTP_ENTRIES):
        assert f"`{name}`" in got
    assert "Please add accuracy evidence to its description" in got
    assert "--async-scheduling" not in got  # the seed's MTP scripts do not turn it on
    assert "| candidate" not in got


def test_async_scheduling_without_evidence_with_it_off_is_said(seed_pr: PR) -> None:
    script = seed_pr.repo / MTP_SCRIPTS[0]
    script.write_text(script.read_text().replace("--trust-remote-code", "--trust-remote-code --async-scheduling"))
    seed_pr.commit("MTP with async scheduling")
    only_on = f"Without MTP:\n\n{BASE_TABLE}\nWith MTP:\n\n{MTP_TSV}"
    pr = _with_body(seed_pr, only_on, 13)
    pr.run("opened")
    got = _section(_summary(pr))
    line = (f"`{MTP_SCRIPTS[0]}` runs the MTP server with `--async-scheduling` and no evidence with it off is given")
    assert line in got and "| candidate 1 |" in got
    # with a table run with async scheduling off, the line goes
    pr = _with_body(seed_pr, DESCRIPTION, 14)
    pr.run("opened")
    got = _section(_summary(pr))
    assert "--async-scheduling" not in got and "| candidate 2 \\(async scheduling off\\) |" in got


def test_the_description_is_untrusted(seed_pr: PR) -> None:
    hostile = BASE_TABLE.replace("gsm8k", "<b>x</b>@alice") + "\n" + MTP_TSV.replace("gsm8k", "<b>x</b>@alice")
    hostile = "<!-- benchbot:summary -->\n" + hostile.replace("|Tasks|", "|Tasks|", 1)
    pr = _with_body(seed_pr, hostile, 15)
    pr.run("opened")
    summary = _summary(pr)
    got = _section(summary)
    assert "`<b>x</b>@alice`" in got  # a task name is a code span: literal, no HTML, no mention
    assert summary.count("<!-- benchbot:summary -->") == 1  # the description's copy of the marker is not shown
