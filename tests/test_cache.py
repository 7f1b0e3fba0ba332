"""``bot.cache``: entries by key, verified on read, atomic, bounded, off with --no-cache;
and its first user, the fast schema validator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import cache
from bot.repo import schema
from bot.shell import ir


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


# ------------------------------------------------------------------ the fast validator


def test_fast_validator_code_is_cached_and_reused(where: Path) -> None:
    schema._fast.cache_clear()
    first = schema._fast("runners.schema.json")
    assert first is not None and cache.size()[0] == 1
    schema._fast.cache_clear()
    entry = next(p for p in where.rglob("*") if p.is_file())
    before = entry.stat().st_mtime_ns
    again = schema._fast("runners.schema.json")
    assert again is not None and cache.size()[0] == 1 and entry.stat().st_mtime_ns >= before
    schema._fast.cache_clear()


def test_our_schemas_read_alike_by_both_validators() -> None:
    for name in ("master-config.schema.json", "runners.schema.json", "benchbot.schema.json"):
        assert schema.fast_safe(schema.load_schema(name)), name
    assert not schema.fast_safe({"$ref": "#/$defs/x", "required": ["a"]})  # draft-07 ignores the sibling
    assert not schema.fast_safe({"properties": {"a": {"prefixItems": [{}]}}})  # a keyword it does not know
    assert schema.fast_safe({"properties": {"pattern": {"type": "string"}}})  # a property named like a keyword
    assert json.dumps(schema.load_schema("runners.schema.json"))  # plain JSON


def test_cli_cache_info_clear_and_no_cache(where: Path, seed_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    try:
        assert main(["lint", str(seed_repo), "--no-cache", "--format", "json"]) in (0, 1)
        assert not where.exists()  # nothing written
        cache.disable(False)
        assert main(["--no-cache", "lint", str(seed_repo), "--format", "json"]) in (0, 1)
        assert not where.exists()  # the option before the command works too
        from bot.repo import evalcache

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
    from bot.repo import parsed
    from bot.shell.parse_tree import syntax_errors

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
