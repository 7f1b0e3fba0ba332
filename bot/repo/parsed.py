"""Parsed scripts shared by the lints of one process, by path and content: the head and the
base of a pull request (``event``, ``--new-from-rev``) differ in a file or two, and parsing
is a fifth of a lint. The IR is immutable, so sharing it is safe; at most ``MAX`` scripts
are kept (least recently used go). A script's ``needs`` are kept in the persistent cache by
its text. Off with the cache (``--no-cache``)."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from bot import cache
from bot.shell import ir
from bot.shell.needs import Need
from bot.shell.needs import needs as find_needs
from bot.shell.state import Loc

if TYPE_CHECKING:
    from bot.repo.facts import Facts

MAX = 4096
T = TypeVar("T")
_memo: OrderedDict[tuple[object, ...], object] = OrderedDict()


def _shared(key: tuple[object, ...], make: Callable[[], T]) -> T:
    """``make()`` once per key while it stays among the ``MAX`` most recently used."""
    if not cache.enabled():
        return make()
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]  # type: ignore[return-value]
    got = _memo[key] = make()
    while len(_memo) > MAX:
        _memo.popitem(last=False)
    return got


def parse(parser: Callable[[str, bytes], ir.Script], path: str, data: bytes) -> ir.Script:
    return _shared(("parse", path, hashlib.sha1(data).digest(), parser), lambda: parser(path, data))


def syntax_errors(check: Callable[[bytes], tuple[ir.ParseError, ...]], data: bytes) -> tuple[ir.ParseError, ...]:
    """``check(data)`` (the syntax check of a file the analysis does not evaluate), shared
    the same way: the errors are immutable too."""
    return _shared(("syntax", hashlib.sha1(data).digest(), check), lambda: check(data))


def needs(facts: Facts, path: str) -> list[Need]:
    """``bot.shell.needs`` of the script at ``path``, kept in the persistent cache by its text
    (a warm lint need not parse the benchmark scripts env-not-passed reads)."""
    memo: dict[str, list[Need]] = facts.memo.setdefault("script-needs", {})
    if path in memo:
        return memo[path]
    real = facts.tree.resolve(path)
    data = facts.tree.read(real) if real is not None else None
    checks = frozenset(facts.profile.env_checks)
    if real is None or data is None:
        memo[path] = []
        return []
    k = cache.key("needs", real, data, "\0".join(sorted(checks)))
    stored = cache.get("needs", k)
    if stored is not None:
        try:
            memo[path] = [Need(str(n), Loc(str(p), int(line), int(col)), str(how))
                          for n, p, line, col, how in json.loads(stored)]
            return memo[path]
        except (ValueError, TypeError):
            pass  # damaged: work it out again
    script = facts.script(path)
    found = find_needs(script, checks) if script is not None else []
    memo[path] = found
    cache.put("needs", k, json.dumps([[n.name, n.loc.path, n.loc.line, n.loc.col, n.how] for n in found]).encode())
    return found


def reset() -> None:
    """Forget every parse and syntax check (a benchmark's cold lint in the same process)."""
    _memo.clear()
