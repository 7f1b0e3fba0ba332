"""Rendered launcher envs kept across processes: what ``EnvSource`` computes from the
workflows for an (entry, point, node) is the same in every lint of the same texts.

A warm lint of InferenceX renders about 2,000 envs (each a walk of the workflow's env
expressions, matrix fields and inputs) and asks which path runs each point: a quarter of
the lint once the evaluations come from ``bot.repo.evalcache``. Those answers depend only
on what ``EnvSource._across`` keys them by: the workflows' texts and the profile (one
file here per such pair, ``cache.key`` adding benchbot's own code), the call's place
among the workflows' calls, the entry's and the point's contents, the node and the label,
and the names asked for. Nothing else is read: a render sees no other file of the tree.

The file holds what the last lint that wrote it used (its hits and what it made), so it
stays about one tree's worth however many commits ``history`` walks; it is written only
when that lint made something new. Data only (JSON): a value is a list of text parts and
``{"U": why}`` unknowns. A damaged or foreign file is a miss, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from bot import cache
from bot.repo import evalcache
from bot.shell.values import Unk, Val

if TYPE_CHECKING:
    from bot.repo.facts import Facts

FORMAT = "1"
KIND = "envs"
T = TypeVar("T")


def _part(part: object) -> str:
    if isinstance(part, tuple):
        return "(" + ",".join(map(_part, part)) + ")"
    if isinstance(part, (frozenset, set)):
        return "{" + ",".join(sorted(map(_part, part))) + "}"  # never in hash order
    if isinstance(part, bytes):
        return part.hex()
    return repr(part)


def _sub(across: tuple[object, ...]) -> str:
    """The key of one answer within the file: ``across`` less the file's own key (index 1)."""
    return "\0".join(_part(p) for i, p in enumerate(across) if i != 1)


def enc_env(env: dict[str, Val]) -> dict[str, list[Any]]:
    return {n: [p if type(p) is str else {"U": p.why} for p in v] for n, v in env.items()}  # type: ignore[union-attr]


class EnvStore:
    """One file's answers: loaded on the first question, written by ``flush``."""

    def __init__(self, shared_key: tuple[object, ...]) -> None:
        self.key = cache.key(KIND, FORMAT, repr(shared_key))
        self._stored: dict[str, Any] | None = None
        self._used: dict[str, Any] = {}  # what this lint asked or made, as stored
        self._made = False
        self._values: dict[Val, Val] = {}  # one copy of each decoded value
        self.hits = self.misses = 0

    def _load(self) -> dict[str, Any]:
        if self._stored is None:
            self._stored = {}
            payload = cache.get(KIND, self.key)
            if payload is not None:
                try:
                    data = json.loads(payload)
                    if isinstance(data, dict):
                        self._stored = data
                except (ValueError, RecursionError):
                    pass  # damaged: as if absent
        return self._stored

    def _val(self, raw: Any) -> Val:
        if not isinstance(raw, list):
            raise ValueError("not a value")
        v: Val = tuple(p if isinstance(p, str) else Unk(str(p["U"])) for p in raw)
        return self._values.setdefault(v, v)

    def dec_env(self, raw: Any) -> dict[str, Val]:
        if not isinstance(raw, dict):
            raise ValueError("not an env")
        return {str(n): self._val(v) for n, v in raw.items()}

    @staticmethod
    def dec_bool(raw: Any) -> bool:
        if not isinstance(raw, bool):
            raise ValueError("not a bool")
        return raw

    def kept(self, across: tuple[object, ...], make: Callable[[], T], enc: Callable[[T], Any],
             dec: Callable[[Any], T]) -> T:
        """The stored answer for ``across``, else ``make()`` (stored at the next flush)."""
        sub = _sub(across)
        raw = self._load().get(sub)
        if raw is not None:
            try:
                value = dec(raw)
            except (ValueError, KeyError, TypeError, AttributeError):
                value = None  # damaged: made again
            if value is not None:
                self.hits += 1
                self._used[sub] = raw
                return value
        self.misses += 1
        value = make()
        self._used[sub] = enc(value)
        self._made = True
        return value

    def flush(self) -> None:
        """Write what this lint used so far, when it made anything new since the last write
        (a store lives as long as one lint's facts: gather and the rules after it flush)."""
        if self._made:
            cache.put(KIND, self.key, json.dumps(self._used, separators=(",", ":")).encode())
            self._made = False


def flush(facts: Facts) -> None:
    """Write what a lint made to the persistent cache: its evaluations and its rendered envs
    (``gather`` flushes, and the lint again after its rules, which evaluate and render too)."""
    evalcache.flush()
    if "envs" in facts.__dict__ and facts.envs.disk is not None:
        facts.envs.disk.flush()
