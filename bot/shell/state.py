"""What the evaluator tracks on one path through a script: its events (dispatches,
sources, exits, observed commands), its variables and the ``State`` that holds them.

Paths fork at every branch the evaluator cannot decide and are merged (``join``) when
there are too many. Both must stay cheap in a 20,000-line launcher with thousands of
variables, so a state keeps, besides its variables, a hash per *bucket* of variable
names (updated as variables are set): two paths are keyed in O(1), and a join compares
only the variables in buckets whose hashes differ.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass

from bot.shell import ir
from bot.shell.values import EMPTY, Val, unknown

BUCKETS = 512


@dataclass(frozen=True)
class Loc:
    path: str
    line: int
    col: int = 1


@dataclass(frozen=True)
class Dispatch:
    """A script run by the evaluated file (or a file it sourced)."""

    target: Val  # normalized, repo-relative when known
    raw: Val  # the value as the command saw it
    loc: Loc  # where the script word is
    built_at: Loc  # the line that built the path (an assignment, or the word itself)
    via: str  # "bash", "exec", "subst", "bash -c", "srun", "direct", ...
    var_parts: tuple[tuple[str, str], ...] = ()  # (var name, its value) used in the word


@dataclass(frozen=True)
class Sourced:
    target: Val
    loc: Loc


@dataclass(frozen=True)
class Exited:
    """An ``exit`` that ends the evaluated script (not one inside ``$(...)`` or ``( )``)."""

    loc: Loc
    code: int | None


@dataclass(frozen=True)
class Ran:
    """A command named in ``Options.observe`` ran: an external job tool (``srtctl apply -f
    "$CONFIG_FILE"``) or a copy into its checkout (``cp -rT "$GITHUB_WORKSPACE/x" recipes/x``)."""

    name: str  # the observed command (behind prefix commands and wrappers)
    argv: tuple[Val, ...]
    loc: Loc
    cwd: Val = EMPTY  # repo-relative; unknown after ``cd`` into a folder made at run time
    deps: frozenset[str] = frozenset()  # the environment variables its words derive from


Event = Dispatch | Sourced | Exited | Ran


@dataclass(frozen=True)
class Var:
    value: Val
    exported: bool = False
    origin: Loc | None = None
    parts: tuple[tuple[str, str], ...] = ()  # vars (name, known value) the assignment used
    deps: frozenset[str] = frozenset()  # the environment variables the value derives from

    def __hash__(self) -> int:  # computed once: paths hash their variables as they set them
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.value, self.exported, self.origin, self.parts, self.deps))
            object.__setattr__(self, "_hash", h)
        return h




class Names:
    """The variable names a family of paths has set, by bucket (shared by its forks)."""

    __slots__ = ("seen", "by_bucket")

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.by_bucket: dict[int, list[str]] = {}

    def add(self, name: str, bucket: int) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.by_bucket.setdefault(bucket, []).append(name)


class State:
    """One path through the script. ``vars`` is copy-on-write: forks share the dict (and
    the bucket hashes) until one of them assigns, which also lets identical forks be
    recognised by identity."""

    __slots__ = ("vars", "funcs", "argv", "flow", "status", "events", "out", "cwd", "file", "locals", "depth",
                 "rounds", "_shared", "_vhash", "_buckets", "_names")

    def __init__(self) -> None:
        self.vars: dict[str, Var] = {}
        self.funcs: dict[str, tuple[ir.Stmt, ...]] = {}
        self.argv: tuple[Val, ...] = ()
        self.flow: str | None = None
        self.status: int | None = 0
        self.events: tuple[Event, ...] = ()
        self.out: Val | None = None
        self.cwd: Val = EMPTY  # repo-relative; EMPTY is the repo root
        self.file: str = ""
        self.locals: list[dict[str, Var | None]] = []
        self.depth = 0
        self.rounds = 0  # merges of the paths this one (and its forks) outlived
        self._shared = False
        # XOR of hash((name, var)) over ``vars``, in total and per bucket of names.
        self._vhash = 0
        self._buckets: list[int] = [0] * BUCKETS
        self._names = Names()

    def _own(self) -> None:
        if self._shared:
            # Copy only what another path still holds: of two forks, the second to write
            # finds itself the only holder (CPython reference counts: ours + the call's).
            if sys.getrefcount(self.vars) > 2:
                self.vars = dict(self.vars)
            if sys.getrefcount(self._buckets) > 2:
                self._buckets = list(self._buckets)
            self._shared = False

    def setvar(self, name: str, var: Var) -> None:
        self._own()
        b = hash(name) % BUCKETS
        h = hash((name, var))
        old = self.vars.get(name)
        if old is not None:
            h ^= hash((name, old))
        else:
            self._names.add(name, b)
        self.vars[name] = var
        self._vhash ^= h
        self._buckets[b] ^= h

    def delvar(self, name: str) -> None:
        if name in self.vars:
            self._own()
            h = hash((name, self.vars.pop(name)))
            self._vhash ^= h
            self._buckets[hash(name) % BUCKETS] ^= h

    def copy(self) -> State:
        s = State.__new__(State)
        s.vars = self.vars
        s._buckets = self._buckets
        s._vhash = self._vhash
        s._names = self._names
        self._shared = s._shared = True
        s.funcs = self.funcs  # replaced, never mutated, when a function is defined
        s.argv = self.argv
        s.flow = self.flow
        s.status = self.status
        s.events = self.events
        s.out = self.out
        s.cwd = self.cwd
        s.file = self.file
        s.locals = [dict(f) for f in self.locals]
        s.depth = self.depth
        s.rounds = self.rounds
        return s

    def quick_key(self) -> tuple[object, ...]:
        return (id(self.vars), id(self.funcs), self.argv, self.flow, self.status, id(self.events), self.out,
                self.cwd, self.file, self.depth, len(self.locals))

    def key(self) -> tuple[object, ...]:
        """Equal for equal paths (variables by their running hash: ``same`` confirms)."""
        return (self._vhash, len(self.vars), tuple(self.funcs), self.argv, self.flow, self.status, self.events,
                self.out, self.cwd, self.file)

    def same(self, other: State) -> bool:
        """Two paths with equal keys: the same variables too (a hash can collide)."""
        return self.vars is other.vars or self.vars == other.vars

    def emit(self, event: Event) -> None:
        if event not in self.events:
            self.events = self.events + (event,)


def changed(a: State, b: State) -> Iterable[str]:
    """Names whose values may differ between two paths: those in buckets whose hashes
    differ (all names, compared one by one, for paths of different families)."""
    if a._names is not b._names:
        return [n for n, v in a.vars.items() if b.vars.get(n) is not v] + [n for n in b.vars if n not in a.vars]
    ha, hb = a._buckets, b._buckets
    if ha is hb or ha == hb:
        return ()
    by_bucket = a._names.by_bucket
    va, vb = a.vars, b.vars
    return [n for i in range(BUCKETS) if ha[i] != hb[i] for n in by_bucket.get(i, ()) if va.get(n) is not vb.get(n)]


def join(a: State, b: State, reuse: bool = False) -> State:
    """Merge two paths: variables that differ become unknown. ``reuse``: the caller drops
    ``a`` and ``b``, so ``a`` becomes the merged path (no copy of its variables)."""
    s = a if reuse else a.copy()
    names: Iterable[str] = () if a.vars is b.vars else changed(a, b)
    for name in names:
        va, vb = a.vars.get(name), b.vars.get(name)
        if va == vb:
            continue
        if va is not None and vb is not None and va.value == vb.value:
            continue
        s.setvar(name, Var(unknown(f"${name} (merged paths)"), bool((va and va.exported) or (vb and vb.exported)),
                           va.origin if va is not None else (vb.origin if vb is not None else None), (),
                           (va.deps if va else frozenset()) | (vb.deps if vb else frozenset())))
    events = a.events
    for e in b.events:
        if e not in events:
            events = events + (e,)
    s.events = events
    s.status = a.status if a.status == b.status else None
    return s


def join_live(states: list[State]) -> list[State]:
    """Loops: paths forked inside one iteration are joined again before the next."""
    live = [s for s in states if s.flow is None]
    if len(live) <= 1:
        return states
    joined = live[0]
    for other in live[1:]:
        joined = join(joined, other)
    return [s for s in states if s.flow is not None] + [joined]
