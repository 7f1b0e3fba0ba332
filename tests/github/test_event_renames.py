"""A pull request that moves a folder with old findings: through the real PyGithub stack against
the fake GitHub, the renames come from the PR files API (``status: renamed``, ``previous_filename``)
and the moved findings are not reported as new."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fakegithub import FakeGitHub

from bot.config import Config
from bot.github import review
from bot.github.port import ChangedFile
from bot.lint import lint
from bot.repo.files.git import GitTree
from bot.repo.files.tree import WorkTree
from tests.conftest import EXAMPLE, git
from tests.github.conftest import PR, REPO, pr_files

OLD = ("benchmarks/experimental/sweep_a.sh", "benchmarks/experimental/sweep_b.sh")
NEW = ("benchmarks/attic/sweep_a.sh", "benchmarks/attic/sweep_b.sh")
LAUNCHER = "runners/launch_mi300x-amds.sh"


@pytest.fixture
def move_pr(tmp_path: Path, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> PR:
    """Base: the seed (its launcher bugs) plus two scripts nothing runs. The PR moves their folder."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    for path in OLD:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("#!/usr/bin/env bash\necho sweep\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "attic")
    git(repo, "mv", "benchmarks/experimental", "benchmarks/attic")
    git(repo, "commit", "-q", "-m", "Move the sweeps to the attic")
    head = git(repo, "rev-parse", "HEAD").strip()
    fake_github.add_pull(REPO, number=9, head_sha=head, base_sha=base, head_ref="attic", base_ref="main",
                         user="alice", title="Move the sweeps", files=pr_files(repo, base, head))
    return PR(fake_github, repo, 9, base, head, tmp_path, monkeypatch)


def test_moved_folder_keeps_its_old_findings_old(move_pr: PR) -> None:
    gh = move_pr.gh
    files = {f["filename"]: f for f in gh.pull_files(REPO, 9)}
    for old, new in zip(OLD, NEW):
        assert files[new]["status"] == "renamed" and files[new]["previous_filename"] == old

    base = lint(GitTree(str(move_pr.repo), move_pr.base), Config()).findings
    head = lint(WorkTree(str(move_pr.repo)), Config()).findings
    dead = sorted(f.path for f in head if f.rule == "dead-script")
    assert dead == list(NEW)  # the moved scripts are still dead: old findings, at new paths
    assert len(review.split(head, base).new) == 2  # without the renames they would look new

    code, step_summary = move_pr.run("opened")
    assert code == 0
    assert gh.reviews(REPO, 9) == [] and gh.review_comments(REPO, 9) == []
    [summary] = gh.issue_comments(REPO, 9)
    assert "introduces no findings" in summary["body"]
    assert re.search(rf"<summary>Already on main, not introduced here: {len(head)} findings \([^)]*\), "
                     r"\d+ near lines this pull request changes</summary>", summary["body"])
    assert "It fixes" not in summary["body"]
    assert "introduces no findings" in step_summary


def test_fixed_findings_are_counted(move_pr: PR) -> None:
    """A second commit applies benchbot's fix to the MI300X launcher: the summary says what it fixes."""
    base = lint(GitTree(str(move_pr.repo), move_pr.base), Config()).findings
    (fix,) = [f.fix for f in lint(WorkTree(str(move_pr.repo)), Config()).findings
              if f.rule == "ignored-variant" and f.path == LAUNCHER]
    assert fix is not None
    subprocess.run(["git", "-C", str(move_pr.repo), "apply"], input=fix.diff.encode(), check=True)
    move_pr.commit("Dispatch the MTP script on MI300X")
    head = lint(WorkTree(str(move_pr.repo)), Config()).findings
    api = [ChangedFile(f["filename"], f["status"], f.get("patch"), f.get("previous_filename"))
           for f in move_pr.gh.pull_files(REPO, 9)]
    fixed = review.split(head, base, review.renamed(api)).fixed
    assert fixed and all(fp in {f.fingerprint for f in base if "mi300x" in f.path} for fp in fixed)

    assert move_pr.run("opened")[0] == 0
    [summary] = move_pr.gh.issue_comments(REPO, 9)
    n = len(fixed)
    assert f"It fixes {n} finding{'' if n == 1 else 's'} that {'is' if n == 1 else 'are'} on `main`." \
        in summary["body"]
    # and lists them, under their own heading (credit where it is due)
    assert f"### Fixed by this pull request ({n})" in summary["body"]
    assert "~~BB103 `ignored-variant`~~ `runners/launch_mi300x-amds.sh:" in summary["body"]
    assert "introduces no findings" in summary["body"]
