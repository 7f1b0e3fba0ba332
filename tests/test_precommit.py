"""The pre-commit hook (.pre-commit-hooks.yaml), run by a real pre-commit on a real git copy of the example.

The hook repo is a committed snapshot of this checkout's work tree (tracked and untracked-but-not-ignored
files), so the test checks the code as it is on disk, whether or not it is committed: ``pre-commit try-repo``
on a dirty directory would only pick up tracked changes (it stages them with ``git add -u``), not new files.

Installing the hook's environment (a virtualenv with benchbot and its dependencies from the package index)
takes most of the time. ``try-repo`` always installs into a throwaway store, so it runs once; the other runs
go through a ``.pre-commit-config.yaml`` -- the way users install the hook -- with a PRE_COMMIT_HOME shared by
the session, so that environment is installed once as well.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# pre-commit is a declared test dependency: if it is missing this module fails to import (an error, not a skip)
from pre_commit.clientlib import load_manifest  # type: ignore[import-untyped]

from tests.conftest import EXAMPLE, ROOT, copy_repo, git

HOOK_ID = "benchbot"


def _manifest_hook() -> dict[str, object]:
    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))  # validates against pre-commit's schema
    (hook,) = [h for h in hooks if h["id"] == HOOK_ID]
    return hook  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repo holding this checkout's work tree, committed: (path, commit)."""
    dst = tmp_path_factory.mktemp("benchbot-hook") / "benchbot"
    dst.mkdir()
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_symlink() and not src.exists():  # deleted in the work tree, not yet in the index
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel, follow_symlinks=False)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "--no-verify", "-m", "snapshot")
    return dst, git(dst, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def pc_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for pre-commit: its own cache, a git that ignores the user's config, a commit identity.

    HOME is left alone on purpose: pip reads its index configuration and cache from there."""
    base = tmp_path_factory.mktemp("pre-commit")
    (base / "gitconfig").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.pop("SKIP", None)  # pre-commit's "skip these hook ids"
    env.update({
        "PRE_COMMIT_HOME": str(base / "home"),
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    })
    return env


def pre_commit_cmd(repo: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "pre_commit", *args, "--color=never"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)
    return proc.returncode, proc.stdout + proc.stderr


def committed_seed(dst: Path, extra: dict[str, str] | None = None) -> Path:
    repo = copy_repo(EXAMPLE, dst)
    for name, text in (extra or {}).items():
        (repo / name).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "seed")
    return repo


def lint_json(repo: Path) -> dict[str, list[dict[str, object]]]:
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_manifest_runs_on_dispatch_files_only() -> None:
    hook = _manifest_hook()
    assert hook["entry"] == "benchbot lint" and hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["require_serial"] is True
    files = re.compile(str(hook["files"]))
    for path in ("configs/amd-master.yaml", "configs/runners.yaml", ".github/configs/nvidia-master.yaml",
                 "runners/launch_mi300x-amds.sh", "benchmarks/single_node/fixed_seq_len/x.sh",
                 "benchmarks/benchmark_lib.sh", ".github/workflows/benchmark-tmpl.yml",
                 ".benchbot.yml", ".benchbot.yaml", "pyproject.toml"):
        assert files.search(path), path
    for path in ("README.md", "docs/configs/x.yaml", "utils/runners/x.sh", "sub/pyproject.toml",
                 ".benchbot.yml.bak", ".github/CODEOWNERS", "tests/benchmarks/x.sh"):
        assert not files.search(path), path


def test_try_repo_fails_on_the_seed_bug(tmp_path: Path, hook_repo: tuple[Path, str],
                                        pc_env: dict[str, str]) -> None:
    repo = committed_seed(tmp_path / "seed")
    code, out = pre_commit_cmd(repo, pc_env, "try-repo", str(hook_repo[0]), HOOK_ID, "--all-files")
    assert code == 1, out
    assert re.search(r"^benchbot\.+Failed$", out, re.M), out
    assert "[ignored-variant]" in out


def test_hook_skips_unrelated_files_and_passes_once_fixed(tmp_path: Path, hook_repo: tuple[Path, str],
                                                         pc_env: dict[str, str]) -> None:
    path, rev = hook_repo
    config = yaml.safe_dump({"repos": [{"repo": str(path), "rev": rev, "hooks": [{"id": HOOK_ID}]}]})
    repo = committed_seed(tmp_path / "seed", {".pre-commit-config.yaml": config})

    code, out = pre_commit_cmd(repo, pc_env, "run", "--all-files")
    assert code == 1 and re.search(r"^benchbot\.+Failed$", out, re.M), out
    assert "[ignored-variant]" in out and "[dead-script]" in out

    # a change to a file outside the dispatch chain does not run the (failing) hook
    code, out = pre_commit_cmd(repo, pc_env, "run", "--files", "README.md")
    assert code == 0 and re.search(r"^benchbot\.+\(no files to check\)Skipped$", out, re.M), out
    # a change to a launcher does, and the hook lints the whole repo, not just that file
    code, out = pre_commit_cmd(repo, pc_env, "run", "--files", "runners/launch_mi300x-amds.sh")
    assert code == 1 and "launch_mi325x-amds.sh" in out, out

    findings = lint_json(repo)["findings"]
    assert sorted(str(f["rule"]) for f in findings) == ["dead-script"] * 2 + ["ignored-variant"] * 2
    for i, finding in enumerate(f for f in findings if f["rule"] == "ignored-variant"):
        fix = finding["fix"]
        assert isinstance(fix, dict)
        patch = tmp_path / f"fix{i}.patch"
        patch.write_text(fix["diff"])
        git(repo, "apply", str(patch))
    # the dead _mtp scripts are dispatched by the fixed launchers: nothing left to delete or wire up
    assert lint_json(repo)["findings"] == []
    git(repo, "commit", "-q", "--no-verify", "-am", "dispatch the mtp scripts")

    code, out = pre_commit_cmd(repo, pc_env, "run", "--all-files")
    assert code == 0 and re.search(r"^benchbot\.+Passed$", out, re.M), out
