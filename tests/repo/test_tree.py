"""WorkTree and GitTree give the same view of a repo, symlinks resolved."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.repo.files.git import GitTree
from bot.repo.files.tree import TreeError, WorkTree, glob_match
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


# ------------------------------------------------------------------ the index, renames

def test_index_tree_reads_what_is_staged(repo: Path) -> None:
    from bot.repo.files.git import IndexTree

    staged = repo / "benchmarks" / "staged.sh"
    staged.write_text("echo staged\n")
    git(repo, "add", "benchmarks/staged.sh")
    staged.write_text("echo work tree\n")  # changed again, not staged
    (repo / "untracked.sh").write_text("echo untracked\n")
    os.remove(repo / "configs" / "runners.yaml")  # deleted in the work tree only
    tree = IndexTree(str(repo))
    assert tree.text("benchmarks/staged.sh") == "echo staged\n"
    assert not tree.is_file("untracked.sh")
    assert tree.read("configs/runners.yaml") == GitTree(str(repo), "HEAD").read("configs/runners.yaml")
    assert set(tree.files()) == set(GitTree(str(repo), "HEAD").files()) | {"benchmarks/staged.sh"}
    # symlinks from the index: the staged target is followed
    assert tree.resolve("runners/launch_mi325x-tw.sh") == "runners/launch_mi325x-amds.sh"
    assert tree.resolve("runners/escape.sh") is None and tree.resolve("runners/loop_a.sh") is None
    tree.prefetch(tree.files())
    assert tree.read("runners/launch_mi325x-tw.sh") == tree.read("runners/launch_mi325x-amds.sh")
    # read from a sub-folder: still the whole repo, by full names
    assert IndexTree(str(repo / "runners")).files() == tree.files()


def test_index_tree_skips_gitlinks_and_refuses_conflicts(repo: Path, tmp_path: Path) -> None:
    from bot.repo.files.git import IndexTree

    sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/sub")  # a submodule
    tree = IndexTree(str(repo))
    assert "vendor/sub" not in tree.files() and not tree.is_file("vendor/sub") and tree.read("vendor/sub") is None

    git(repo, "rm", "-q", "--cached", "vendor/sub")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "configs" / "runners.yaml").write_text("labels: {a: [x]}\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "configs" / "runners.yaml").write_text("labels: {b: [y]}\n")
    git(repo, "commit", "-qam", "main")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "merge", "-q", "other")  # a conflict: the index has stages 1-3 for the file
    with pytest.raises(TreeError, match=r"unmerged paths \(configs/runners.yaml\): resolve the conflicts"):
        IndexTree(str(repo)).files()
    with pytest.raises(TreeError, match="no git index"):
        IndexTree(str(tmp_path / "missing"))


def test_renames_between_revisions_index_and_work_tree(repo: Path) -> None:
    from bot.repo.files.git import STAGED, renames

    old = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi325x_mtp.sh"
    new = "benchmarks/moved/qwen3.5 fp8 \u00e9_mtp.sh"  # spaces and non-ASCII survive -z
    (repo / "benchmarks" / "moved").mkdir()
    git(repo, "mv", old, new)
    assert renames(str(repo), "HEAD", STAGED) == {old: new}
    assert renames(str(repo), "HEAD") == {old: new}  # the work tree (tracked files)
    launcher = repo / "runners" / "launch_mi325x-amds.sh"
    launcher.write_text(launcher.read_text() + "# edited, not moved\n")
    git(repo, "commit", "-qam", "move")
    assert renames(str(repo), "HEAD~1", "HEAD") == {old: new}
    assert renames(str(repo), "HEAD", "HEAD~1") == {new: old}
    assert renames(str(repo), "HEAD", "HEAD") == {}
    with pytest.raises(TreeError):
        renames(str(repo), "v9.9.9", "HEAD")
    with pytest.raises(TreeError, match="not a revision"):
        renames(str(repo), "--output=/tmp/x", "HEAD")


def test_a_lint_of_a_revision_reads_its_blobs_in_one_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every blob the lint reads (configs, shell files, workflows, the reference scan's files,
    scripts the profile excludes) comes from one ``git cat-file --batch``, however many files."""
    from bot.config import load_config
    from bot.lint import lint

    r = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    for i in range(30):  # more files for the reference scan, and scripts the profile excludes
        for folder in ("utils", "benchmarks/deprecated"):
            (r / folder).mkdir(parents=True, exist_ok=True)
            script = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_h200.sh"
            (r / folder / f"helper_{i}.sh").write_text(f"bash {script} {i}\n")
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "x")
    spawned: list[list[str]] = []
    real_run = subprocess.run

    def counting(cmd: list[str], *args: object, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        spawned.append(list(cmd))
        return real_run(cmd, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    rev = GitTree(str(r), "HEAD")
    monkeypatch.setattr(subprocess, "run", counting)
    got = lint(rev, load_config(rev))
    monkeypatch.undo()
    batches = [c for c in spawned if c[:1] == ["git"] and "cat-file" in c]
    assert len(batches) <= 2, batches  # symlink targets (if any) and the one batch
    work = WorkTree(str(r))
    want = lint(work, load_config(work))
    assert [f.fingerprint for f in got.findings] == [f.fingerprint for f in want.findings]
    assert got.facts.referenced.keys() == want.facts.referenced.keys()


_PART = st.text(alphabet="ab./*?[]!-", min_size=0, max_size=8)


@settings(max_examples=400, deadline=None)
@given(pattern=st.lists(_PART, min_size=1, max_size=3).map("**/".join), path=st.text(alphabet="ab./-", max_size=12))
def test_glob_match_is_fnmatch_with_double_star_folders(pattern: str, path: str) -> None:
    """The one-regex matcher (with its literal-start check) says what the definition says:
    fnmatch of the pattern, or of it with every ``**/`` dropped, ``**`` read as ``*``."""
    variants = {pattern, pattern.replace("**/", "")}
    want = any(fnmatch.fnmatchcase(path, v.replace("**", "*")) for v in variants)
    assert glob_match(pattern, path) is want


def test_glob_results_are_kept_per_tree_and_copied(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("a/x.sh", "a/y.sh", "b.sh"):
        (tmp_path / name).write_text("")
    tree = WorkTree(str(tmp_path))
    got = tree.glob(["a/*.sh"])
    got.append("mine")  # a caller's list is its own
    assert tree.glob(["a/*.sh"]) == ["a/x.sh", "a/y.sh"]
    assert tree.glob(["**/*.sh"], ["a/y.sh"]) == ["a/x.sh", "b.sh"]
