"""A persistent map of variable names to values: the variables of one path (``State``).

Paths fork at every branch the evaluator cannot decide, and a 20,000-line launcher sets
thousands of variables, so neither a fork nor a comparison of two paths may cost
O(variables). The map is 512 *buckets* (small dicts, by the hash of the name) in a list:

- ``copy`` is O(1): both maps share the list and its buckets;
- a write to a list or bucket that another map still holds copies it first (the list
  is 512 references, a bucket a few entries), so forks share every bucket neither
  changed;
- two maps compare bucket by bucket, shared buckets by identity (in C: ``list == list``).

A running hash (XOR of ``hash((name, value))``), in total and per bucket, keys a map in
O(1) (equal hashes are confirmed with ``==``), and ``changed`` lists only the names in
buckets whose hashes differ: two paths that forked long ago and then set the same
variables hold equal buckets that are no longer shared.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from itertools import chain, compress
from operator import ne
from sys import getrefcount
from typing import Generic, TypeVar, overload

V = TypeVar("V", bound=Hashable)

BUCKETS = 512
GROUP = 32  # buckets per group: ``diff`` compares 16 group hashes, then 32 in each group that differs
_GROUPS = range(BUCKETS // GROUP)
_IN_GROUP = [range(g * GROUP, (g + 1) * GROUP) for g in _GROUPS]


class VarMap(Generic[V]):
    __slots__ = ("_b", "_h", "_len", "hash")

    def __init__(self) -> None:
        self._b: list[dict[str, V] | None] = [None] * BUCKETS
        # The running hash of each bucket, then of each group of buckets.
        self._h: list[int] = [0] * (BUCKETS + len(_GROUPS))
        self._len = 0
        self.hash = 0  # XOR of hash((name, value)) over the entries

    @classmethod
    def of(cls, items: Iterable[tuple[str, V]]) -> VarMap[V]:
        """A new map holding ``items``, as ``set`` of each in turn would make it (no copies to
        check for: nothing else holds its buckets yet)."""
        m: VarMap[V] = cls()
        b, hs = m._b, m._h
        total = n = 0
        for name, value in items:
            i = hash(name) % BUCKETS
            d = b[i]
            if d is None:
                d = b[i] = {}
            old = d.get(name)
            h = hash((name, value))
            if old is not None:
                h ^= hash((name, old))
            else:
                n += 1
            d[name] = value
            total ^= h
            hs[i] ^= h
            hs[BUCKETS + i // GROUP] ^= h
        m._len = n
        m.hash = total
        return m

    def copy(self) -> VarMap[V]:
        m: VarMap[V] = VarMap.__new__(VarMap)
        m._b = self._b
        m._h = self._h
        m._len = self._len
        m.hash = self.hash
        return m

    def ident(self) -> int:
        """Equal for maps that share all their buckets (so hold the same entries)."""
        return id(self._b)

    # ---------------------------------------------------------------- reading
    @overload
    def get(self, name: str) -> V | None: ...

    @overload
    def get(self, name: str, default: V) -> V: ...

    def get(self, name: str, default: V | None = None) -> V | None:
        d = self._b[hash(name) % BUCKETS]
        if d is None:
            return default
        return d.get(name, default)

    def __getitem__(self, name: str) -> V:
        d = self._b[hash(name) % BUCKETS]
        if d is None:
            raise KeyError(name)
        return d[name]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        d = self._b[hash(name) % BUCKETS]
        return d is not None and name in d

    def __len__(self) -> int:
        return self._len

    def items(self) -> Iterator[tuple[str, V]]:
        # the buckets in order, skipping empty ones (None), in C
        return chain.from_iterable(map(dict.items, filter(None, self._b)))

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(filter(None, self._b))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VarMap):
            return NotImplemented
        return self._b is other._b or (self._len == other._len and self._b == other._b)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def diff(self, other: VarMap[V]) -> list[tuple[str, V | None, V | None]]:
        """(name, value here, value there) where the values may differ: the names in
        buckets whose hashes differ, values compared by identity (the caller compares
        them by value)."""
        a, b = self._b, other._b
        if a is b:
            return []
        out: list[tuple[str, V | None, V | None]] = []
        ha, hb = self._h, other._h
        for g in compress(_GROUPS, map(ne, ha[BUCKETS:], hb[BUCKETS:])):
            lo = g * GROUP
            out += self._diff_buckets(other, compress(_IN_GROUP[g], map(ne, ha[lo : lo + GROUP],
                                                                        hb[lo : lo + GROUP])))
        return out

    def _diff_buckets(self, other: VarMap[V], indexes: Iterable[int]) -> list[tuple[str, V | None, V | None]]:
        a, b = self._b, other._b
        out: list[tuple[str, V | None, V | None]] = []
        for i in indexes:
            da, db = a[i], b[i]
            if da is None:
                if db is not None:
                    out += [(n, None, v) for n, v in db.items()]
            elif db is None:
                out += [(n, v, None) for n, v in da.items()]
            else:
                get = db.get
                for n, v in da.items():
                    w = get(n)
                    if w is not v:
                        out.append((n, v, w))
                if len(db) > len(da) or db.keys() != da.keys():
                    out += [(n, None, db[n]) for n in db.keys() - da.keys()]
        return out

    # ---------------------------------------------------------------- writing
    def _bucket(self, i: int) -> dict[str, V]:
        """Bucket ``i``, copied first unless this map alone holds it (CPython reference
        counts: of two forks, the second to write finds itself the only holder, and a
        path dropped by a merge leaves its buckets to the one that stays). Counts are
        taken of attribute and item loads, which are always new references: a count of
        2 is the holder plus the call's argument."""
        if getrefcount(self._b) > 2:  # another map holds the list
            self._b = list(self._b)
            self._h = list(self._h)
        b = self._b
        if b[i] is None:
            d: dict[str, V] = {}
            b[i] = d
        elif getrefcount(b[i]) > 2:  # another list holds the bucket
            d = b[i] = dict(b[i])  # type: ignore[arg-type]
        else:
            d = b[i]  # type: ignore[assignment]
        return d

    def set(self, name: str, value: V) -> None:
        i = hash(name) % BUCKETS
        d = self._bucket(i)
        old = d.get(name)
        h = hash((name, value))
        if old is not None:
            h ^= hash((name, old))
        else:
            self._len += 1
        d[name] = value
        self.hash ^= h
        hs = self._h
        hs[i] ^= h
        hs[BUCKETS + i // GROUP] ^= h

    def pop(self, name: str) -> V | None:
        i = hash(name) % BUCKETS
        cur = self._b[i]
        if cur is None or name not in cur:
            return None
        d = self._bucket(i)
        old = d.pop(name)
        if not d:  # an empty bucket is None, as in a map that never had one
            self._b[i] = None
        self._len -= 1
        h = hash((name, old))
        self.hash ^= h
        hs = self._h
        hs[i] ^= h
        hs[BUCKETS + i // GROUP] ^= h
        return old
