"""Launcher evaluations kept across lints: the head and the base of a pull request, commits
in a row, pre-commit runs.

An evaluation's result depends on the launcher's text, the options (the profile), the
values of the env variables it let decide something (``Result.relevant``), their
set/empty state (``Result.presence``), and what it asked the repository: whether a path is
a file or a folder, the text of each script it sourced or followed. ``Recorder`` writes
down every such question and its answer while the evaluation runs; an entry is reused
only when the env agrees on ``relevant`` and ``presence`` and every recorded question gets
the same answer from the tree now (a sourced helper edited, a script added that a
``[ -f ]`` looks for: a miss).

Entries live in memory for one process (``Store``; ``event`` lints head and base with one)
and, through ``bot.cache``, on disk, as JSON (data only: nothing read back is executed),
one file per (launcher text, options, benchbot code), at most ``MAX_PER_KEY`` entries
each. Results that ran into a budget (a deadline depends on the machine) are not kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bot import cache
from bot.shell import ir, state
from bot.shell.budget import BudgetHit
from bot.shell.options import FileSystem, PathResult, Result
from bot.shell.reads import presence_key
from bot.shell.values import Unk, Val

if TYPE_CHECKING:
    from bot.repo.facts import Facts

MAX_PER_KEY = 512  # entries per launcher text and options: (entry, point) envs of one launcher (InferenceX: up to 98)
FORMAT = "2"  # positional fields

# ------------------------------------------------------------------ recording


class Recorder(FileSystem):
    """A FileSystem that answers from ``inner`` and writes down each question."""

    def __init__(self, inner: FileSystem, digest: Callable[[str], str | None]) -> None:
        self.inner = inner
        self.digest = digest  # path -> SHA-1 of the file's bytes (None: not readable)
        self.asked: dict[tuple[str, str], object] = {}

    def is_file(self, path: str) -> bool:
        v = self.inner.is_file(path)
        self.asked.setdefault(("f", path), v)
        return v

    def is_dir(self, path: str) -> bool:
        v = self.inner.is_dir(path)
        self.asked.setdefault(("d", path), v)
        return v

    def script(self, path: str) -> ir.Script | None:
        self.asked.setdefault(("s", path), self.digest(path))
        return self.inner.script(path)

    def follow(self, inner: Callable[[str], bool]) -> Callable[[str], bool]:
        def asked(path: str) -> bool:
            v = inner(path)
            self.asked.setdefault(("w", path), v)
            return v
        return asked


def answers_hold(asked: list[list[Any]], fs: FileSystem, follow: Callable[[str], bool] | None,
                 digest: Callable[[str], str | None]) -> bool:
    for kind, path, answer in asked:
        if kind == "f":
            now: object = fs.is_file(path)
        elif kind == "d":
            now = fs.is_dir(path)
        elif kind == "s":
            now = digest(path)
        elif kind == "w":
            now = follow(path) if follow is not None else None
        else:
            return False
        if now != answer:
            return False
    return True


# ------------------------------------------------------------------ JSON, data only

_CLASSES: dict[str, type] = {c.__name__: c for c in (
    state.Loc, state.Dispatch, state.Sourced, state.Exited, state.Ran, state.Wrote, state.Served,
    state.Handed, state.Read, BudgetHit, PathResult)}
_FIELDS: dict[type, tuple[str, ...]] = {c: tuple(f.name for f in dataclasses.fields(c)) for c in _CLASSES.values()}


def _enc(obj: Any, memo: dict[int, Any]) -> Any:
    """The JSON form of a result's value; ``memo`` (by id, the objects stay alive meanwhile)
    encodes an event or value that many paths share once."""
    t = type(obj)
    if t is str or t is int or t is bool or t is float or obj is None:
        return obj
    i = id(obj)
    done = memo.get(i)
    if done is not None:
        return done
    if t is tuple:
        out: Any = {"T": [x if type(x) is str else _enc(x, memo) for x in obj]}
    elif t is Unk:
        out = {"U": obj.why}
    elif t is list:
        out = [_enc(x, memo) for x in obj]
    elif t is frozenset:
        out = {"F": sorted(_enc(x, memo) for x in obj)}
    elif t in _FIELDS:
        out = {"C": t.__name__, "v": [_enc(getattr(obj, n), memo) for n in _FIELDS[t]]}
    else:
        raise TypeError(f"cannot keep a {t.__name__} in the evaluation cache")
    memo[i] = out
    return out


def _dec(obj: Any) -> Any:
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, list):
        return [_dec(x) for x in obj]
    if isinstance(obj, dict):
        if "U" in obj:
            return Unk(str(obj["U"]))
        if "T" in obj:
            return tuple(_dec(x) for x in obj["T"])
        if "F" in obj:
            return frozenset(_dec(x) for x in obj["F"])
        cls = _CLASSES.get(obj.get("C", ""))
        values = obj.get("v")
        if cls is not None and isinstance(values, list) and len(values) == len(_FIELDS[cls]):
            return cls(*(_dec(v) for v in values))
    raise ValueError("not an evaluation cache value")


def _result_enc(r: Result, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    memo = {} if memo is None else memo
    return {"paths": [_enc(p, memo) for p in r.paths], "bound_hit": r.bound_hit, "relevant": sorted(r.relevant),
            "notes": list(r.notes), "presence": sorted(r.presence)}


def _result_dec(d: dict[str, Any]) -> Result:
    paths = [_dec(p) for p in d["paths"]]
    if not all(isinstance(p, PathResult) for p in paths):
        raise ValueError("not a path")
    return Result(paths, bool(d["bound_hit"]), frozenset(map(str, d["relevant"])), [str(n) for n in d["notes"]],
                  (), frozenset(map(str, d["presence"])))


# ------------------------------------------------------------------ the store


@dataclasses.dataclass
class _Entry:
    relevant: list[tuple[str, Val | None]]
    presence: frozenset[tuple[str, int]]
    asked: list[list[Any]]
    _result: Result | None
    raw: dict[str, Any] | None = None  # as stored (written back unchanged)

    @property
    def result(self) -> Result:
        """Decoded on the first hit: most stored entries are never asked for."""
        if self._result is None:
            assert self.raw is not None
            self._result = _result_dec(self.raw["result"])
        return self._result


class Store:
    """Entries by (launcher text, options): in memory, backed by ``bot.cache``."""

    def __init__(self) -> None:
        self._entries: dict[str, list[_Entry]] = {}
        self._loaded: set[str] = set()
        self._dirty: set[str] = set()
        self.hits = self.misses = 0

    @staticmethod
    def slot_key(launcher_text: bytes, options: str) -> str:
        return cache.key("eval", FORMAT, hashlib.sha1(launcher_text).hexdigest(), options)

    def _load(self, k: str) -> list[_Entry]:
        if k not in self._loaded:
            self._loaded.add(k)
            got = self._entries.setdefault(k, [])
            payload = cache.get("eval", k)
            if payload is not None:
                try:
                    for raw in json.loads(payload):
                        rel = [(str(n), None if v is None else _dec(v)) for n, v in raw["relevant"]]
                        pres = frozenset((str(n), int(s)) for n, s in raw["presence"])
                        if not isinstance(raw["result"], dict) or not isinstance(raw["asked"], list):
                            raise ValueError("not an entry")
                        got.append(_Entry(rel, pres, raw["asked"], None, raw))
                except (ValueError, KeyError, TypeError, RecursionError):
                    got.clear()  # a damaged or older file: as if empty
        return self._entries[k]

    def lookup(self, k: str, env: Mapping[str, Val], fs: FileSystem, follow: Callable[[str], bool] | None,
               digest: Callable[[str], str | None]) -> Result | None:
        for e in self._load(k):
            if all(env.get(n) == v for n, v in e.relevant) and \
                    e.presence == presence_key(env, (n for n, _ in e.presence)) and \
                    answers_hold(e.asked, fs, follow, digest):
                try:
                    result = e.result
                except (ValueError, KeyError, TypeError, RecursionError):
                    continue  # damaged: as if absent
                self.hits += 1
                return result
        self.misses += 1
        return None

    def add(self, k: str, env: Mapping[str, Val], result: Result, asked: Mapping[tuple[str, str], object]) -> None:
        if result.budget_hits:
            return  # a budget (a deadline above all) depends on the machine, not the inputs
        relevant = sorted((n, env.get(n)) for n in result.relevant)
        entries = self._load(k)
        entries.append(_Entry(relevant, presence_key(env, result.presence),
                              [[kind, path, v] for (kind, path), v in sorted(asked.items())], result))
        del entries[:-MAX_PER_KEY]
        self._dirty.add(k)

    def flush(self) -> None:
        """Write the changed slots to the persistent cache (one file each)."""
        for k in sorted(self._dirty):
            memo: dict[int, Any] = {}  # one slot's shared values (kept across slots, all of them stayed)
            out = []
            for e in self._entries.get(k, []):
                if e.raw is None:
                    e.raw = {"relevant": [[n, _enc(v, memo)] for n, v in e.relevant],
                             "presence": sorted([n, s] for n, s in e.presence), "asked": e.asked,
                             "result": _result_enc(e.result, memo)}
                out.append(e.raw)
            cache.put("eval", k, json.dumps(out, separators=(",", ":")).encode())
            for e in self._entries.get(k, []):
                if e._result is not None:
                    e.raw = None  # written: the decoded result is what stays in memory
        self._dirty.clear()


_SHARED = Store()


def shared() -> Store:
    """The process's store: every lint in a process shares it (``event``'s head and base)."""
    return _SHARED


def reset() -> None:
    """A fresh, empty process store (benchmarks: a cold lint in the same process)."""
    global _SHARED
    _SHARED = Store()


def slot(facts: Facts, launcher: str, real: str, persist: bool, mode: str = "") -> tuple[Store | None, str | None]:
    """The store and the slot of a launcher's evaluations (None, None: not kept). ``mode``
    names options other than the lint's own (``"scan"``: the reference scan's)."""
    if not persist or not cache.enabled():
        return None, None
    keys: dict[tuple[str, str, str], str | None] = facts.memo.setdefault("evalcache-slots", {})
    if (launcher, real, mode) not in keys:
        text = facts.tree.read(real)
        options = facts.memo.get("evalcache-options")
        if options is None:
            options = facts.memo["evalcache-options"] = cache.key(repr(facts.profile))
        keys[(launcher, real, mode)] = None if text is None else \
            Store.slot_key(text, f"{options}\0{launcher}\0{real}" + (f"\0{mode}" if mode else ""))
    k = keys[(launcher, real, mode)]
    return (_SHARED, k) if k is not None else (None, None)


def flush() -> None:
    if cache.enabled():
        _SHARED.flush()
