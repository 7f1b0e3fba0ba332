"""A pull request's workflows in its review, end to end (``python -m bot event``, the real
PyGithub stack against the fake GitHub, the real zizmor and actionlint): a PR that adds an
injectable ``${{ github.event.pull_request.title }}`` to a ``run:`` gets the zizmor finding as an
inline comment and in the summary's workflow section; what the PR adds to switch it off (its own
``.benchbot.yml``, a ``# zizmor: ignore`` comment) is shown, not obeyed; the base's configuration
is obeyed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fakegithub import FakeGitHub

from tests.conftest import EXAMPLE, git
from tests.external.workflow_texts import CLEAN, INJECTABLE
from tests.github.conftest import PR, REPO, pr_files

WORKFLOW = ".github/workflows/greet.yml"


def _pr(tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch, base_config: str | None,
        head_files: dict[str, str], number: int = 31, base_files: dict[str, str] | None = None) -> PR:
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo)
    (repo / WORKFLOW).write_text(CLEAN)
    if base_config is not None:
        (repo / ".benchbot.yml").write_text(base_config)
    for path, text in (base_files or {}).items():
        (repo / path).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "greet-title")
    for path, text in head_files.items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Greet with the PR title")
    head = git(repo, "rev-parse", "HEAD").strip()
    gh.add_pull(REPO, number=number, head_sha=head, base_sha=base, head_ref="greet-title", base_ref="main",
                user="alice", title="Greet with the PR title", files=pr_files(repo, base, head))
    return PR(gh, repo, number, base, head, tmp_path, monkeypatch)


def _summary(pr: PR) -> str:
    [body] = [str(c["body"]) for c in pr.gh.issue_comments(REPO, pr.number) if "benchbot:summary" in str(c["body"])]
    return body


def _inline(pr: PR) -> list[tuple[str, int, str]]:
    return [(c["path"], c["line"], c["body"]) for c in pr.gh.review_comments(REPO, pr.number)]


def test_an_injectable_run_step_is_one_inline_zizmor_finding(tmp_path: Path, fake_github: FakeGitHub,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pr = _pr(tmp_path, fake_github, monkeypatch, None, {WORKFLOW: INJECTABLE})
    code, _ = pr.run("opened")
    assert code == 1
    inline = _inline(pr)
    assert [(path, line) for path, line, _ in inline] == [(WORKFLOW, 9)]
    [(_, _, body)] = inline
    assert body.count("**zizmor `zizmor/template-injection`**") == 1 and "actionlint/expression" in body
    assert "(https://docs.zizmor.sh/audits/#template-injection)" in body  # the tool's own documentation
    summary = _summary(pr)
    section = summary.split("### Workflows: zizmor and actionlint (2 new)", 1)[1].split("\n---\n", 1)[0]
    assert f"checked the 1 workflow file this pull request changes: `{WORKFLOW}`" in section
    assert "zizmor/template-injection" in section and "actionlint/expression" in section
    assert "### New in this pull request" not in summary  # nothing else is new
    # the next run edits the same comments: nothing posted twice
    pr.run("synchronize")
    assert len(_inline(pr)) == 1
    assert _summary(pr).count("### Workflows: zizmor and actionlint") == 1


def test_a_pull_request_cannot_switch_it_off(tmp_path: Path, fake_github: FakeGitHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ignored = INJECTABLE.replace('title }}"', 'title }}"  # zizmor: ignore[template-injection]')
    pr = _pr(tmp_path, fake_github, monkeypatch, None,
             {WORKFLOW: ignored, ".benchbot.yml": "ignore: [zizmor, actionlint]\n"})
    code, _ = pr.run("opened")
    assert code == 1
    [(path, line, body)] = _inline(pr)
    assert (path, line) == (WORKFLOW, 9) and "zizmor/template-injection" in body
    summary = _summary(pr)
    assert "### Workflows: zizmor and actionlint (2 new)" in summary
    # what the PR changes in the policy is shown: its configuration, and the suppression it adds
    notice = summary.split("### This pull request changes benchbot's configuration", 1)[1]
    assert f"`{WORKFLOW}:9` ignores `zizmor/template-injection`" in notice
    assert "| `ignore` |" in notice
    assert "Under it, 2 of this head's findings would not fail the check" in notice


def test_the_bases_configuration_and_suppressions_count(tmp_path: Path, fake_github: FakeGitHub,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pr = _pr(tmp_path, fake_github, monkeypatch, "ignore: [zizmor/template-injection]\n", {WORKFLOW: INJECTABLE})
    code, _ = pr.run("opened")
    [(_, _, body)] = _inline(pr)
    assert "zizmor/" not in body and "actionlint/expression" in body
    assert "### Workflows: zizmor and actionlint (1 new)" in _summary(pr)
    assert code == 1


ZIZMOR_OFF = "rules:\n  template-injection:\n    disable: true\n"


def test_a_pull_requests_zizmor_configuration_is_shown_not_obeyed(tmp_path: Path, fake_github: FakeGitHub,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pr = _pr(tmp_path, fake_github, monkeypatch, None, {WORKFLOW: INJECTABLE, ".github/zizmor.yml": ZIZMOR_OFF})
    code, _ = pr.run("opened")
    assert code == 1
    [(path, line, body)] = _inline(pr)
    assert (path, line) == (WORKFLOW, 9) and "zizmor/template-injection" in body
    notice = _summary(pr).split("### This pull request changes benchbot's configuration", 1)[1]
    assert ("It changes `.github/zizmor.yml`: the workflow checks of this review use the base's, the pull "
            "request's take effect once it is merged.") in notice


@pytest.mark.parametrize("config", [ZIZMOR_OFF, "rules:\n  template-injection:\n    ignore: ['greet.yml:9']\n"])
def test_the_bases_zizmor_configuration_counts(tmp_path: Path, fake_github: FakeGitHub,
                                              monkeypatch: pytest.MonkeyPatch, config: str) -> None:
    """zizmor reads the base's ``zizmor.yml`` (a disabled audit), and its ignore entries, which
    zizmor's ``--no-ignores`` leaves to us, drop what they name."""
    pr = _pr(tmp_path, fake_github, monkeypatch, None, {WORKFLOW: INJECTABLE}, base_files={"zizmor.yml": config})
    code, _ = pr.run("opened")
    [(_, _, body)] = _inline(pr)
    assert "zizmor/" not in body and "actionlint/expression" in body
    summary = _summary(pr)
    assert "### Workflows: zizmor and actionlint (1 new)" in summary
    assert "### This pull request changes benchbot's configuration" not in summary
    assert code == 1
