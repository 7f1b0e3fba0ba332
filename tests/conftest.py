"""Shared test helpers: fixture repos are copied into temp dirs, never edited in place."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "seed"
# folders of tests/fixtures that are no benchmark repos: expected outputs, lm_eval results (tests/test_cli_eval.py)
NOT_REPOS = frozenset({"expected", "evals", "recipes"})

# pytest puts the running test's node id in PYTEST_CURRENT_TEST, and Linux allows one environment
# string at most 128 KiB: a longer id makes every subprocess of that test (git, the CLI) fail to start.
MAX_NODEID = 300
_SPELLED_OUT = 100  # pytest >= 9.2 replaces a str/bytes parameter longer than this by argname+index
_ESCAPES = {i: f"\\x{i:02x}" for i in range(128) if i not in range(32, 127)} | {9: "\\t", 10: "\\n", 13: "\\r"}


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A long str or bytes parameter spelled out in the test id, escaped as pytest before 9.2 does
    (9.2 shortens it): ids, and so the length check below, are the same on every pytest we support."""
    if not isinstance(val, str | bytes) or len(val) <= _SPELLED_OUT:
        return None
    text = val.decode("ascii", "backslashreplace") if isinstance(val, bytes) else val.encode("unicode_escape").decode()
    return text.translate(_ESCAPES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collection fails on a test id over MAX_NODEID characters: give its case a short explicit id."""
    long = [item.nodeid for item in items if len(item.nodeid) > MAX_NODEID]
    if long:
        shown = "\n".join(f"  {nodeid[:150]}... ({len(nodeid)} characters)" for nodeid in long[:10])
        raise pytest.UsageError(
            f"{len(long)} test id(s) over {MAX_NODEID} characters (pytest puts the id in PYTEST_CURRENT_TEST, and "
            f"one environment string is limited to 128 KiB); give these cases a short explicit id with "
            f"pytest.param(..., id=...) or parametrize(..., ids=...):\n{shown}")


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
    GITHUB_ACTIONS=true), and the cache whom it trusts (``CI``, ``BENCHBOT_CACHE_KEY``,
    ``bot.cachetrust``): every test starts from a plain one, a developer's machine."""
    for name in ("GITHUB_ACTIONS", "CI", "BENCHBOT_CACHE_KEY", "NO_COLOR", "FORCE_COLOR", "TERM"):
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
