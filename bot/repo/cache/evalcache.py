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
and, through ``bot.cache``, on disk, as JSON (data only: nothing read back is executed;
decoded by ``bot.cachejson`` within its size and depth budgets, every value's shape checked),
one file per (launcher text, options, benchbot code), at most ``MAX_PER_KEY`` entries
each. Results that ran into a budget (a deadline depends on the machine) are not kept. An
evaluation decides findings, so in CI a file is read only when sealed with the key of
``BENCHBOT_CACHE_KEY`` (``bot.cachetrust``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from bot import cache
from bot.cachejson import Refused, array, boolean, integer, obj, string
from bot.repo.files import parsed
from bot.repo.files.host import Host
from bot.shell.evaluator import state
from bot.shell.evaluator.budget import BudgetHit
from bot.shell.evaluator.options import FileSystem, PathResult, Result
from bot.shell.evaluator.reads import presence_key
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Unk, Val

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
        if ("s", path) not in self.asked:
            self.asked["s", path] = self.digest(path)
        return self.inner.script(path)

    def follow(self, inner: Callable[[str], bool]) -> Callable[[str], bool]:
        def asked(path: str) -> bool:
            v = inner(path)
            self.asked.setdefault(("w", path), v)
            return v
        return asked


def digest(facts: Host, path: str) -> str | None:
    """``Facts.digest``: the SHA-1 of the real path and the bytes ``facts.script(path)`` would
    parse (None: not readable); once per path and lint (the tree does not change under one)."""
    done: dict[str, str | None] = facts.memo.setdefault("digests", {})
    if path not in done:
        real = facts.tree.resolve(path)
        data = parsed.read(facts, real) if real is not None else None
        done[path] = None if real is None or data is None else hashlib.sha1(real.encode() + b"\0" + data).hexdigest()
    return done[path]


def answers_hold(asked: list[list[Any]], fs: FileSystem, follow: Callable[[str], bool] | None,
                 digest: Callable[[str], str | None]) -> bool:
    for question in asked:
        if type(question) is not list or len(question) != 3 or type(question[1]) is not str:
            return False  # not a question this code wrote: the entry does not hold
        kind, path, answer = question
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


def _classes(hint: Any) -> frozenset[type] | None:
    """The classes a field's annotation allows, when it is a class or a union of classes."""
    if hint is type(None) or hint in (str, int, bool, Unk) or hint in _FIELDS:
        return frozenset({hint})
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        parts = [_classes(a) for a in typing.get_args(hint)]
        if all(p is not None for p in parts):
            return frozenset().union(*(p for p in parts if p is not None))
    return None


def _checker(hint: Any) -> Callable[[Any], bool]:
    """Whether a decoded value is of the type a field declares (str, int, bool, None, Unk,
    our dataclasses, unions, tuples and frozensets of them), by exact type (a bool is not an
    int): a field the readers rely on is never of another type. Checks of whole tuples run
    in C (``issuperset`` over ``map(type, ...)``). Any other annotation is a programming
    error, found at import."""
    simple = _classes(hint)
    if simple is not None:
        return lambda v: type(v) in simple
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (tuple, frozenset) and (origin is frozenset or (len(args) == 2 and args[1] is Ellipsis)):
        members = _classes(args[0])
        if members is not None:
            return lambda v: type(v) is origin and members.issuperset(map(type, v))
        item = _checker(args[0])
        return lambda v: type(v) is origin and all(map(item, v))
    if origin is tuple and len(args) == 2:  # (name, value) pairs of an env: many of them
        first, second = (_checker(a) for a in args)
        return lambda v: type(v) is tuple and len(v) == 2 and first(v[0]) and second(v[1])
    if origin is tuple:
        items = [_checker(a) for a in args]
        return lambda v: type(v) is tuple and len(v) == len(items) and all(c(x) for c, x in zip(items, v))
    if origin in (typing.Union, types.UnionType):
        subs = [_checker(a) for a in args]
        return lambda v: any(c(v) for c in subs)
    raise TypeError(f"no decoding check for {hint!r}")


def _fields_checker(cls: type) -> Callable[[list[Any]], bool]:
    """Whether decoded values are of the types of ``cls``'s fields, in order: the fields that
    are plain classes (all of ``Loc``'s, the most common) in one C-level step, the others
    (tuples of values) each by its checker."""
    hints = typing.get_type_hints(cls)
    simple = [_classes(hints[n]) for n in _FIELDS[cls]]
    plain = [i for i, c in enumerate(simple) if c is not None]
    allowed = frozenset(itertools.product(*(c for c in simple if c is not None)))
    rest = [(i, _checker(hints[n])) for i, n in enumerate(_FIELDS[cls]) if simple[i] is None]
    if not rest:
        return lambda values: tuple(map(type, values)) in allowed
    pick = operator.itemgetter(*plain) if len(plain) > 1 else None

    def check(values: list[Any]) -> bool:
        types_ = tuple(map(type, pick(values))) if pick is not None else tuple(type(values[i]) for i in plain)
        return types_ in allowed and all(c(values[i]) for i, c in rest)
    return check


_CHECKS: dict[type, Callable[[list[Any]], bool]] = {c: _fields_checker(c) for c in _CLASSES.values()}


_SCALARS = frozenset({str, int, bool, float, type(None)})
# per class: its name and its field values as a tuple (one C call)
_GETTERS: dict[type, tuple[str, Callable[[Any], Any]]] = {
    c: (c.__name__, operator.attrgetter(*f) if len(f) > 1 else (lambda o, n=f[0]: (getattr(o, n),)))  # type: ignore[misc]
    for c, f in _FIELDS.items()}


def _enc(obj: Any, memo: dict[int, Any]) -> Any:
    """The JSON form of a result's value; ``memo`` (by id, the objects stay alive meanwhile)
    encodes an event or value that many paths share once."""
    t = type(obj)
    if t in _SCALARS:
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
    elif t in _GETTERS:
        name, values = _GETTERS[t]
        out = {"C": name, "v": [x if type(x) in _SCALARS else _enc(x, memo) for x in values(obj)]}
    else:
        raise TypeError(f"cannot keep a {t.__name__} in the evaluation cache")
    memo[i] = out
    return out


def _dec(obj: Any) -> Any:
    """A value as ``_enc`` wrote it, or ``Refused``: only our data classes are made, each of
    fields of the types it declares (``_CHECKS``). By exact type, the common cases first."""
    t = type(obj)
    if t is dict:
        name = obj.get("C")
        if name is not None:
            cls = _CLASSES.get(name)
            values = obj.get("v")
            if cls is None or type(values) is not list or len(values) != len(_FIELDS[cls]):
                raise Refused("not an evaluation cache value")
            fields = list(map(_dec, values))
            if not _CHECKS[cls](fields):
                raise Refused(f"not a {cls.__name__}")
            return cls(*fields)
        items = obj.get("T")
        if type(items) is list:
            return tuple(map(_dec, items))
        why = obj.get("U")
        if type(why) is str:
            return Unk(why)
        members = obj.get("F")
        if type(members) is list:
            return frozenset(map(_dec, members))
    elif t is list:
        return list(map(_dec, obj))
    elif t is str or t is int or t is bool or t is float or obj is None:
        return obj
    raise Refused("not an evaluation cache value")


def _result_enc(r: Result, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    memo = {} if memo is None else memo
    return {"paths": [_enc(p, memo) for p in r.paths], "bound_hit": r.bound_hit, "relevant": sorted(r.relevant),
            "notes": list(r.notes), "presence": sorted(r.presence)}


def _result_dec(raw: Any) -> Result:
    d = obj(raw)
    paths = [_dec(p) for p in array(d["paths"])]
    if not all(isinstance(p, PathResult) for p in paths):
        raise Refused("not a path")
    return Result(paths, boolean(d["bound_hit"]), frozenset(map(string, array(d["relevant"]))),
                  [string(n) for n in array(d["notes"])], (), frozenset(map(string, array(d["presence"]))))


def _entry_dec(raw: Any) -> _Entry:
    """An entry's keys as stored (its result is decoded on its first hit)."""
    e = obj(raw)
    rel = [(string(n), None if v is None else _dec(v)) for n, v in (array(r, 2) for r in array(e["relevant"]))]
    pres = frozenset((string(n), integer(s)) for n, s in (array(p, 2) for p in array(e["presence"])))
    obj(e["result"])
    return _Entry(rel, pres, array(e["asked"]), None, e)  # each question is checked when asked again


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
            stored = cache.get_json("eval", k)
            if stored is not None:
                try:
                    got.extend(_entry_dec(raw) for raw in array(stored))
                except (ValueError, KeyError, TypeError):  # Refused is a ValueError
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
                except (ValueError, KeyError, TypeError):
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


def slot(facts: Host, launcher: str, real: str, persist: bool, mode: str = "") -> tuple[Store | None, str | None]:
    """The store and the slot of a launcher's evaluations (None, None: not kept). ``mode``
    names options other than the lint's own (``"scan"``: the reference scan's)."""
    if not persist or not cache.enabled():
        return None, None
    keys: dict[tuple[str, str, str], str | None] = facts.memo.setdefault("evalcache-slots", {})
    if (launcher, real, mode) not in keys:
        text = parsed.read(facts, real)
        options = facts.memo.get("evalcache-options")
        if options is None:
            options = facts.memo["evalcache-options"] = cache.key(repr(facts.profile))
        keys[(launcher, real, mode)] = None if text is None else \
            Store.slot_key(text, f"{options}\0{launcher}\0{real}" + (f"\0{mode}" if mode else ""))
    k = keys[(launcher, real, mode)]
    return (_SHARED, k) if k is not None else (None, None)


def flush() -> None:
    if cache.persistent():  # else nothing would be written: not even encoded
        _SHARED.flush()
