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

HOOK_ID = "benchbot"  # the staged tree, only what the commit introduces
HOOK_ALL = "benchbot-all"  # every finding of the work tree
FILES_RE = r"^(configs/|\.github/configs/|runners/|benchmarks/|\.github/workflows/|\.benchbot\.ya?ml$|pyproject\.toml$)"


def _manifest_hook(hook_id: str = HOOK_ID) -> dict[str, object]:
    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))  # validates against pre-commit's schema
    (hook,) = [h for h in hooks if h["id"] == hook_id]
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
    hook, whole = _manifest_hook(), _manifest_hook(HOOK_ALL)
    assert hook["entry"] == "benchbot lint --staged" and whole["entry"] == "benchbot lint"
    for h in (hook, whole):
        assert h["language"] == "python" and h["pass_filenames"] is False and h["require_serial"] is True
        assert h["files"] == FILES_RE and h["types_or"] == ["file", "symlink"]
    files = re.compile(str(hook["files"]))
    for path in ("configs/amd-master.yaml", "configs/runners.yaml", ".github/configs/nvidia-master.yaml",
                 "runners/launch_mi300x-amds.sh", "benchmarks/single_node/fixed_seq_len/x.sh",
                 "benchmarks/benchmark_lib.sh", ".github/workflows/benchmark-tmpl.yml",
                 ".benchbot.yml", ".benchbot.yaml", "pyproject.toml"):
        assert files.search(path), path
    for path in ("README.md", "docs/configs/x.yaml", "utils/runners/x.sh", "sub/pyproject.toml",
                 ".benchbot.yml.bak", ".github/CODEOWNERS", "tests/benchmarks/x.sh"):
        assert not files.search(path), path


def test_try_repo_fails_on_the_seed_bug_in_the_first_commit(tmp_path: Path, hook_repo: tuple[Path, str],
                                                             pc_env: dict[str, str]) -> None:
    """Staged, not committed: there is no HEAD yet, so every finding is new."""
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    code, out = pre_commit_cmd(repo, pc_env, "try-repo", str(hook_repo[0]), HOOK_ID)
    assert code == 1, out
    assert re.search(r"^benchbot\.+Failed$", out, re.M), out
    assert "[ignored-variant]" in out and "already on HEAD" not in out


def test_hook_skips_unrelated_files_and_passes_once_fixed(tmp_path: Path, hook_repo: tuple[Path, str],
                                                         pc_env: dict[str, str]) -> None:
    path, rev = hook_repo
    config = yaml.safe_dump({"repos": [{"repo": str(path), "rev": rev, "hooks": [{"id": HOOK_ALL}]}]})
    repo = committed_seed(tmp_path / "seed", {".pre-commit-config.yaml": config})

    code, out = pre_commit_cmd(repo, pc_env, "run", "--all-files")
    assert code == 1 and re.search(r"^benchbot \(whole repo\)\.+Failed$", out, re.M), out
    assert "[ignored-variant]" in out and "kimik2.5_int4_mi300x_mtp.sh" in out

    # a change to a file outside the dispatch chain does not run the (failing) hook
    code, out = pre_commit_cmd(repo, pc_env, "run", "--files", "README.md")
    assert code == 0 and re.search(r"^benchbot \(whole repo\)\.+\(no files to check\)Skipped$", out, re.M), out
    # a change to a launcher does, and the hook lints the whole repo, not just that file
    code, out = pre_commit_cmd(repo, pc_env, "run", "--files", "runners/launch_mi300x-amds.sh")
    assert code == 1 and "launch_mi325x-amds.sh" in out, out

    findings = lint_json(repo)["findings"]
    rules = [str(f["rule"]) for f in findings]
    assert rules.count("ignored-variant") == 2 and set(rules) <= {"dead-script", "ignored-variant"}
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
    assert code == 0 and re.search(r"^benchbot \(whole repo\)\.+Passed$", out, re.M), out


# ------------------------------------------------------------------ the staged hook, through `git commit`

CONFIG = "configs/amd-master.yaml"
NEW_SCRIPT = "benchmarks/single_node/fixed_seq_len/glm5_int4_mi300x.sh"


@pytest.fixture
def hooked_seed(tmp_path: Path, hook_repo: tuple[Path, str], pc_env: dict[str, str]) -> Path:
    """The seed with its bugs, committed as is, with the staged hook installed as users install it
    (``verbose`` so that a passing hook still prints its summary line)."""
    path, rev = hook_repo
    config = yaml.safe_dump({"repos": [{"repo": str(path), "rev": rev, "hooks": [{"id": HOOK_ID, "verbose": True}]}]})
    repo = committed_seed(tmp_path / "seed", {".pre-commit-config.yaml": config})
    code, out = pre_commit_cmd(repo, pc_env, "install")
    assert code == 0, out
    return repo


def git_commit(repo: Path, env: dict[str, str], message: str) -> tuple[int, str]:
    """``git commit`` as a user runs it: the installed pre-commit hook decides."""
    proc = subprocess.run(["git", "commit", "-m", message], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)
    return proc.returncode, proc.stdout + proc.stderr


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def new_entry(repo: Path) -> None:
    """Add a config entry (a copy of the first, for another model prefix): its script is glm5_int4_mi300x.sh."""
    text = (repo / CONFIG).read_text()
    first = text.split("\n\n", 1)[0]
    entry = first.replace("kimik2.5-int4-mi300x-vllm:", "glm5-int4-mi300x-vllm:", 1)
    entry = entry.replace("model-prefix: kimik2.5", "model-prefix: glm5", 1)
    assert entry != first and "glm5-int4-mi300x-vllm:" in entry
    (repo / CONFIG).write_text(text.rstrip("\n") + "\n\n" + entry + "\n")


def test_commit_with_old_findings_passes(hooked_seed: Path, pc_env: dict[str, str]) -> None:
    """(a) The repo has findings already; a comment-only edit commits, and the hook says what it did not show."""
    repo = hooked_seed
    before = head(repo)
    n = len(lint_json(repo)["findings"])
    assert n >= 2
    (repo / CONFIG).write_text("# AMD entries\n" + (repo / CONFIG).read_text())
    git(repo, "add", CONFIG)
    code, out = git_commit(repo, pc_env, "comment")
    assert code == 0, out
    assert re.search(r"^benchbot\.+Passed$", out, re.M), out
    assert f"0 findings; {n} findings already on HEAD not shown" in out, out
    assert head(repo) != before


def test_commit_of_a_new_mistake_fails_naming_only_it(hooked_seed: Path, pc_env: dict[str, str]) -> None:
    """(b) A new mistake staged: the hook fails and reports it, not the findings already on HEAD."""
    repo = hooked_seed
    before = head(repo)
    (repo / CONFIG).write_text((repo / CONFIG).read_text().replace("runner: mi300x", "runner: mi300x-typo", 1))
    git(repo, "add", CONFIG)
    code, out = git_commit(repo, pc_env, "typo")
    assert code == 1, out
    assert re.search(r"^benchbot\.+Failed$", out, re.M), out
    reported = re.findall(r"\[([a-z-]+)\]$", out, re.M)
    assert reported == ["unknown-runner-label"], out
    assert re.search(r"^1 finding \(1 error\); \d+ findings already on HEAD not shown", out, re.M), out
    assert head(repo) == before  # nothing committed


def test_the_index_is_what_counts(hooked_seed: Path, pc_env: dict[str, str]) -> None:
    """(c) A fix that is in the work tree but not staged does not make the commit pass: the new
    entry is staged, its script exists only in the work tree (untracked: pre-commit does not stash
    untracked files, so a work-tree lint would see it)."""
    repo = hooked_seed
    new_entry(repo)
    git(repo, "add", CONFIG)
    shutil.copy(repo / "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh", repo / NEW_SCRIPT)
    assert "missing-script" not in {f["rule"] for f in lint_json(repo)["findings"]}  # the work tree is fine
    code, out = git_commit(repo, pc_env, "glm5 on mi300x")
    assert code == 1, out
    assert re.findall(r"\[([a-z-]+)\]$", out, re.M) == ["missing-script"], out
    assert "glm5_int4_mi300x.sh, which does not exist" in out, out
    # staged too: the commit goes through
    git(repo, "add", NEW_SCRIPT)
    code, out = git_commit(repo, pc_env, "glm5 on mi300x")
    assert code == 0 and re.search(r"^benchbot\.+Passed$", out, re.M), out


def test_the_seed_mistake_fails_naming_only_its_cause_then_passes_after_fix(
        hooked_seed: Path, pc_env: dict[str, str]) -> None:
    """The Done-when of the root-cause work: a repo with unrelated findings already on HEAD; the seed's
    mistake (a launcher that drops SPEC_SUFFIX) is committed; the hook names only that cause (its dead
    _mtp script is a consequence, not a second finding); ``lint --fix`` mends it and the commit passes."""
    repo = hooked_seed
    launcher = "runners/launch_mi325x-amds.sh"
    # the mistake comes with an unrelated edit, so that the fixed file differs from the one committed
    broken = (repo / launcher).read_bytes().replace(b"#!/usr/bin/env bash\n", b"#!/usr/bin/env bash\n# retuned\n", 1)
    # first a clean launcher and an unrelated finding (a script nothing runs), committed without the hook
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--fix"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repo / "benchmarks/single_node/fixed_seq_len/old_probe.sh").write_text("#!/usr/bin/env bash\necho probe\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "fixed launchers; an old probe script")
    assert [f["rule"] for f in lint_json(repo)["findings"]] == ["dead-script"]
    before = head(repo)
    # the seed's mistake, committed
    (repo / launcher).write_bytes(broken)
    git(repo, "add", launcher)
    code, out = git_commit(repo, pc_env, "mi325x launcher")
    assert code == 1, out
    assert re.findall(r"\[([a-z-]+)\]$", out, re.M) == ["ignored-variant"], out
    assert "consequences: 1 script left dead" in out, out
    assert re.search(r"^1 finding \(1 error\), 1 with a fix \(--show-fixes; 1 safe: --fix applies it\); "
                     r"1 finding already on HEAD not shown", out, re.M), out
    assert head(repo) == before
    # --fix, stage, commit: passes
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--fix"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.stdout.startswith(f"fixed 1 finding in {launcher}:"), proc.stdout
    git(repo, "add", launcher)
    code, out = git_commit(repo, pc_env, "mi325x launcher")
    assert code == 0 and re.search(r"^benchbot\.+Passed$", out, re.M), out
    assert head(repo) != before
