"""Parses shared by the lints of one process, by content: scripts (IR and syntax checks),
YAML documents (``bot.repo.load.yamlfile``) and the workflows' launcher calls. The head and the
base of a pull request (``event``, ``--new-from-rev``) differ in a file or two, and so do
consecutive commits (``history``); parsing and loading are a third of a lint. What is
shared is never changed by its readers, so sharing it is safe.

What is kept is what the last two lints used (``begin`` starts a lint): a lint needs
what its predecessor parsed, not what the one before that did, so memory stays near one
tree's whatever the number of lints; ``MAX`` entries and ``MAX_BYTES`` of input bound it
within a lint. A script's syntax check and its ``needs`` are kept in the persistent cache by
its text (JSON, decoded by ``bot.cachejson``: an entry over its budgets or of another shape
is a miss, checked again; in CI read only when sealed, ``bot.cachetrust``). Off with the
cache (``--no-cache``)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from bot import cache
from bot.cachejson import array, integer, string
from bot.repo.files.host import Host
from bot.shell.analysis.needs import Need
from bot.shell.analysis.needs import needs as find_needs
from bot.shell.evaluator.state import Loc
from bot.shell.ir import nodes as ir

MAX = 16384  # entries
MAX_BYTES = 256 << 20  # and the inputs they were made from
T = TypeVar("T")
_memo: OrderedDict[tuple[object, ...], list[Any]] = OrderedDict()  # key -> [input size, lint, value]
_bytes = 0
_lint = 0


def begin() -> None:
    """A lint starts: forget what neither it nor the last lint is likely to need (entries
    the lint before last used, and older ones)."""
    global _lint, _bytes
    _lint += 1
    while _memo:
        key, (size, used, _) = next(iter(_memo.items()))
        if used >= _lint - 1:
            break
        del _memo[key]
        _bytes -= size


def shared(key: tuple[object, ...], make: Callable[[], T], size: int = 0) -> T:
    """``make()`` once per key while it is kept (``size``: the bytes it is made from)."""
    global _bytes
    if not cache.enabled():
        return make()
    got = _memo.get(key)
    if got is not None:
        _memo.move_to_end(key)
        got[1] = _lint
        return got[2]  # type: ignore[no-any-return]
    value = make()
    _memo[key] = [size, _lint, value]
    _bytes += size
    while len(_memo) > MAX or (_bytes > MAX_BYTES and len(_memo) > 1):
        _bytes -= _memo.popitem(last=False)[1][0]
    return value


def parse(parser: Callable[[str, bytes], ir.Script], path: str, data: bytes) -> ir.Script:
    return shared(("parse", path, hashlib.sha1(data).digest(), parser), lambda: parser(path, data), len(data))


def syntax_errors(check: Callable[[bytes], tuple[ir.ParseError, ...]], data: bytes) -> tuple[ir.ParseError, ...]:
    """``check(data)`` (the syntax check of a file the analysis does not evaluate), shared
    the same way (the errors are immutable too) and kept in the persistent cache by the
    text and the checker: a warm lint parses no file it does not evaluate."""
    return shared(("syntax", hashlib.sha1(data).digest(), check), lambda: _stored_check(check, data), len(data))


def _stored_check(check: Callable[[bytes], tuple[ir.ParseError, ...]], data: bytes) -> tuple[ir.ParseError, ...]:
    k = cache.key("syntax", f"{check.__module__}.{check.__qualname__}", data)
    stored = cache.get_json("syntax", k)
    if stored is not None:
        try:
            return tuple(ir.ParseError(string(m), ir.Pos(*(integer(x) for x in array(pos, 6))))
                         for m, pos in (array(e, 2) for e in array(stored)))
        except ValueError:  # cachejson.Refused
            pass  # damaged: check again
    errors = check(data)
    p = [[e.message, [e.pos.line, e.pos.col, e.pos.end_line, e.pos.end_col, e.pos.start_byte, e.pos.end_byte]]
         for e in errors]
    cache.put("syntax", k, json.dumps(p).encode())
    return errors


def read(facts: Host, path: str) -> bytes | None:
    """``facts.tree.read(path)``, once per path and lint (the tree does not change under one:
    gather, the evaluations, the reference scan and the rules read the same files)."""
    done: dict[str, bytes | None] = facts.memo.setdefault("read", {})
    if path not in done:
        done[path] = facts.tree.read(path)
    return done[path]


def text(facts: Host, path: str) -> str | None:
    """``facts.tree.text(path)`` from ``read``."""
    data = read(facts, path)
    return data.decode("utf-8", "replace") if data is not None else None


def needs(facts: Host, path: str) -> list[Need]:
    """``bot.shell.analysis.needs`` of the script at ``path``, kept in the persistent cache by its text
    (a warm lint need not parse the benchmark scripts env-not-passed reads)."""
    memo: dict[str, list[Need]] = facts.memo.setdefault("script-needs", {})
    if path in memo:
        return memo[path]
    real = facts.tree.resolve(path)
    data = read(facts, real) if real is not None else None
    checks = frozenset(facts.profile.env_checks)
    if real is None or data is None:
        memo[path] = []
        return []
    k = cache.key("needs", real, data, "\0".join(sorted(checks)))
    stored = cache.get_json("needs", k)
    if stored is not None:
        try:
            memo[path] = [Need(string(n), Loc(string(p), integer(line), integer(col)), string(how))
                          for n, p, line, col, how in (array(e, 5) for e in array(stored))]
            return memo[path]
        except ValueError:  # cachejson.Refused
            pass  # damaged: work it out again
    script = facts.script(path)
    found = find_needs(script, checks) if script is not None else []
    memo[path] = found
    cache.put("needs", k, json.dumps([[n.name, n.loc.path, n.loc.line, n.loc.col, n.how] for n in found]).encode())
    return found


def reset() -> None:
    """Forget every parse and syntax check (a benchmark's cold lint in the same process)."""
    global _bytes
    _memo.clear()
    _bytes = 0


def bash_accepts(data: bytes) -> bool | None:
    """``bash -n`` on the text (stdin): parses only, executes nothing; asked when tree-sitter
    rejects a script. None: no answer within the time budget (the file stays rejected,
    ``Facts.undecided`` names it, and ``bot.lintcache`` keeps no such lint)."""
    try:
        proc = subprocess.run(["bash", "-n"], input=data, capture_output=True, timeout=10, check=False,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except OSError:
        return False
    except subprocess.TimeoutExpired:
        return None
    return proc.returncode == 0
