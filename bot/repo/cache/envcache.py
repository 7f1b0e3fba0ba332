"""Rendered launcher envs kept across processes: what ``EnvSource`` computes from the
workflows for an (entry, point, node) is the same in every lint of the same texts.

A lint of InferenceX makes about 6,000 such answers: envs (each a walk of the workflow's
env expressions, matrix fields and inputs), the few variables of one a comparison needs,
and which path runs each point. Once the evaluations came from ``bot.repo.cache.evalcache``, they
were a sixth of a warm lint. Those answers depend only
on what ``EnvSource._across`` keys them by: the workflows' texts and the profile, the
call's place among the workflows' calls, the entry's and the point's contents, the node
and the label, and the names asked for. Nothing else is read: a render sees no other file
of the tree.

The entries are spread over ``BUCKETS`` files per (workflow texts, profile), by a hash of
the entry (``cache.key`` adding benchbot's own code): a change to a few entries rewrites a
few files, and a cold lint of a large repo writes 16 files, not one per entry. A file holds
what the last lint that wrote it used of its entries (their hits and what it made), so the
files stay about one tree's worth however many commits ``history`` walks; one is written
only when a lint made something new for one of its entries. Data only (JSON, decoded by
``bot.cachejson`` within its budgets): a value is a list of text parts and ``{"U": why}``
unknowns, each checked when asked. A damaged or foreign file is a miss, never an error. An env
decides what an evaluation sees, so in CI a file is read only when sealed with the key of
``BENCHBOT_CACHE_KEY`` (``bot.cachetrust``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypeVar

from bot import cache
from bot.cachejson import Refused, boolean, obj, string
from bot.repo.cache import evalcache
from bot.repo.files.parsed import shared
from bot.shell.ir.values import Unk, Val

FORMAT = "1"
BUCKETS = 16
_memory_only = 0  # walks (``history``) during which renders stay in the process
KIND = "envs"
T = TypeVar("T")


def enabled() -> bool:
    """Whether renders go to the persistent cache (``cache.persistent``: not, for one, in CI
    without a key; the process memo still shares them)."""
    return cache.persistent() and not _memory_only


@contextmanager
def memory_only() -> Iterator[None]:
    """No env files while this lasts: ``history``'s commits share renders through the process
    memo, and writing the files a changed entry touches at every commit was 5% of a walk of
    InferenceX (evaluations and parses still go to the persistent cache)."""
    global _memory_only
    _memory_only += 1
    try:
        yield
    finally:
        _memory_only -= 1


@lru_cache(maxsize=8192, typed=True)  # the same entries, points and sets of names come again and again
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


def _unknown(obj: object) -> dict[str, str]:
    if isinstance(obj, Unk):
        return {"U": obj.why}
    raise TypeError(f"cannot keep a {type(obj).__name__} in the env cache")


# An env is written as it is (a value's tuple is a JSON array): the C encoder calls
# ``_unknown`` only for the unknown parts.
_dumps = json.JSONEncoder(separators=(",", ":"), default=_unknown).encode


class EnvStore:
    """The answers of one (workflow texts, profile): ``BUCKETS`` files by a hash of the entry
    (its name and content), each read on the first question of one of its entries, written
    by ``flush`` when the lint made something new for one of them. Only what is asked is
    decoded; what is written is encoded then, a file at a time, from the values the lint
    holds anyway (a 10x synthetic repo makes 38,000 answers: none is kept twice)."""

    def __init__(self, shared_key: tuple[object, ...]) -> None:
        self.key = repr(shared_key)
        self._stored: dict[int, dict[str, Any]] = {}  # bucket -> sub -> as stored (not yet asked)
        # bucket -> key -> value: what this lint asked or made (by the caller's key tuple, which
        # its in-process memo holds anyway: nothing more is kept than a reference)
        self._used: dict[int, dict[tuple[object, ...], dict[str, Val] | bool]] = {}
        self._made: set[int] = set()  # buckets with something new since the last write
        self._buckets: dict[object, int] = {}
        self._values: dict[Val, Val] = {}  # one copy of each decoded value
        self.hits = self.misses = 0

    def _bucket(self, entry: object) -> int:
        b = self._buckets.get(entry)
        if b is None:
            b = self._buckets[entry] = int(hashlib.sha1(_part(entry).encode()).hexdigest()[:8], 16) % BUCKETS
        return b

    def _file(self, bucket: int) -> str:
        return cache.key(KIND, FORMAT, self.key, str(bucket))

    def _load(self, bucket: int) -> dict[str, Any]:
        got = self._stored.get(bucket)
        if got is None:
            got = self._stored[bucket] = {}
            data = cache.get_json(KIND, self._file(bucket))
            if isinstance(data, dict):  # anything else: damaged, as if absent
                got.update(data)
        return got

    def _val(self, raw: Any) -> Val:
        if not isinstance(raw, list):
            raise Refused("not a value")
        v: Val = tuple(p if isinstance(p, str) else Unk(string(obj(p)["U"])) for p in raw)
        return self._values.setdefault(v, v)

    def dec_env(self, raw: Any) -> dict[str, Val]:
        return {n: self._val(v) for n, v in obj(raw).items()}  # JSON object keys are strings

    @staticmethod
    def dec_bool(raw: Any) -> bool:
        return boolean(raw)

    def kept(self, across: tuple[object, ...], make: Callable[[], T], dec: Callable[[Any], T]) -> T:
        """The answer for ``across`` (its entry at index 3): from this process's memo
        (``bot.repo.files.parsed.shared``), else from the file, else ``make()`` (written at the next
        flush). Answers are envs (dicts) or booleans. Whatever it came from, the answer is
        noted as used by this lint: a file written later holds all its entries' answers that
        the lint used, not only those the memo did not have (``event``'s second lint,
        ``history``'s commits after the first)."""
        bucket = self._bucket(across[3])
        value = shared(across, lambda: self._stored_or_made(bucket, across, make, dec))
        self._used.setdefault(bucket, {}).setdefault(across, value)  # type: ignore[arg-type]
        return value

    def _stored_or_made(self, bucket: int, across: tuple[object, ...], make: Callable[[], T],
                        dec: Callable[[Any], T]) -> T:
        stored = self._load(bucket)
        raw = stored.pop(_sub(across), None) if stored else None
        if raw is not None:
            try:
                value = dec(raw)
            except (ValueError, KeyError, TypeError, AttributeError):
                value = None  # damaged: made again
            if value is not None:
                self.hits += 1
                return value
        self.misses += 1
        self._made.add(bucket)
        return make()

    def flush(self) -> None:
        """Write the files that have something new: what this lint used of their entries (a
        store lives as long as one lint's facts: gather and the rules flush)."""
        for bucket in sorted(self._made):
            # one bucket at a time, its answers as they are held (references, not copies)
            text = _dumps({_sub(k): v for k, v in self._used[bucket].items()})
            cache.put(KIND, self._file(bucket), text.encode("ascii"))
        self._made.clear()


def flush(facts: object) -> None:
    """Write what a lint made to the persistent cache: its evaluations and the envs ``facts``
    rendered (its ``envs``, when it made them: ``gather`` flushes, and the lint again after its
    rules, which evaluate and render too). Any object: the cache knows no Facts."""
    evalcache.flush()
    envs = vars(facts).get("envs")
    disk = getattr(envs, "disk", None)
    if isinstance(disk, EnvStore):
        disk.flush()
