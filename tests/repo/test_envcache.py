"""Rendered envs kept across processes (``bot.repo.cache.envcache``): a warm lint renders no env
and finds what a cold one finds; an edited workflow is another file; a damaged file is a
miss; the keys do not depend on the interpreter's hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import cache
from bot.config import load_config
from bot.lint import LintResult, lint
from bot.repo.cache import envcache, evalcache
from bot.repo.env import wfenv
from bot.repo.files import parsed
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, ROOT, copy_repo

FIXTURE_NAMES = ["workflow-env", "workflow-env-clean", "inconsistent-dispatch"]  # their workflows give the env


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_lint_cache: None) -> Path:
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    _new_process()
    return tmp_path / "cache"


def _new_process() -> None:
    """What a new process starts with: nothing in memory, only the disk."""
    parsed.reset()
    evalcache.reset()


def _lint(root: Path) -> tuple[list[tuple[str, str, int, str]], LintResult]:
    tree = WorkTree(str(root))
    result = lint(tree, load_config(tree))
    return [(f.rule, f.path, f.line, f.message) for f in result.findings], result


def _store(result: LintResult) -> envcache.EnvStore:
    disk = result.facts.envs.disk
    assert disk is not None
    return disk


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_warm_lint_renders_no_env_and_finds_the_same(name: str, fresh: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_repo(FIXTURES / name, tmp_path / "r")
    cold, first = _lint(root)
    assert _store(first).misses > 0 and _store(first).hits == 0
    assert [p for p in (fresh / "envs").rglob("*") if p.is_file()]
    _new_process()
    renders: list[object] = []
    real = wfenv.render_env

    def counting(*args: object, **kw: object) -> object:
        renders.append(args[0])
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(wfenv, "render_env", counting)
    warm, second = _lint(root)
    assert warm == cold
    assert _store(second).hits > 0 and _store(second).misses == 0
    assert renders == []  # every env and every "which path runs this point" came from the file


def test_an_edited_workflow_renders_again(fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    _lint(root)
    wf = next(p for p in (root / ".github" / "workflows").iterdir() if "SPEC_DECODING" in p.read_text())
    text = wf.read_text()
    assert "SPEC_DECODING: ${{" in text
    wf.write_text(text.replace("SPEC_DECODING: ${{", "SPEC_DECODING_UNUSED: ${{", 1))
    _new_process()
    edited, result = _lint(root)
    assert _store(result).misses > 0 and _store(result).hits == 0  # another file: the workflows changed
    _new_process()
    cache.disable()
    try:
        assert edited == _lint(root)[0]  # what a lint without any cache finds
    finally:
        cache.disable(False)


def test_a_second_lint_in_a_process_writes_whole_files(fresh: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``event`` lints head and base in one process, ``history`` a commit after another: the
    second lint gets most answers from the process's memo, and a file it rewrites (an entry of
    it changed) must still hold every answer of its entries, not only the new ones."""
    monkeypatch.setattr(envcache, "BUCKETS", 1)  # every entry in one file
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    _lint(root)
    config = root / "configs" / "amd-master.yaml"
    config.write_text(config.read_text().replace("sglang:v0.5.9-rocm700-mi30x", "sglang:v0.5.10-rocm700-mi30x", 1))
    edited, second = _lint(root)  # the same process: the memo answers the unchanged entries
    assert _store(second).misses > 0
    _new_process()
    again, third = _lint(root)
    assert again == edited
    assert _store(third).misses == 0 and _store(third).hits > 0


def test_a_damaged_file_is_a_miss(fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    cold, _ = _lint(root)
    files = [p for p in (fresh / "envs").rglob("*") if p.is_file()]
    assert len(files) > 1  # one per entry
    for f in files:
        head, _, body = f.read_bytes().partition(b"\n")
        data = json.loads(body)
        for k in data:  # hostile values under a valid header: wrong types everywhere
            data[k] = {"TP": [{"C": "os.system"}]} if isinstance(data[k], dict) else "yes"
        cache.put("envs", f.name, json.dumps(data).encode())
    _new_process()
    again, result = _lint(root)
    assert again == cold and _store(result).hits == 0 and _store(result).misses > 0
    for f in files:
        f.write_bytes(b"garbage")
    _new_process()
    assert _lint(root)[0] == cold


def test_the_file_key_does_not_depend_on_the_hash_seed(fresh: Path, tmp_path: Path) -> None:
    """Two processes with different PYTHONHASHSEEDs: the second makes nothing new (its keys,
    frozensets of names among them, are the first's), so it leaves the files unwritten (a
    sentinel added to each between the runs is still there; a write keeps only what a lint used)."""
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    env = {**os.environ, "BENCHBOT_CACHE_DIR": str(fresh)}
    env.pop("BENCHBOT_NO_CACHE", None)
    outputs = []
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(root), "--format", "json"], cwd=ROOT,
                              env={**env, "PYTHONHASHSEED": seed}, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        outputs.append(json.loads(proc.stdout)["findings"])
        files = sorted(p for p in (fresh / "envs").rglob("*") if p.is_file())
        if seed == "1":
            first = files
            for f in files:
                data = json.loads(f.read_bytes().partition(b"\n")[2])
                cache.put("envs", f.name, json.dumps({**data, "sentinel": True}).encode())
    assert files == first and len(files) > 1  # no file of another key
    for f in files:
        assert json.loads(f.read_bytes().partition(b"\n")[2]).get("sentinel") is True
    assert outputs[0] == outputs[1]


def test_history_keeps_envs_in_the_process(fresh: Path, tmp_path: Path) -> None:
    """``history`` walks commits with the env files off (the process memo shares renders between
    commits); a lint afterwards writes them as before."""
    from bot import history

    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], cwd=root, check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                         text=True).stdout.strip()
    (linted,) = list(history.lint_all(str(root), [sha], None, lambda c: c))
    assert linted.findings is not None and linted.findings
    assert not (fresh / "envs").exists()
    assert evalcache.shared().misses > 0  # the evaluations still went to the persistent cache
    _new_process()
    _lint(root)
    assert [p for p in (fresh / "envs").rglob("*") if p.is_file()]


def test_sub_keys_sort_sets() -> None:
    a = envcache._sub(("some", "file", 3, ("e", b"\x01"), b"\x02", "n", "l", frozenset({"B", "A", "C"})))
    b = envcache._sub(("some", "other file", 3, ("e", b"\x01"), b"\x02", "n", "l", frozenset({"C", "A", "B"})))
    assert a == b and "{'A','B','C'}" in a
    assert envcache._sub(("env", "f", 3, ("e", b"\x01"), b"\x02", "n", "l")) != \
        envcache._sub(("env", "f", 4, ("e", b"\x01"), b"\x02", "n", "l"))
