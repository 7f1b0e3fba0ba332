"""Shared test helpers: fixture repos are copied into temp dirs, never edited in place."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "seed"


def copy_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin:/usr/local/bin",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, text=True)
    return out.stdout


@pytest.fixture
def seed_repo(tmp_path: Path) -> Path:
    return copy_repo(EXAMPLE, tmp_path / "seed")


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI picks its format and colours from the environment (a CI runner sets
    GITHUB_ACTIONS=true): every test starts from a plain one."""
    for name in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True, scope="session")
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> object:
    """benchbot's persistent cache (``bot.cache``) lives in a temp dir for the whole run
    (CLI subprocesses inherit it): tests never write to the user's cache."""
    import os

    old = os.environ.get("BENCHBOT_CACHE_DIR")
    os.environ["BENCHBOT_CACHE_DIR"] = str(tmp_path_factory.mktemp("benchbot-cache"))
    yield None
    if old is None:
        os.environ.pop("BENCHBOT_CACHE_DIR", None)
    else:
        os.environ["BENCHBOT_CACHE_DIR"] = old


@pytest.fixture
def no_lint_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lint gathers: a whole-lint hit (``bot.lintcache``) would skip the caches below it
    that a test is about."""
    from bot import lintcache

    monkeypatch.setattr(lintcache, "key_of", lambda _tree, _conf: None)
