"""``bot.cache``: entries by key, verified on read (sealed with BENCHBOT_CACHE_KEY where the
folder may hold what others wrote, ``bot.cachetrust``), read within budgets
(``bot.cachejson``), atomic, bounded, off with --no-cache. The fast schema validator, which
was kept here, is shipped with the package now (tests/repo/test_schema.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot import cache
from bot.shell.ir import nodes as ir
from tests.conftest import FIXTURES, ROOT, copy_repo


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    return tmp_path / "c"


def test_put_get_and_a_damaged_entry_is_a_miss(where: Path) -> None:
    k = cache.key("a", b"b")
    assert cache.get("t", k) is None
    cache.put("t", k, b"payload")
    assert cache.get("t", k) == b"payload"
    assert k != cache.key("a", b"c") and k != cache.key("ab")  # parts are length-prefixed
    (entry,) = [p for p in where.rglob("*") if p.is_file()]
    entry.write_bytes(entry.read_bytes()[:-1] + b"X")  # a flipped byte
    assert cache.get("t", k) is None and not entry.exists()  # removed, never returned
    with pytest.raises(ValueError):
        cache.get("../x", k)
    with pytest.raises(ValueError):
        cache.get("t", "../../etc/passwd")


def test_off_by_flag_or_env(where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k = cache.key("x")
    cache.disable()
    try:
        cache.put("t", k, b"1")
        assert cache.get("t", k) is None and not where.exists()
    finally:
        cache.disable(False)
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    cache.put("t", k, b"1")
    assert not where.exists()


def test_bounded_least_recently_used_go_first(where: Path) -> None:
    keys = [cache.key(str(i)) for i in range(5)]
    for i, k in enumerate(keys):
        cache.put("t", k, bytes(100))
        os.utime(next(where.rglob(k)), (1000 + i, 1000 + i))
    assert cache.get("t", keys[0]) is not None  # a hit: now the most recent
    n, total = cache.size()
    assert n == 5
    cache.prune(total - 1)  # one entry too many: the least recently used (keys[1]) goes
    assert cache.get("t", keys[1]) is None and cache.get("t", keys[0]) is not None
    assert cache.clear() == 4 and cache.size() == (0, 0)


def test_writes_walk_the_folder_once_until_it_may_be_over_the_bound(where: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A process walks the folder at its first write, then counts what it writes: a cold lint
    writing thousands of entries does not walk it again and again; past the bound it prunes."""
    walks: list[int] = []
    real = cache._entries

    def counting() -> list[tuple[float, int, Path]]:
        walks.append(1)
        return real()

    monkeypatch.setattr(cache, "_entries", counting)
    for i in range(300):
        cache.put("t", cache.key("w", str(i)), bytes(1000))
    assert len(walks) == 1 and cache.size()[0] == 300
    n, total = cache.size()
    walks.clear()
    monkeypatch.setattr(cache, "MAX_BYTES", total + 3 * 1100)  # three more entries fit (with headers)
    for i in range(300, 310):
        cache.put("t", cache.key("w", str(i)), bytes(1000))
    assert walks  # the count passed the bound: walked and pruned
    assert cache.size()[1] <= total + 3 * 1100


def test_a_folder_removed_under_a_running_process_is_made_again(where: Path) -> None:
    """Entry folders are made once per process and then remembered: one that went meanwhile
    (another process's ``cache clear``, a removed folder) is made again, and a temporary file
    left by a process that had this pid does not block a write."""
    k, other = cache.key("gone", "1"), cache.key("gone", "2")
    cache.put("t", k, b"first")
    shutil.rmtree(where)
    cache.put("t", other, b"second")
    assert cache.get("t", other) == b"second" and cache.get("t", k) is None
    folder = cache._path("t", other, where).parent
    assert (where.stat().st_mode & 0o777) == 0o700
    start = next(cache._serial)
    for n in range(start + 1, start + 4):  # the next names this process picks, left by another
        (folder / f".tmp-{os.getpid()}-{threading.get_ident()}-{n}").touch()
    cache.put("t", other, b"third")  # every try refused (O_EXCL): not written, no error
    assert cache.get("t", other) == b"second"
    cache.put("t", other, b"fourth")  # the next name is free
    assert cache.get("t", other) == b"fourth"


def test_an_unwritable_cache_is_a_cache_that_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(blocker / "c"))
    k = cache.key("y")
    cache.put("t", k, b"1")  # no exception
    assert cache.get("t", k) is None


def test_concurrent_writers_leave_one_whole_entry(where: Path) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from bot import cache; k = cache.key('same'); "
            "[cache.put('t', k, bytes(200_000)) for _ in range(20)]; print(k)")
    root = str(Path(__file__).resolve().parents[1])
    procs = [subprocess.Popen([sys.executable, "-c", code, root], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    keys = set()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        keys.add(out.decode().strip())
    (k,) = keys  # the key of the code as the writers saw it
    assert cache.get("t", k) == bytes(200_000)
    assert [p.name for p in where.rglob("*") if p.is_file()] == [k]  # no temp file left


def test_cli_cache_info_clear_and_no_cache(where: Path, seed_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    try:
        assert main(["lint", str(seed_repo), "--no-cache", "--format", "json"]) in (0, 1)
        assert not where.exists()  # nothing written
        cache.disable(False)
        assert main(["--no-cache", "lint", str(seed_repo), "--format", "json"]) in (0, 1)
        assert not where.exists()  # the option before the command works too
        from bot.repo.cache import evalcache

        evalcache.reset()  # earlier tests' evaluations of the seed are in this process's store
        assert main(["lint", str(seed_repo), "--format", "json"]) in (0, 1)
        assert cache.size()[0] > 0
        capsys.readouterr()
        assert main(["cache", "info"]) == 0
        out = capsys.readouterr().out
        assert str(where) in out and "(on)" in out
        assert main(["cache", "clear"]) == 0
        assert "removed" in capsys.readouterr().out and cache.size() == (0, 0)
    finally:
        cache.disable(False)


def test_syntax_checks_are_kept_by_text(where: Path) -> None:
    """A warm lint parses no file it does not evaluate: the check's errors come back from
    the cache, positions whole; a damaged entry is checked again."""
    from bot.repo.files import parsed
    from bot.shell.front.parse_tree import syntax_errors

    calls: list[bytes] = []

    def check(data: bytes) -> tuple[ir.ParseError, ...]:
        calls.append(data)
        return syntax_errors(data)

    bad = b"echo ok\nif then fi (\n"
    parsed.reset()
    first = parsed.syntax_errors(check, bad)
    assert first and calls == [bad]
    parsed.reset()
    assert parsed.syntax_errors(check, bad) == first and calls == [bad]
    for f in (where / "syntax").rglob("*"):
        if f.is_file():
            f.write_bytes(f.read_bytes() + b"x")
    parsed.reset()
    assert parsed.syntax_errors(check, bad) == first and calls == [bad, bad]
    assert parsed.syntax_errors(check, b"echo fine\n") == () and len(calls) == 3


def test_the_code_hash_covers_the_schemas_where_an_editable_install_keeps_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install keeps ``bot._schemas`` in the top-level ``schemas/``, outside
    ``bot/``: a schema edit changes what config-schema finds, so it must change every key
    (the whole-lint cache would otherwise give the findings of the old schema)."""
    import shutil
    from importlib.resources import files

    copy = tmp_path / "schemas"
    shutil.copytree(str(files("bot._schemas")), copy)
    monkeypatch.setattr(cache, "resource_files", lambda _name: copy)
    cache.code_hash.cache_clear()
    try:
        before = cache.code_hash()
        schema = copy / "benchbot.schema.json"
        schema.write_text(schema.read_text().replace('"type"', '"type" ', 1))
        cache.code_hash.cache_clear()
        assert cache.code_hash() != before
    finally:
        cache.code_hash.cache_clear()


# ------------------------------------------------------------------ whom the folder is trusted by

KEY = "k" * 40  # BENCHBOT_CACHE_KEY in these tests (at least cachetrust.MIN_KEY_CHARS)


def _entry(where: Path, kind: str, k: str) -> Path:
    return cache._path(kind, k, where)


def test_with_a_key_entries_are_sealed_and_only_sealed_ones_read(where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k = cache.key("sealed")
    cache.put("t", k, b"checksummed only")  # no key: a developer's entry
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", KEY)
    assert cache.get("t", k) is None and not _entry(where, "t", k).exists()  # unsealed: refused, removed
    cache.put("t", k, b"sealed")
    assert _entry(where, "t", k).read_bytes().startswith(b"benchbot-cache 2 hmac ")
    assert KEY.encode() not in _entry(where, "t", k).read_bytes()
    assert cache.get("t", k) == b"sealed"
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", "another key, also long enough to be used")
    assert cache.get("t", k) is None  # sealed with another key: refused


def test_a_sealed_entry_moved_to_another_key_is_a_miss(where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MAC binds the kind and the key: a genuine entry (the findings of a clean tree)
    copied under another key (a tree with findings) is refused."""
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", KEY)
    clean, dirty = cache.key("clean tree"), cache.key("dirty tree")
    cache.put("lint", clean, b"no findings")
    for kind, k in (("lint", dirty), ("eval", clean)):
        _entry(where, kind, k).parent.mkdir(parents=True, exist_ok=True)
        _entry(where, kind, k).write_bytes(_entry(where, "lint", clean).read_bytes())
        assert cache.get(kind, k) is None
    assert cache.get("lint", clean) == b"no findings"


@pytest.mark.parametrize("name, value", [("CI", "true"), ("CI", "1"), ("GITHUB_ACTIONS", "true")])
def test_in_ci_without_a_key_the_folder_is_neither_read_nor_written(where: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    name: str, value: str) -> None:
    k = cache.key("ci")
    cache.put("t", k, b"planted")  # what a pull request's code could have saved
    monkeypatch.setenv(name, value)
    assert cache.get("t", k) is None and not cache.persistent()
    assert _entry(where, "t", k).exists()  # not read at all (nor removed)
    cache.put("t", cache.key("ci", "new"), b"x")
    assert cache.size()[0] == 1
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", "too short")  # not a key: as if none
    assert cache.get("t", k) is None and not cache.persistent()
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", KEY)
    assert cache.persistent() and cache.get("t", k) is None  # a key: only sealed entries
    cache.put("t", k, b"sealed")
    assert cache.get("t", k) == b"sealed"


def test_ci_false_is_not_ci(where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k = cache.key("not ci")
    cache.put("t", k, b"1")
    for value in ("", "0", "false", "False", "no"):
        monkeypatch.setenv("CI", value)
        assert cache.get("t", k) == b"1", value


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")
def test_a_folder_other_users_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a key, a developer's folder is trusted like the user's own files: not when
    another user can write it (a world-writable folder, one in /tmp, another user's)."""
    from bot import cachetrust

    for mode, used in ((0o777, False), (0o1777, False), (0o755, True), (0o700, True)):
        folder = tmp_path / f"c{mode:o}"
        monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(folder))
        k = cache.key("mode")
        cache.put("t", k, b"1")  # makes the folder 0700
        assert folder.stat().st_mode & 0o777 == 0o700
        folder.chmod(mode)
        cachetrust._folders.clear()
        assert (cache.get("t", k) == b"1") is used and cache.persistent() is used, oct(mode)
    if os.geteuid() == 0:  # root can hand the folder to another user
        os.chown(folder, 65534, 65534)
        cachetrust._folders.clear()
        assert cache.get("t", k) is None
    cachetrust._folders.clear()


def test_a_planted_fifo_link_or_oversized_file_is_a_miss(where: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Never waited on, never followed, never read whole: each is a miss at once."""
    k = cache.key("planted")
    cache.put("t", k, b"genuine")
    entry = _entry(where, "t", k)
    genuine = entry.read_bytes()
    entry.unlink()
    os.mkfifo(entry)
    assert cache.get("t", k) is None  # a FIFO: not opened for a writer that never comes
    entry.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(genuine)
    entry.symlink_to(elsewhere)
    assert cache.get("t", k) is None and elsewhere.exists()
    entry.unlink()
    entry.write_bytes(genuine)
    assert cache.get("t", k) == b"genuine"
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", len(genuine) - 1)
    assert cache.get("t", k) is None


def test_get_json_refuses_what_is_over_its_budgets(where: Path) -> None:
    k = cache.key("json")
    for payload in (b"[" * 100_000 + b"]" * 100_000, b'{"a": 1', b"\xff", b'"' + b"x" * 1000 + b'"'):
        cache.put("t", k, payload)
        assert cache.get_json("t", k, max_bytes=500) is None
    cache.put("t", k, b'[[["ok"]]]')
    assert cache.get_json("t", k) == [[["ok"]]] and cache.get_json("t", k, max_depth=2) is None


def _lint_json(repo: Path, where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHBOT_CACHE_DIR": str(where)}
    env.pop("BENCHBOT_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("fixture, kind", [("workflow-env", "syntax"), ("workflow-env", "needs"),
                                           ("workflow-env", "eval"), ("workflow-env", "envs"),
                                           ("multinode-recipes", "recipe")])
def test_a_deeply_nested_entry_is_a_miss_not_an_internal_error(fixture: str, kind: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry of a kind replaced by 100,000 nested arrays (with a valid checksum: only
    the decoding can refuse it): ``python -m bot lint`` computes them again and reports what
    it reported before, never exit 3."""
    import shutil

    repo = copy_repo(FIXTURES / fixture, tmp_path / "r")
    where = tmp_path / "c"
    truth = _lint_json(repo, where)
    assert truth.returncode in (0, 1), truth.stderr
    shutil.rmtree(where / "lint")  # the whole-lint entry would answer before any of these is read
    keys = [p.name for p in (where / kind).rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert keys
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(where))
    for k in keys:
        cache.put(kind, k, b"[" * 100_000 + b"]" * 100_000)
    again = _lint_json(repo, where)
    assert again.returncode == truth.returncode, again.stderr[-2000:]
    assert json.loads(again.stdout)["findings"] == json.loads(truth.stdout)["findings"]


def test_cache_info_says_whom_the_folder_is_trusted_by(where: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    assert main(["cache", "info"]) == 0
    out = capsys.readouterr()
    assert "(on)" in out.out and "trust: entries checksummed (SHA-256)" in out.out and out.err == ""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", "tiny-key-xyz")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr()
    assert "(not used)" in out.out and "CI without BENCHBOT_CACHE_KEY" in out.out
    assert "BENCHBOT_CACHE_KEY is shorter than 32 characters" in out.err and "tiny-key-xyz" not in out.out + out.err
    monkeypatch.setenv("BENCHBOT_CACHE_KEY", KEY)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr()
    assert "(on)" in out.out and "sealed and verified with BENCHBOT_CACHE_KEY" in out.out
    assert KEY not in out.out + out.err
