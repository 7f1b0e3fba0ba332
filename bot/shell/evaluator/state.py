"""What the evaluator tracks on one path through a script: its events (dispatches,
sources, exits, observed commands), its variables and the ``State`` that holds them.

Paths fork at every branch the evaluator cannot decide and are merged (``join``) when
there are too many. Both must stay cheap in a 20,000-line launcher with thousands of
variables, so a state keeps its variables in a persistent map (``bot.shell.evaluator.varmap``): a
fork is O(1), two paths are keyed by a running hash in O(1), and comparing or joining
them looks only at the buckets of variables they do not share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.shell.evaluator.varmap import VarMap
from bot.shell.ir import nodes as ir
from bot.shell.ir.frozen import quick_init
from bot.shell.ir.values import EMPTY, Val, unknown


@dataclass(frozen=True, slots=True)
class Loc:
    path: str
    line: int
    col: int = 1


@dataclass(frozen=True, slots=True)
class Dispatch:
    """A script run by the evaluated file (or a file it sourced)."""

    target: Val  # normalized, repo-relative when known
    raw: Val  # the value as the command saw it
    loc: Loc  # where the script word is
    built_at: Loc  # the line that built the path (an assignment, or the word itself)
    via: str  # "bash", "exec", "subst", "bash -c", "srun", "direct", ...
    var_parts: tuple[tuple[str, str], ...] = ()  # (var name, its value) used in the word


@dataclass(frozen=True, slots=True)
class Sourced:
    target: Val
    loc: Loc


@dataclass(frozen=True, slots=True)
class Exited:
    """An ``exit`` that ends the evaluated script (not one inside ``$(...)`` or ``( )``)."""

    loc: Loc
    code: int | None


@dataclass(frozen=True, slots=True)
class Ran:
    """A command named in ``Options.observe`` ran: an external job tool (``srtctl apply -f
    "$CONFIG_FILE"``) or a copy into its checkout (``cp -rT "$GITHUB_WORKSPACE/x" recipes/x``)."""

    name: str  # the observed command (behind prefix commands and wrappers)
    argv: tuple[Val, ...]
    loc: Loc
    cwd: Val = EMPTY  # repo-relative; unknown after ``cd`` into a folder made at run time
    deps: frozenset[str] = frozenset()  # the environment variables its words derive from


@dataclass(frozen=True, slots=True)
class Wrote:
    """A file the script writes (``cat > F <<EOF``, ``echo ... >> F``); recorded only where
    the evaluator is asked to (``Options.sinks``). ``content`` is unknown when the command
    is not one whose output we can tell."""

    target: Val  # normalized, as ``Dispatch.target``
    content: Val
    append: bool
    loc: Loc
    raw: Val = ()  # the target as written (``$CFG``'s value before normalization)


@dataclass(frozen=True, slots=True)
class Served:
    """A command ``Options.sinks`` recognised (a server, a benchmark client), with what it
    starts with: its words, the line each came from, and its environment."""

    kind: str  # what the sink said (an engine, "client")
    start: int  # the index of the first argument after the launch words
    argv: tuple[Val, ...]
    lines: tuple[Loc, ...]  # per word: where it was written (an array element, a variable, the word)
    env: tuple[tuple[str, Val], ...]  # exported variables and the command's inline assignments
    plain: tuple[tuple[str, Val, Loc], ...]  # set but not exported: they never reach the command
    files: tuple[Wrote, ...]  # what the path wrote before the command, last write per file
    loc: Loc
    # The evaluation's own env reaches the command too, but for ``dropped`` (as ``Handed``).
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Handed:
    """The environment a dispatched script starts with (``Options.sinks`` only): what the
    launcher exports, or, across a container boundary, what crosses it (``docker run -e X``,
    ``srun --export=NONE,X=1``). ``complete`` is False when more may cross than we can
    tell (``--env-file F``, an unknown ``-e`` word)."""

    target: Val
    loc: Loc
    env: tuple[tuple[str, Val], ...]
    complete: bool = True
    boundary: str = ""  # "docker", "srun --export", ... ("" when the env is the launcher's own)
    # Variables passed on as the evaluation got them are not in ``env`` (their values are the
    # caller's, so that a result cached for another env of equal relevant values stays right):
    # with ``inherit_all`` every one of them except ``dropped`` (unset, unexported, changed),
    # else only those named in ``inherited`` (``docker run -e X``).
    inherited: tuple[str, ...] = ()
    inherit_all: bool = False
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Read:
    """A read of a variable that is not set on the path (``Options.record_reads``): ``kind`` is
    "plain" (``$X``), "test" (``[[ -n $X ]]``), "nounset" (either, under ``set -u``: the path
    ends there), "guard" (``${X:?}``) or "check" (an ``Options.env_checks`` command's argument)."""

    name: str
    loc: Loc
    kind: str


Event = Dispatch | Sourced | Exited | Ran | Wrote | Served | Handed | Read


@dataclass(frozen=True)
class Var:
    value: Val
    exported: bool = False
    origin: Loc | None = None
    parts: tuple[tuple[str, str], ...] = ()  # vars (name, known value) the assignment used
    deps: frozenset[str] = frozenset()  # the environment variables the value derives from
    # An array's elements, each with the line of the word it came from (``value`` joins them
    # with blanks); None for a plain variable. Kept only where the evaluator is asked to
    # (``Options.sinks``): ``"${X[@]}"`` then expands to one word per element.
    items: tuple[tuple[Val, int], ...] | None = None
    # Where each piece of ``value`` was written: (length, line) over its text with unknown
    # parts counted as one character; None when not tracked (``Options.sinks`` only).
    segments: tuple[tuple[int, int], ...] | None = None

    def __hash__(self) -> int:  # computed once: paths hash their variables as they set them
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.value, self.exported, self.origin, self.parts, self.deps, self.items, self.segments))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:  # joins compare many: identity, then the cached hash
        if self is other:
            return True
        if not isinstance(other, Var):
            return NotImplemented
        return hash(self) == hash(other) and (self.value, self.exported, self.origin, self.parts, self.deps,
                                              self.items, self.segments) == (
            other.value, other.exported, other.origin, other.parts, other.deps, other.items, other.segments)


def merged_var(name: str, va: Var | None, vb: Var | None) -> Var:
    """The variable of a merged path where two paths disagree on it: unknown."""
    return Var(unknown(f"${name} (merged paths)"), bool((va and va.exported) or (vb and vb.exported)),
               va.origin if va is not None else (vb.origin if vb is not None else None), (),
               (va.deps if va else frozenset()) | (vb.deps if vb else frozenset()))


class State:
    """One path through the script. ``vars`` is a persistent map (``VarMap``): a fork
    shares it until one of the two paths assigns, and then only the bucket it writes."""

    __slots__ = ("vars", "funcs", "argv", "flow", "status", "events", "out", "cwd", "file", "locals", "depth",
                 "rounds", "nounset")

    def __init__(self) -> None:
        self.vars: VarMap[Var] = VarMap()
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
        self.nounset = False  # ``set -u`` is on

    def setvar(self, name: str, var: Var) -> None:
        self.vars.set(name, var)

    def delvar(self, name: str) -> None:
        self.vars.pop(name)

    def copy(self) -> State:
        s = State.__new__(State)
        s.vars = self.vars.copy()
        s.funcs = self.funcs  # replaced, never mutated, when a function is defined
        s.argv = self.argv
        s.flow = self.flow
        s.status = self.status
        s.events = self.events
        s.out = self.out
        s.cwd = self.cwd
        s.file = self.file
        s.locals = [dict(f) for f in self.locals] if self.locals else []
        s.depth = self.depth
        s.rounds = self.rounds
        s.nounset = self.nounset
        return s

    def quick_key(self) -> tuple[object, ...]:
        return (self.vars.ident(), id(self.funcs), self.argv, self.flow, self.status, id(self.events), self.out,
                self.cwd, self.file, self.depth, len(self.locals), self.nounset)

    def key(self) -> tuple[object, ...]:
        """Equal for equal paths (variables by their running hash: ``same`` confirms)."""
        return (self.vars.hash, len(self.vars), tuple(self.funcs), self.argv, self.flow, self.status, self.events,
                self.out, self.cwd, self.file, self.nounset)

    def same(self, other: State) -> bool:
        """Two paths with equal keys: the same variables too (a hash can collide)."""
        return self.vars == other.vars

    def emit(self, event: Event) -> None:
        if not holds(self.events, event):
            self.events = self.events + (event,)


def holds(events: tuple[Event, ...], event: Event) -> bool:
    """``event in events``: events of other classes are never equal (dataclass equality), so
    only those of its class are compared (each comparison is a call in Python)."""
    kind = type(event)
    for e in events:
        if e is event or (type(e) is kind and e == event):
            return True
    return False


def merge_events(events: tuple[Event, ...], more: tuple[Event, ...], skip: type | None = None) -> tuple[Event, ...]:
    """``events`` with each event of ``more`` it does not hold appended, in order (but those of
    class ``skip``). The run of the same objects both start with (paths forked from one) is
    held already: it is not looked for again."""
    start = 0
    for a, b in zip(events, more):
        if a is not b:
            break
        start += 1
    for i in range(start, len(more)):
        e = more[i]
        if not holds(events, e) and (skip is None or not isinstance(e, skip)):
            events = events + (e,)
    return events


def changed(a: State, b: State) -> Iterable[str]:
    """Names whose values may differ between two paths: those in the buckets of their
    variables whose hashes differ."""
    return [name for name, _, _ in a.vars.diff(b.vars)]


def join(a: State, b: State, reuse: bool = False, interned: dict[tuple[object, ...], Var] | None = None) -> State:
    """Merge two paths: variables that differ become unknown. ``reuse``: the caller drops
    ``a`` and ``b``, so ``a`` becomes the merged path (no copy of its variables).
    ``interned``: one object per merged value, so that later joins skip it by identity."""
    s = a if reuse else a.copy()
    for name, va, vb in a.vars.diff(b.vars):
        if va == vb:
            continue
        if va is not None and vb is not None and va.value == vb.value:
            continue
        if interned is None:
            s.setvar(name, merged_var(name, va, vb))
            continue
        key = (name, bool((va and va.exported) or (vb and vb.exported)),
               va.origin if va is not None else (vb.origin if vb is not None else None),
               (va.deps if va else frozenset()) | (vb.deps if vb else frozenset()))
        var = interned.get(key)
        if var is None:
            var = interned[key] = merged_var(name, va, vb)
        s.setvar(name, var)
    s.events = merge_events(a.events, b.events)
    s.status = a.status if a.status == b.status else None
    # ``set -u`` on a merged path only when on both: a read then ends no path that may run on
    s.nounset = a.nounset and b.nounset
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


for _cls in (Loc, Dispatch, Sourced, Exited, Ran, Wrote, Served, Handed, Read, Var):
    quick_init(_cls)  # made per assignment and per event: ``frozen.quick_init``
del _cls
