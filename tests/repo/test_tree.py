"""WorkTree and GitTree give the same view of a repo, symlinks resolved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.repo.tree import GitTree, TreeError, WorkTree
from tests.conftest import FIXTURES, copy_repo, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = copy_repo(FIXTURES / "symlink-launcher", tmp_path / "r")
    os.symlink("../outside", r / "runners" / "escape.sh")
    os.symlink("loop_b.sh", r / "runners" / "loop_a.sh")
    os.symlink("loop_a.sh", r / "runners" / "loop_b.sh")
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "x")
    return r


def test_work_tree_and_git_tree_agree(repo: Path) -> None:
    work, rev = WorkTree(str(repo)), GitTree(str(repo), "HEAD")
    assert work.files() == rev.files()
    for f in work.files():
        assert work.resolve(f) == rev.resolve(f)
        assert work.read(f) == rev.read(f)
    assert work.is_dir("runners") and rev.is_dir("runners") and not rev.is_dir("nope")


def test_symlinks(repo: Path) -> None:
    for tree in (WorkTree(str(repo)), GitTree(str(repo), "HEAD")):
        assert tree.is_link("runners/launch_mi325x-tw.sh")
        assert tree.resolve("runners/launch_mi325x-tw.sh") == "runners/launch_mi325x-amds.sh"
        assert tree.read("runners/launch_mi325x-tw.sh") == tree.read("runners/launch_mi325x-amds.sh")
        assert tree.resolve("runners/escape.sh") is None  # leaves the repo
        assert tree.resolve("runners/loop_a.sh") is None  # a loop


def test_git_tree_reads_an_old_revision(repo: Path) -> None:
    (repo / "new.sh").write_text("echo new\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "y")
    old, new = GitTree(str(repo), "HEAD~1"), GitTree(str(repo), "HEAD")
    assert not old.is_file("new.sh") and new.text("new.sh") == "echo new\n"
    old.prefetch(old.files())
    assert old.read("configs/runners.yaml") == (repo / "configs" / "runners.yaml").read_bytes()


def test_errors(tmp_path: Path, repo: Path) -> None:
    with pytest.raises(TreeError):
        WorkTree(str(tmp_path / "missing"))
    with pytest.raises(TreeError, match="not a revision"):
        GitTree(str(repo), "v9.9.9")


def test_glob() -> None:
    tree = WorkTree(str(FIXTURES / "dead-and-helpers"))
    scripts = tree.glob(["benchmarks/**/*.sh"], ["**/deprecated/**"])
    assert "benchmarks/benchmark_lib.sh" in scripts
    assert not any("deprecated" in s for s in scripts)
