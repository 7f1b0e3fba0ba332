"""One inline comment per root cause, at most one per line, and never summary-only when the pull
request touched the cause: through the real PyGithub stack against the fake GitHub, on real git
repos built from the seed example."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from fakegithub import FakeGitHub, graphql

from tests.conftest import EXAMPLE, git
from tests.github.conftest import PR, REPO, pr_files

FLOW_ENTRY = (
    "\nkimik2.5-int4-mi325x-sglang: {image: \"lmsysorg/sglang:v0.5\", model: moonshotai/Kimi-K2.5, "
    "model-prefix: kimik2.5, runner: mi326x, precision: int4, framework: sglang, multinode: false, "
    "max-model-lenn: 4096, scenarios: {fixed-seq-len: [{isl: 1024, osl: 1024, "
    "search-space: [{tp: 8, conc-start: 4, conc-end: 64}]}]}}\n")


def _pr(tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None],
        base: Callable[[Path], None] | None = None) -> PR:
    """Base: the seed as it is (then ``base``). The PR's one commit is ``change``."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    if base is not None:
        base(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "change")
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD").strip()
    gh.add_pull(REPO, number=11, head_sha=head, base_sha=base, head_ref="change", base_ref="main", user="alice",
                title="change", files=pr_files(repo, base, head))
    return PR(gh, repo, 11, base, head, tmp_path, monkeypatch)


def _add_flow_entry(repo: Path) -> None:
    with (repo / "configs/amd-master.yaml").open("a") as fh:
        fh.write(FLOW_ENTRY)


def _top(gh: FakeGitHub) -> list[dict[str, object]]:
    return [c for c in gh.review_comments(REPO, 11) if c.get("in_reply_to_id") is None]


def test_two_causes_on_one_line_share_one_comment(tmp_path: Path, fake_github: FakeGitHub,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pr = _pr(tmp_path, fake_github, monkeypatch, _add_flow_entry)
    assert pr.run("opened")[0] == 1
    [c] = _top(fake_github)
    body = str(c["body"])
    assert c["path"] == "configs/amd-master.yaml" and "`unknown-runner-label`" in body and "`config-schema`" in body
    assert body.count("<!-- benchbot:finding ") == 1 and len(body.split("<!-- benchbot:finding ")[1].split()) >= 2
    [summary] = fake_github.issue_comments(REPO, 11)
    assert "introduces 2 findings" in summary["body"] and "1 inline comment on its changes" in summary["body"]
    writes = len(fake_github.writes())
    pr.run("synchronize")
    assert len(fake_github.writes()) == writes and len(_top(fake_github)) == 1


def test_a_rename_is_commented_on_the_renamed_file(tmp_path: Path, fake_github: FakeGitHub,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher is renamed while runners.yaml still names the old nodes: no added line to sit
    on, so one file-level comment on the renamed launcher carries both causes."""
    pr = _pr(tmp_path, fake_github, monkeypatch,
             lambda repo: git(repo, "mv", "runners/launch_mi325x-amds.sh", "runners/launch_mi325x-amd.sh"))
    assert pr.run("opened")[0] == 1
    [c] = _top(fake_github)
    assert c["path"] == "runners/launch_mi325x-amd.sh" and c["subject_type"] == "file" and c["line"] is None
    body = str(c["body"])
    assert "`no-launcher`" in body and "`unreachable-launcher`" in body
    assert "`configs/runners.yaml:6`](" in body and "(not changed here)" in body  # plain words
    [summary] = fake_github.issue_comments(REPO, 11)
    assert "on no line or file" not in summary["body"]
    writes = len(fake_github.writes())
    pr.run("synchronize")  # a rerun: nothing more
    assert len(fake_github.writes()) == writes


def test_a_deletion_is_commented_on_the_deleted_line(tmp_path: Path, fake_github: FakeGitHub,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The mi325x nodes are removed while two entries still use the label: the comment sits on the
    deleted label line of runners.yaml (the left side), not only in the summary."""
    def drop(repo: Path) -> None:
        path = repo / "configs/runners.yaml"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(ln for ln in lines if "mi325x" not in ln))

    pr = _pr(tmp_path, fake_github, monkeypatch, drop)
    assert pr.run("opened")[0] == 1
    [c] = _top(fake_github)
    assert c["path"] == "configs/runners.yaml" and c["side"] == "LEFT"
    base_lines = git(pr.repo, "show", f"{pr.base}:configs/runners.yaml").splitlines()
    assert "mi325x" in base_lines[int(str(c["line"])) - 1]
    assert "`unknown-runner-label`" in str(c["body"]) and "(not changed here)" in str(c["body"])


def test_thread_resolution_survives_faults_and_a_read_only_token(tmp_path: Path, fake_github: FakeGitHub,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pr = _pr(tmp_path, fake_github, monkeypatch, _add_flow_entry)
    assert pr.run("opened")[0] == 1
    config = pr.repo / "configs/amd-master.yaml"
    config.write_text(config.read_text().replace(FLOW_ENTRY, ""))
    pr.commit("drop the entry")
    # GraphQL refuses (a token without pull-requests: write): the comment is marked and replied to; the thread waits
    fake_github.fail("POST", r"^/graphql$", status=200, times=1, body={"data": None, "errors": [
        {"type": "FORBIDDEN", "message": "Resource not accessible by integration"}]})
    assert pr.run("synchronize")[0] == 0
    assert not any(t["isResolved"] for t in graphql.threads(fake_github.state, REPO, 11))
    # the next run, with a write token and a 502 that hides a landed mutation: resolved, one reply
    fake_github.fail("POST", r"^/graphql$", status=502, times=1, after=True)
    assert pr.run("synchronize")[0] == 0
    [thread] = graphql.threads(fake_github.state, REPO, 11)
    assert thread["isResolved"]
    replies = [c for c in fake_github.review_comments(REPO, 11) if c.get("in_reply_to_id") is not None]
    assert len(replies) == 1 and "Fixed in" in str(replies[0]["body"])
    writes = len(fake_github.writes())
    pr.run("synchronize")
    assert len(fake_github.writes()) == writes


CHANGELOG = Path(__file__).resolve().parents[1] / "rules" / "data" / "perf-changelog.yaml"


def test_a_new_entry_without_a_changelog_entry_and_an_edited_old_line(tmp_path: Path, fake_github: FakeGitHub,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """InferenceX's AGENTS.md: every performance change needs a new perf-changelog.yaml entry, and
    the file is append-only. The base has the changelog; the PR adds an MI325X SGLang entry and
    rewrites an old description."""
    def change(repo: Path) -> None:
        with (repo / "configs/amd-master.yaml").open("a") as fh:
            fh.write(FLOW_ENTRY.replace("runner: mi326x", "runner: mi325x").replace("max-model-lenn: 4096, ", ""))
        log = repo / "perf-changelog.yaml"
        log.write_text(log.read_text().replace('"MTP on MI355X"', '"MTP on MI355X (faster)"'))

    def base(repo: Path) -> None:
        shutil.copy(CHANGELOG, repo / "perf-changelog.yaml")

    pr = _pr(tmp_path, fake_github, monkeypatch, change, base)
    pr.run("opened")
    bodies = {str(c["path"]): str(c["body"]) for c in _top(fake_github)}
    assert "`changelog-missing`" in bodies.get("configs/amd-master.yaml", ""), bodies
    assert "kimik2.5-int4-mi325x-sglang" in bodies["configs/amd-master.yaml"]
    assert "`changelog-missing`" in bodies.get("perf-changelog.yaml", ""), bodies  # the edited old line
    [summary] = fake_github.issue_comments(REPO, 11)
    assert "changelog-missing" in summary["body"]
    # the fix appends the entry with this pull request's own link (from the event), in the diff; its
    # description is one line (the <summary> holds no YAML)
    link = fake_github.event_pull_request(REPO, 11)["pull_request"]["html_url"]
    assert link.endswith("/acme/bench/pull/11")
    assert f"+  pr-link: {link}\n" in summary["body"] and "+    - kimik2.5-int4-mi325x-sglang\n" in summary["body"]
    assert ("<summary>Fix: Append an entry for kimik2.5-int4-mi325x-sglang to the end of perf-changelog.yaml (then "
            "write its description) \u2014 review before applying</summary>") in summary["body"]
    assert "OWNER/REPO" not in summary["body"] and "pull/XXX" not in summary["body"]
