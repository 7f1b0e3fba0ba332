"""Policy from the base: a pull request's own ``.benchbot.yml`` never changes its review; the
summary shows what it changes. Real git repos, the real PyGithub stack, the fake GitHub."""

from __future__ import annotations

from tests.conftest import git
from tests.github.conftest import PR, REPO, with_base_config


def summary_of(pr: PR) -> str:
    [summary] = [c for c in pr.gh.issue_comments(REPO, pr.number) if "benchbot" in c["body"]]
    body: str = summary["body"]
    return body


def test_a_pull_request_cannot_switch_off_its_own_review(seed_pr: PR) -> None:
    (seed_pr.repo / ".benchbot.yml").write_text("ignore: [ignored-variant, dead-script]\nfail-on: error\n")
    seed_pr.commit("quiet the bot")
    code, _ = seed_pr.run("opened")
    assert code == 1  # the base's configuration: the seed bug still fails the check
    assert len(seed_pr.gh.review_comments(REPO, 7)) >= 2
    body = summary_of(seed_pr)
    assert "### This pull request changes benchbot's configuration" in body
    assert "| `ignore` | `[]` | `[dead-script, ignored-variant]` |" in body
    assert "| `fail-on` | `warning` | `error` |" in body
    assert "would not fail the check" in body and "ignored-variant" in body


def test_a_head_config_that_does_not_load_is_shown_not_fatal(seed_pr: PR) -> None:
    (seed_pr.repo / ".benchbot.yml").write_text("select: [no-such-rule]\n")
    seed_pr.commit("broken config")
    code, _ = seed_pr.run("opened")
    assert code == 1
    body = summary_of(seed_pr)
    assert "The pull request's configuration does not load" in body and "no-such-rule" in body


def test_the_base_config_is_obeyed(seed_pr: PR) -> None:
    pr = with_base_config(seed_pr, "ignore: [ignored-variant, dead-script, missing-script]\n")
    code, _ = pr.run("opened")
    assert code == 0 and pr.gh.review_comments(REPO, 8) == []
    assert "changes benchbot's configuration" not in summary_of(pr)


def test_suppressions_a_pull_request_adds_are_shown_not_obeyed(seed_pr: PR) -> None:
    launcher = seed_pr.repo / "runners/launch_mi300x-amds.sh"
    lines = launcher.read_text().splitlines(keepends=True)
    lines.insert(1, "# benchbot: ignore-file[ignored-variant] reason: MTP on MI300X is tested by hand\n")
    launcher.write_text("".join(lines))
    seed_pr.commit("silence the launcher")
    code, _ = seed_pr.run("opened")
    assert code == 1
    body = summary_of(seed_pr)
    assert "It adds 1 inline suppression, not applied to its own review:" in body
    assert "`runners/launch_mi300x-amds.sh:2` ignores `ignored-variant`: reason: MTP on MI300X is tested by hand" \
        in body
    assert "launch\\_mi300x-amds.sh dispatches" in body  # still reported


def test_suppressions_the_base_has_are_obeyed(seed_pr: PR) -> None:
    repo = seed_pr.repo
    git(repo, "checkout", "-q", "main")
    launcher = repo / "runners/launch_mi300x-amds.sh"
    lines = launcher.read_text().splitlines(keepends=True)
    lines.insert(1, "# benchbot: ignore-file[ignored-variant] reason: tested by hand\n")
    launcher.write_text("".join(lines))
    pr = with_base_config(seed_pr, "fail-on: warning\n")  # commits the suppression on main too
    code, _ = pr.run("opened")
    body = summary_of(pr)
    assert "inline suppression" not in body
    assert "launch\\_mi300x-amds.sh dispatches" not in body and "launch\\_mi325x-amds.sh dispatches" in body
    assert code == 1
