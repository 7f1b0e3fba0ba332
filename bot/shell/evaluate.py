"""Partial evaluation of a shell script under a concrete environment.

The evaluator walks the IR with a set of *paths* (``State``). Everything it can know
(assignments, parameter expansions, ``[[ ]]`` tests, ``-f`` checks against the repo tree,
``$(...)`` of ``printf``/``echo``, functions, ``source``) it computes; everything else
(the output of ``salloc``, the exit status of ``docker``) is ``Unk``. Where a condition
is unknown the path forks; the number of live paths is bounded, and when the bound is
hit, paths are merged (differing variables become unknown) and ``bound_hit`` is set.

It never runs anything. What it records are *events*: scripts dispatched
(``bash X``, ``exec bash X``, ``$(bash X)``, ``bash -c "... X ..."``, ``srun ... X``)
and files sourced.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from bot.shell import arith as _arith
from bot.shell import ir
from bot.shell.budget import Budget, BudgetExceeded, BudgetHit, Limits
from bot.shell.builtins import (  # noqa: F401 - kept importable from here
    _binary,
    _echo,
    _escapes,
    _int_or_none,
    _nonempty,
    _path_op,
    _printf,
    _printf_too_wide,
    _status,
    _test_argv,
    _to_int,
)
from bot.shell.state import Dispatch, Event, Exited, Loc, Ran, Sourced, State, Var, join, join_live
from bot.shell.values import (
    EMPTY,
    Pat,
    TooLong,
    Unk,
    Val,
    concat,
    is_known,
    known,
    leading,
    lit,
    match,
    pat_from_val,
    remove,
    replace,
    unknown,
)
from bot.shell.wordops import (  # noqa: F401 - kept importable from here
    _SHIFT_CACHE,
    INERT_COMMANDS,
    _cmd_name,
    _describe,
    _has_effect,
    _inert,
    _join_words,
    _looks_like_script,
    _norm,
    _redirects_stdout,
    _shift_lines,
    _split_fields,
    _strip_trailing_newlines,
    _word_at,
    _word_is_quoted,
)

SHELLS = frozenset({"bash", "sh", "dash", "zsh"})
# Commands that run their argument command (options first).
PREFIX_COMMANDS = frozenset(
    {"exec", "command", "nohup", "time", "sudo", "stdbuf", "nice", "setsid", "env", "timeout",
     "taskset", "numactl", "flock", "xargs", "chrt", "ionice", "unbuffer", "caffeinate"}
)
# Commands that run a command somewhere else (a container, a cluster node).
DEFAULT_WRAPPERS = frozenset(
    {"srun", "salloc", "sbatch", "docker", "podman", "enroot", "apptainer", "singularity",
     "mpirun", "torchrun", "ssh", "kubectl", "pdsh", "parallel"}
)
_PURE_OUTPUT = frozenset({"echo", "printf"})
MAX_ROUNDS = 8  # merges of the paths a path may outlive before it is merged itself

_STRING_CACHE: dict[tuple[str, str], ir.Script] = {}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class PathResult:
    events: tuple[Event, ...]
    exited: bool

    @property
    def exit_at(self) -> Exited | None:
        ends = [e for e in self.events if isinstance(e, Exited)]
        return ends[-1] if self.exited and ends else None


@dataclass
class Result:
    paths: list[PathResult]
    bound_hit: bool = False
    # Environment variables that influenced a branch, a loop or a dispatched path: two
    # environments that agree on these give the same result.
    relevant: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    # Budgets that ran out (``bot.shell.budget``): a fatal one (steps, deadline) ended the
    # evaluation, and ``paths`` is then empty: what the script runs is unknown.
    budget_hits: tuple[BudgetHit, ...] = ()

    @property
    def stopped(self) -> BudgetHit | None:
        return next((h for h in self.budget_hits if h.fatal), None)

    def dispatches(self) -> list[Dispatch]:
        seen: dict[Dispatch, None] = {}
        for p in self.paths:
            for e in p.events:
                if isinstance(e, Dispatch):
                    seen.setdefault(e)
        return list(seen)

    def ran(self) -> list[Ran]:
        return list(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Ran)))

    def sourced(self) -> list[Sourced]:
        seen: dict[Sourced, None] = {}
        for p in self.paths:
            for e in p.events:
                if isinstance(e, Sourced):
                    seen.setdefault(e)
        return list(seen)


class FileSystem:
    """What the evaluator may ask about the repository (answered from a tree)."""

    def is_file(self, path: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def is_dir(self, path: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def script(self, path: str) -> ir.Script | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class Options:
    max_paths: int = 32
    max_depth: int = 12
    max_loop: int = 16
    wrappers: frozenset[str] = DEFAULT_WRAPPERS
    # Absolute prefixes that mean "the repository root" (the checkout, a container mount).
    workspace_aliases: tuple[str, ...] = ("/workspace/", "/github/workspace/")
    parse: Callable[[str, bytes], ir.Script] | None = None
    # Dispatched repo scripts to evaluate as children (e.g. a launcher that execs another).
    follow: Callable[[str], bool] | None = None
    # Scan mode: every branch is taken, in sequence, on one path (finds every reference).
    linear: bool = False
    # Evaluate sourced files inline (off when scanning: each file is scanned on its own).
    descend_source: bool = True
    # Treat variables that are not set as unknown (scanning a script with no entry env).
    unset_is_unknown: bool = False
    # Variables the runner sets with values we cannot know (HOME, USER, ...).
    unknown_names: Callable[[str], bool] | None = None
    # Commands whose runs are recorded as ``Ran`` events (external job tools, ``cp``).
    observe: frozenset[str] = frozenset()
    # Steps, deadline and bytes per value of one evaluation (``bot.shell.budget``).
    limits: Limits = field(default_factory=Limits)


class Evaluator:
    def __init__(self, fs: FileSystem, options: Options | None = None) -> None:
        self.fs = fs
        self.opt = options or Options()
        self.bound_hit = False
        self.relevant: set[str] = set()
        self._frames: list[set[str]] = []
        self._cmd_deps: frozenset[str] = frozenset()
        self.notes: list[str] = []
        self.budget = Budget(self.opt.limits)
        self._at: tuple[str, ir.Stmt | None] = ("", None)  # the statement running (for budget hits)
        self.key_work = 0  # paths keyed plus variables compared by ``bound`` (linear in statements)
        self._unknown_names: dict[str, bool] = {}
        # One object per value assigned (``assign``) or merged (``join``), for the whole run.
        self._assigned: dict[tuple[object, ...], Var] = {}
        self._interned: dict[tuple[object, ...], Var] = {}
        # (command, its words) -> (observed command, script found): the same on every path
        self._external_memo: dict[tuple[int, tuple[Val, ...]], tuple[str | None, tuple[str, int, str] | None]] = {}

    # ------------------------------------------------------------ dependencies
    def _push(self) -> None:
        self._frames.append(set())

    def _pop(self) -> frozenset[str]:
        deps = self._frames.pop()
        if self._frames:
            self._frames[-1].update(deps)
        return frozenset(deps)

    def _control(self, deps: Iterable[str]) -> None:
        self.relevant.update(deps)

    def _significant(self) -> None:
        """The current command's words decide something: its deps are relevant."""
        self.relevant.update(self._cmd_deps)

    # ------------------------------------------------------------------ entry
    def run(self, script: ir.Script, env: Mapping[str, Val], argv0: str | None = None) -> Result:
        st = State()
        st.file = script.path
        for name, value in env.items():
            st.setvar(name, Var(value, True, None, (), frozenset((name,))))
        st.setvar("0", Var(lit(argv0 or script.path), False, None))
        self.bound_hit = False
        self.relevant = set()
        self._frames = []
        self.budget = Budget(self.opt.limits)
        self._assigned = {}
        self._interned = {}
        self._at = (script.path, None)
        try:
            states = self.block(script.body, [st])
        except BudgetExceeded as e:
            return Result([], self.bound_hit, frozenset(self.relevant), list(self.notes),
                          (*self.budget.hits, e.hit))
        except RecursionError:
            path, line, detail = self._where()
            hit = BudgetHit("nesting depth", path, line, detail, True)
            return Result([], self.bound_hit, frozenset(self.relevant), list(self.notes), (*self.budget.hits, hit))
        paths = [PathResult(s.events, s.flow == "exit") for s in self.bound(states)]
        return Result(paths, self.bound_hit, frozenset(self.relevant), list(self.notes), tuple(self.budget.hits))

    def _unknown_name(self, name: str) -> bool:
        """``Options.unknown_names``, asked once per name (it matches globs)."""
        hit = self._unknown_names.get(name)
        if hit is None:
            hit = self._unknown_names[name] = bool(self.opt.unknown_names is not None
                                                   and self.opt.unknown_names(name))
        return hit

    # ---------------------------------------------------------------- budget
    def _where(self) -> tuple[str, int, str]:
        path, stmt = self._at
        if stmt is None:
            return path, 0, ""
        return path, stmt.pos.line, _describe(stmt)

    def _tick(self, n: int = 1) -> None:
        b = self.budget
        b.steps += n
        if b.steps >= b._next_check:
            path, line, detail = self._where()
            b.step(path, line, detail, 0)

    def _hit(self, what: str, st: State, detail: str = "") -> None:
        path, line, here = self._where()
        self.budget.hit(what, st.file or path, line, detail or here)

    def _cap(self, value: Val, st: State) -> Val:
        """A value over the byte limit becomes unknown (and is recorded)."""
        limit = self.budget.limits.max_value
        if len(value) == 1 and isinstance(value[0], str) and len(value[0]) <= limit:
            return value
        size = sum(len(p) for p in value if isinstance(p, str))
        if size <= limit:
            return value
        what = self.budget.value_what()
        self._hit(what, st)
        return unknown(what)

    # ------------------------------------------------------------- statements
    def block(self, stmts: Iterable[ir.Stmt], states: list[State]) -> list[State]:
        for stmt in stmts:
            if len(states) == 1:  # the common case, as below
                if states[0].flow is not None:
                    break
                states = self.stmt(stmt, states[0])
                if len(states) > 1:
                    states = self.bound(states)
                continue
            live = [s for s in states if s.flow is None]
            if not live:
                break
            done = [s for s in states if s.flow is not None]
            nxt: list[State] = []
            for s in live:
                nxt.extend(self.stmt(stmt, s))
            after = done + nxt
            # No new path and within the bound: nothing to merge (identical paths are
            # recognised the next time paths fork, or at the end of the run).
            states = after if len(after) <= min(len(states), self.opt.max_paths) else self.bound(after)
        return states

    def bound(self, states: list[State]) -> list[State]:
        if len(states) <= 1:
            return states
        quick: dict[tuple[object, ...], State] = {}
        for s in states:
            quick.setdefault(s.quick_key(), s)
        states = list(quick.values())
        if len(states) <= self.opt.max_paths:
            return states
        uniq: dict[tuple[object, ...], list[State]] = {}
        for s in states:
            self.key_work += 1
            bucket = uniq.setdefault(s.key(), [])
            for t in bucket:
                self.key_work += len(s.vars)
                if t.same(s):
                    break
            else:
                bucket.append(s)
        states = [s for bucket in uniq.values() for s in bucket]
        if len(states) <= self.opt.max_paths:
            return states
        self.bound_hit = True
        # Merge down to half the bound, so that the next forks do not hit it again at once.
        target = max(2, self.opt.max_paths // 2)
        live = [s for s in states if s.flow is None]
        done = [s for s in states if s.flow is not None]
        for s in live:
            s.rounds += 1
        # Paths that outlived MAX_ROUNDS merges are merged first (pop() takes from the end):
        # a path kept for a whole 20,000-line script drifts apart from the merged one in
        # thousands of variables, and every join with it would compare them all.
        live = [s for s in live if s.rounds <= MAX_ROUNDS] + [s for s in live if s.rounds > MAX_ROUNDS]
        while len(live) + len(done) > target and len(live) > 1:
            a, b = live.pop(), live.pop()
            j = join(a, b, reuse=True, interned=self._interned)
            j.rounds = 0
            live.append(j)
        while len(live) + len(done) > target and len(done) > 1:
            a, b = done.pop(), done.pop()  # finished paths: keep their events, never drop them
            done.append(join(a, b, reuse=True, interned=self._interned))
        return live + done

    def stmt(self, stmt: ir.Stmt, st: State) -> list[State]:
        self._at = (st.file, stmt)
        self._tick()
        if self.opt.linear and isinstance(stmt, (ir.If, ir.Case, ir.AndOr, ir.While)):
            return self._linear(stmt, st)
        if isinstance(stmt, ir.Command):
            return self.command(stmt, st)
        if isinstance(stmt, ir.Decl):
            return self.decl(stmt, st)
        if isinstance(stmt, ir.Test):
            self._push()
            st.status = _status(self.test(stmt.expr, st)) if stmt.expr is not None else 1
            self._control(self._pop())
            return [st]
        if isinstance(stmt, ir.AndOr):
            return self.andor(stmt, st)
        if isinstance(stmt, ir.Pipeline):
            return self.pipeline(stmt, st)
        if isinstance(stmt, ir.If):
            return self.if_(stmt, st)
        if isinstance(stmt, ir.Case):
            return self.case(stmt, st)
        if isinstance(stmt, ir.For):
            return self.for_(stmt, st)
        if isinstance(stmt, ir.While):
            return self.while_(stmt, st)
        if isinstance(stmt, ir.Group):
            if stmt.subshell:
                return [self.subshell(stmt.body, st)]
            capture_saved = st.out
            if st.out is not None and _redirects_stdout(stmt.redirects):
                st.out = None
            states = self.block(stmt.body, [st])
            if capture_saved is not None and _redirects_stdout(stmt.redirects):
                for s in states:
                    s.out = capture_saved
            return states
        if isinstance(stmt, ir.FuncDef):
            st.funcs = dict(st.funcs)
            st.funcs[stmt.name] = stmt.body
            st.status = 0
            return [st]
        if isinstance(stmt, ir.ArithCmd):
            st.status = None
            return [st]
        # Opaque
        st.status = None
        if st.out is not None:
            st.out = concat(st.out, unknown(stmt.kind))
        return [st]

    def _linear(self, stmt: ir.If | ir.Case | ir.AndOr | ir.While, st: State) -> list[State]:
        """Scan mode: run every branch, one after another, on a single path."""
        blocks: list[tuple[ir.Stmt, ...]] = []
        if isinstance(stmt, ir.If):
            for cond, body in stmt.clauses:
                blocks += [cond, body]
            if stmt.else_body is not None:
                blocks.append(stmt.else_body)
        elif isinstance(stmt, ir.Case):
            self.expand(stmt.word, st)
            blocks = [body for _, body in stmt.items]
        elif isinstance(stmt, ir.AndOr):
            blocks = [(stmt.first,)]
            blocks += [(s,) for _, s in stmt.rest]
        else:
            blocks = [stmt.cond, stmt.body]
        for b in blocks:
            states = self.block(b, [st])
            st = states[0]
            for other in states[1:]:
                st = join(st, other)
            if st.flow in ("exit", "return", "break", "continue"):
                st.flow = None
        st.status = None
        return [st]

    def subshell(self, body: Iterable[ir.Stmt], st: State) -> State:
        """Run body in a copy; keep only its events (and output when capturing)."""
        child = st.copy()
        results = self.block(body, [child])
        events = st.events
        for r in results:
            for e in r.events:
                if e not in events and not isinstance(e, Exited):
                    events = events + (e,)
        st.events = events
        statuses = {r.status if r.flow != "exit" else None for r in results}
        st.status = statuses.pop() if len(statuses) == 1 else None
        if st.out is not None:
            outs = {r.out for r in results}
            st.out = outs.pop() if len(outs) == 1 and None not in outs else concat(st.out, unknown("output"))
        return st

    def andor(self, stmt: ir.AndOr, st: State) -> list[State]:
        states = self.stmt(stmt.first, st)
        for op, nxt in stmt.rest:
            out: list[State] = []
            for s in self._split_status(states):
                if s.flow is not None:
                    out.append(s)
                elif (op == "&&") == (s.status == 0):
                    out.extend(self.stmt(nxt, s))
                else:
                    out.append(s)
            states = self.bound(out)
        return states

    def _split_status(self, states: list[State]) -> list[State]:
        out: list[State] = []
        for s in states:
            if s.status is None and s.flow is None:
                t = s.copy()
                s.status, t.status = 0, 1
                out.extend((s, t))
            else:
                out.append(s)
        return out

    def pipeline(self, stmt: ir.Pipeline, st: State) -> list[State]:
        if len(stmt.cmds) == 1:
            states = self.stmt(stmt.cmds[0], st)
        else:
            capture = st.out
            for cmd in stmt.cmds:
                st.out = None if capture is None else EMPTY
                self.subshell((cmd,), st)
            st.out = None if capture is None else concat(capture, unknown("pipeline output"))
            states = [st]
        if stmt.negated:
            for s in states:
                s.status = None if s.status is None else int(s.status == 0)
        return states

    def if_(self, stmt: ir.If, st: State) -> list[State]:
        pending = [st]
        result: list[State] = []
        for cond, body in stmt.clauses:
            states = self.block(cond, pending)
            pending = []
            for s in self._split_status(states):
                if s.flow is not None:
                    result.append(s)
                elif s.status == 0:
                    result.extend(self.block(body, [s]))
                else:
                    pending.append(s)
            if not pending:
                break
        for s in pending:
            if stmt.else_body is not None:
                result.extend(self.block(stmt.else_body, [s]))
            else:
                s.status = 0
                result.append(s)
        return self.bound(result)

    def case(self, stmt: ir.Case, st: State) -> list[State]:
        self._push()
        subject = self.expand(stmt.word, st)
        pats = [[self.pattern(p, st) for p in patterns] for patterns, _ in stmt.items]
        self._control(self._pop())
        pending = [st]
        result: list[State] = []
        for (_, body), item_pats in zip(stmt.items, pats, strict=True):
            still: list[State] = []
            for s in pending:
                verdicts = [match(subject, pat, self._tick) for pat in item_pats]
                if any(v is True for v in verdicts):
                    result.extend(self.block(body, [s]))
                elif all(v is False for v in verdicts):
                    still.append(s)
                else:
                    t = s.copy()
                    result.extend(self.block(body, [s]))
                    still.append(t)
            pending = still
            if not pending:
                break
        for s in pending:
            s.status = 0
        return self.bound(result + pending)

    def for_(self, stmt: ir.For, st: State) -> list[State]:
        if stmt.items is None:
            items: list[Val] = list(st.argv)
        else:
            items = []
            self._push()
            for w in stmt.items:
                v = self.expand(w, st)
                k = known(v)
                if k is not None and not _word_is_quoted(w) and any(c.isspace() for c in k):
                    items.extend(lit(x) for x in k.split())
                elif k is not None and not _word_is_quoted(w) and any(c in k for c in "*?["):
                    items.append(unknown(f"glob {k}"))
                else:
                    items.append(v)
            self._control(self._pop())
        states = [st]
        for item in items[: self.opt.max_loop]:
            live = [s for s in states if s.flow is None]
            for s in live:
                s.setvar(stmt.var, Var(item, s.vars.get(stmt.var, Var(EMPTY)).exported, None))
            states = [s for s in states if s.flow is not None] + self.block(stmt.body, live)
            for s in states:
                if s.flow == "break":
                    s.flow = "_broken"
                elif s.flow == "continue":
                    s.flow = None
            states = join_live(states)
        if len(items) > self.opt.max_loop:
            self.notes.append(f"for loop over {len(items)} items evaluated for the first {self.opt.max_loop}")
        for s in states:
            if s.flow == "_broken":
                s.flow = None
        return states

    def while_(self, stmt: ir.While, st: State) -> list[State]:
        # One iteration at most: loops in launchers poll for jobs; their bodies rarely
        # build dispatch paths, and the state after the loop is what follows.
        states = self.block(stmt.cond, [st])
        out: list[State] = []
        for s in self._split_status(states):
            if s.flow is not None:
                out.append(s)
                continue
            enter = (s.status == 0) != stmt.until
            if enter:
                ran = self.block(stmt.body, [s])
                for r in ran:
                    if r.flow in ("break", "continue"):
                        r.flow = None
                    # variables assigned in the loop body may take other values later
                    r.status = 0
                out.extend(ran)
            else:
                s.status = 0
                out.append(s)
        return self.bound(out)

    # -------------------------------------------------------------- commands
    def decl(self, stmt: ir.Decl, st: State) -> list[State]:
        export = stmt.kind == "export" or any("x" in f for f in stmt.flags if f.startswith("-"))
        is_local = stmt.kind in ("local",) or (stmt.kind in ("declare", "typeset") and bool(st.locals))
        for a in stmt.assigns:
            name = a.name
            if is_local and st.locals and name not in st.locals[-1]:
                st.locals[-1][name] = st.vars.get(name)
            old = st.vars.get(name)
            if a.value is None and a.array is None:
                if old is not None:
                    st.setvar(name, Var(old.value, old.exported or export, old.origin, old.parts, old.deps))
                elif is_local:
                    st.setvar(name, Var(EMPTY, False, Loc(st.file, a.pos.line, a.pos.col)))
                # ``export X`` with X unset leaves it unset
                continue
            self.assign(a, st, exported=export or (old.exported if old else False))
        st.status = 0
        return [st]

    def assign(self, a: ir.Assign, st: State, exported: bool = False) -> None:
        name = a.name
        if name.endswith("[]"):
            return
        self._push()
        if a.array is not None:
            vals = [self.expand(w, st) for w in a.array]
            value = _join_words(vals)
        else:
            assert a.value is not None
            value = self.expand(a.value, st)
        if a.append:
            old = st.vars.get(name)
            value = self._cap(concat(old.value if old else EMPTY, value), st)
            if old is not None and self._frames:
                self._frames[-1].update(old.deps)
        deps = self._pop()
        parts = self._var_parts(a.value, st) if a.value is not None else ()
        # One object for equal assignments on different paths: a join skips what paths share.
        key = (value, exported, st.file, a.pos.line, a.pos.col, parts, deps)
        var = self._assigned.get(key)
        if var is None:
            var = Var(value, exported, Loc(st.file, a.pos.line, a.pos.col), parts, deps)
            self._assigned[key] = var
        st.setvar(name, var)

    def _var_parts(self, word: ir.Word, st: State) -> tuple[tuple[str, str], ...]:
        out: list[tuple[str, str]] = []
        for p in word.parts:
            if isinstance(p, ir.Param) and _NAME_RE.match(p.name):
                var = st.vars.get(p.name)
                if var is not None:
                    k = known(var.value)
                    if k is not None:
                        out.append((p.name, k))
                    out.extend(var.parts)
        return tuple(dict.fromkeys(out))

    def command(self, cmd: ir.Command, st: State) -> list[State]:
        if not cmd.words:
            status: int | None = 0
            for a in cmd.assigns:
                st.status = 0
                self.assign(a, st, exported=st.vars[a.name].exported if a.name in st.vars else False)
                if any(isinstance(p, ir.CmdSub) for p in (a.value.parts if a.value else ())):
                    status = st.status
            st.status = status
            return [st] if st.flow is None or st.flow == "exit" else [st]
        if st.out is None and _inert(cmd) and cmd.words[0].literal() not in self.opt.observe:
            # An external utility that cannot run a script, change a variable or exit the
            # shell: its only effect here is an unknown exit status.
            st.status = None
            return [st]
        self._push()
        argv = [self.expand(w, st) for w in cmd.words]
        # Kept for the commands whose words decide something (a dispatched script, a
        # sourced file, a test, a function to call): they call ``_significant``.
        self._cmd_deps = self._pop()
        if cmd.words[0].literal() is None:
            self._control(self._cmd_deps)
        if st.flow is not None:
            return [st]
        argv, widx = _split_fields(argv, cmd.words)
        if not argv:
            st.status = 0
            return [st]
        name = known(argv[0])
        saved_out = st.out
        if st.out is not None and _redirects_stdout(cmd.redirects):
            st.out = None
        try:
            return self._run(cmd, argv, name, st, widx)
        finally:
            if saved_out is not None and _redirects_stdout(cmd.redirects):
                st.out = saved_out

    def _run(self, cmd: ir.Command, argv: list[Val], name: str | None, st: State,
             widx: list[int]) -> list[State]:
        args = argv[1:]
        if name is None:
            return self.external(cmd, argv, st, widx)
        if name in (":", "true"):
            st.status = 0
            return [st]
        if name == "false":
            st.status = 1
            return [st]
        if name == "exit":
            self._significant()
            st.flow = "exit"
            st.status = _int_or_none(args[0]) if args else st.status
            st.emit(Exited(Loc(st.file, cmd.pos.line, cmd.pos.col), st.status))
            return [st]
        if name == "return":
            st.flow = "return"
            st.status = _int_or_none(args[0]) if args else st.status
            return [st]
        if name in ("break", "continue"):
            st.flow = name
            return [st]
        if name in _PURE_OUTPUT:
            limit = self.budget.value_limit
            if name == "printf" and args and _printf_too_wide(known(args[0]), limit):
                self._hit("printf width", st, f"printf {(known(args[0]) or '')[:40]}")
                if st.out is not None:
                    st.out = concat(st.out, unknown("printf width"))
            elif st.out is not None:
                try:
                    out = _echo(args) if name == "echo" else _printf(args, limit)
                except TooLong:
                    self._hit("printf width", st)
                    out = unknown("printf width")
                st.out = self._cap(concat(st.out, out), st)
            st.status = 0
            return [st]
        if name in ("dirname", "basename"):
            if st.out is not None:
                st.out = concat(st.out, _path_op(name, args), lit("\n"))
            st.status = 0
            return [st]
        if name in ("[", "test"):
            self._significant()
            words = args[:-1] if name == "[" and args and known(args[-1]) == "]" else args
            st.status = _status(_test_argv(words, self, st))
            return [st]
        if name == "unset":
            for a in args:
                k = known(a)
                if k and not k.startswith("-"):
                    st.delvar(k)
                    self.relevant.add(k)
            st.status = 0
            return [st]
        if name == "shift":
            self._significant()
            n = _int_or_none(args[0]) if args else 1
            st.argv = st.argv[n or 1 :]
            st.status = 0
            return [st]
        if name == "cd":
            self._significant()
            target = args[0] if args else unknown("$HOME")
            st.cwd = self._resolve_dir(target, st)
            st.status = 0 if is_known(st.cwd) else None
            return [st]
        if name in ("source", "."):
            self._significant()
            return self.source(cmd, args, st)
        if name == "eval":
            self._significant()
            return self.eval_(cmd, args, st)
        if name in ("set", "trap", "shopt", "ulimit", "umask", "wait", "sleep", "hash", "alias"):
            if name == "set" and args and known(args[0]) == "--":
                self._significant()
                st.argv = tuple(args[1:])
            st.status = 0
            return [st]
        if name == "read":
            for a in args:
                k = known(a)
                if k and _NAME_RE.match(k):
                    st.setvar(k, Var(unknown(f"read {k}"), False, Loc(st.file, cmd.pos.line, cmd.pos.col)))
            st.status = None
            return [st]
        if name in ("export", "local", "readonly", "declare", "typeset"):
            # bashlex-style declarations that reached us as commands
            assigns = []
            for a in args:
                k = known(a)
                if k is None:
                    continue
                if "=" in k:
                    var_name, _, text = k.partition("=")
                    assigns.append(ir.Assign(var_name, ir.Word((ir.Lit(text, True),)), cmd.pos))
                elif _NAME_RE.match(k):
                    assigns.append(ir.Assign(k, None, cmd.pos))
            return self.decl(ir.Decl(name, tuple(assigns), (), cmd.pos), st)
        if name in st.funcs:
            self._significant()  # arguments become $1.. inside the function
            return self.call(name, args, st)
        return self.external(cmd, argv, st, widx)

    def call(self, name: str, args: list[Val], st: State) -> list[State]:
        if st.depth >= self.opt.max_depth:
            self.notes.append(f"call depth limit reached at {name}")
            self._hit(f"call depth ({self.opt.max_depth})", st, name)
            st.status = None
            return [st]
        self._tick()  # a call counts, besides the statements it runs
        body = st.funcs[name]
        saved_argv = st.argv
        st.argv = tuple(args)
        st.depth += 1
        st.locals.append({})
        states = self.block(body, [st])
        for s in states:
            frame = s.locals.pop() if s.locals else {}
            for var, old in frame.items():
                if old is None:
                    s.delvar(var)
                else:
                    s.setvar(var, old)
            s.argv = saved_argv
            s.depth -= 1
            if s.flow == "return":
                s.flow = None
        return states

    def source(self, cmd: ir.Command, args: list[Val], st: State) -> list[State]:
        if not args:
            st.status = 1
            return [st]
        target = self.normalize(args[0], st)
        st.emit(Sourced(target, Loc(st.file, cmd.pos.line, cmd.pos.col)))
        path = known(target)
        script = self.fs.script(path) if path and self.opt.descend_source else None
        if script is not None and st.depth >= self.opt.max_depth:
            self._hit(f"source depth ({self.opt.max_depth})", st, f"source {path}")
        if script is None or st.depth >= self.opt.max_depth:
            st.status = None
            return [st]
        saved_file, saved_argv = st.file, st.argv
        st.file = path or st.file
        if len(args) > 1:
            st.argv = tuple(args[1:])
        st.depth += 1
        states = self.block(script.body, [st])
        for s in states:
            s.file, s.depth = saved_file, s.depth - 1
            if len(args) > 1:
                s.argv = saved_argv
            if s.flow == "return":
                s.flow = None
        return states

    def eval_(self, cmd: ir.Command, args: list[Val], st: State) -> list[State]:
        text = " ".join(known(a) or "\0" for a in args)
        if "\0" in text or self.opt.parse is None:
            return self.external(cmd, [lit("eval")] + args, st)
        if st.depth >= self.opt.max_depth:
            self._hit(f"eval depth ({self.opt.max_depth})", st, "eval")
            st.status = None
            return [st]
        script = self._parse_string(st.file, text)
        st.depth += 1
        states = self.block(_shift_lines(script.body, cmd.pos.line - 1), [st])
        for s in states:
            s.depth -= 1
        return states

    def external(self, cmd: ir.Command, argv: list[Val], st: State,
                 widx: list[int] | None = None) -> list[State]:
        """A command we do not model: look for a dispatched script, then give up on it."""
        memo_key = (id(cmd), tuple(argv))
        memo = self._external_memo.get(memo_key)
        if memo is None:
            memo = (self._observed(argv) if self.opt.observe else None, self.find_script(argv, 0))
            if len(self._external_memo) > 50_000:
                self._external_memo.clear()
            self._external_memo[memo_key] = memo
        seen, found = memo
        if seen is not None:
            self._significant()
            st.emit(Ran(seen, tuple(argv), Loc(st.file, cmd.pos.line, cmd.pos.col), st.cwd, self._cmd_deps))
        if found is not None:
            self._significant()
            kind, idx, via = found
            if kind == "script":
                self._dispatch(cmd, argv, idx, via, st, widx)
                if via in ("exec", "exec bash"):
                    st.flow = "exit"
            elif kind == "-c":
                self._bash_c(cmd, argv, idx, st, widx)
        st.status = None
        if st.out is not None:
            st.out = concat(st.out, unknown(_cmd_name(argv)))
        return [st]

    def _observed(self, argv: list[Val]) -> str | None:
        """The observed command a command runs, directly or behind prefix commands and
        wrappers (``timeout 600 srtctl ...``, ``srun --jobid=1 srtctl ...``)."""
        for i, v in enumerate(argv):
            name = known(v)
            base = posixpath.basename(name) if name else None
            if base in self.opt.observe:
                return base
            if base == "command" and i + 1 < len(argv) and known(argv[i + 1]) in ("-v", "-V"):
                return None  # ``command -v srtctl`` only asks whether it is installed
            if base in PREFIX_COMMANDS or base in self.opt.wrappers:
                continue
            if i == 0 or not name or not (name.startswith("-") or "=" in name or name.isdigit()):
                return None  # another program, or a word we cannot read
        return None

    def find_script(self, argv: list[Val], i: int, via: str = "") -> tuple[str, int, str] | None:
        if i >= len(argv):
            return None
        name = known(argv[i])
        base = posixpath.basename(name) if name else None
        if base in SHELLS:
            j = i + 1
            while j < len(argv):
                opt = known(argv[j])
                if opt is None or not opt.startswith(("-", "+")) or opt in ("-", "--"):
                    if opt in ("-", "--"):
                        j += 1
                    break
                if opt.startswith("-") and not opt.startswith("--") and "c" in opt[1:]:
                    return ("-c", j + 1, via or "bash -c") if j + 1 < len(argv) else None
                if opt in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                    j += 2
                    continue
                if opt.startswith("-") and "s" in opt[1:] and not opt.startswith("--"):
                    return None  # script from stdin
                j += 1
            if j < len(argv):
                return ("script", j, via or base or "bash")
            return None
        if base in PREFIX_COMMANDS or base in self.opt.wrappers:
            this = via or base or ""
            if base == "exec":
                this = "exec"
            for j in range(i + 1, len(argv)):
                k = known(argv[j])
                if k is not None and (k.startswith("-") or "=" in k.split("/")[0]):
                    continue
                nb = posixpath.basename(k) if k else None
                if nb in SHELLS:
                    return self.find_script(argv, j, "exec bash" if this == "exec" else this)
                if _looks_like_script(argv[j]):
                    return ("script", j, this)
                if base in PREFIX_COMMANDS and k is not None and base not in ("timeout", "taskset", "chrt",
                                                                            "flock", "numactl", "nice"):
                    # the wrapped command is a plain program
                    return self.find_script(argv, j, this) if k and (nb in PREFIX_COMMANDS or
                                                                      nb in self.opt.wrappers) else None
            return None
        if _looks_like_script(argv[i]) and (name is None or "/" in name or name.endswith(".sh")):
            return ("script", i, via or "direct")
        return None

    def _dispatch(self, cmd: ir.Command, argv: list[Val], idx: int, via: str, st: State,
                  widx: list[int] | None) -> None:
        raw = argv[idx]
        target = self.normalize(raw, st)
        word = _word_at(cmd, idx, widx)
        pos = word.pos if word is not None else cmd.pos
        loc = Loc(st.file, pos.line or cmd.pos.line, pos.col or cmd.pos.col)
        built_at = loc
        var_parts: tuple[tuple[str, str], ...] = ()
        if word is not None:
            params = [p for p in word.parts if isinstance(p, ir.Param)]
            others = [p for p in word.parts if not isinstance(p, ir.Param) and not (isinstance(p, ir.Lit)
                                                                                    and not p.text)]
            if len(params) == 1 and not others and params[0].op == "":
                var = st.vars.get(params[0].name)
                if var is not None and var.origin is not None:
                    built_at = var.origin
                    var_parts = var.parts
            if not var_parts:
                var_parts = self._var_parts(word, st)
        st.emit(Dispatch(target, raw, loc, built_at, via, var_parts))
        path = known(target)
        if path and self.opt.follow is not None and self.opt.follow(path):
            if st.depth < self.opt.max_depth:
                self._follow(path, argv[idx + 1 :], st)
            else:
                self._hit(f"script depth ({self.opt.max_depth})", st, f"bash {path}")

    def _follow(self, path: str, args: list[Val], st: State) -> None:
        """Evaluate a repo script that the file runs as a child (a launcher delegating)."""
        script = self.fs.script(path)
        if script is None:
            return
        child = State()
        child.file = path
        child.depth = st.depth + 1
        child.argv = tuple(args)
        for n, v in st.vars.items():
            if v.exported:
                child.setvar(n, v)
        child.setvar("0", Var(lit(path), False, None))
        for r in self.block(script.body, [child]):
            for e in r.events:
                if not isinstance(e, Exited):
                    st.emit(e)

    def _bash_c(self, cmd: ir.Command, argv: list[Val], idx: int, st: State,
                widx: list[int] | None) -> None:
        if self.opt.parse is None or idx >= len(argv):
            return
        if st.depth >= self.opt.max_depth:
            self._hit(f"bash -c depth ({self.opt.max_depth})", st, "bash -c")
            return
        value = argv[idx]
        child = State()
        child.file = st.file
        child.cwd = st.cwd
        child.depth = st.depth + 1
        pieces: list[str] = []
        counter = 0
        for p in value:
            if isinstance(p, str):
                pieces.append(p)
            else:
                counter += 1
                name = f"__bb_unknown_{counter}"
                child.setvar(name, Var((p,), True, None))
                pieces.append("${" + name + "}")
        for n, v in st.vars.items():
            if v.exported:
                child.setvar(n, v)
        child.setvar("0", Var(lit("bash"), False, None))
        script = self._parse_string(st.file, "".join(pieces))
        word = _word_at(cmd, idx, widx)
        offset = (word.pos.line - 1) if word is not None and word.pos.line else cmd.pos.line - 1
        results = self.block(_shift_lines(script.body, offset), [child])
        for r in results:
            for e in r.events:
                if isinstance(e, Exited):
                    continue
                if isinstance(e, Dispatch):
                    e = Dispatch(e.target, e.raw, e.loc, e.built_at, "bash -c", e.var_parts)
                st.emit(e)

    def _parse_string(self, path: str, text: str) -> ir.Script:
        """Parse a ``bash -c`` / ``eval`` string, cached by its text."""
        key = (path, text)
        script = _STRING_CACHE.get(key)
        if script is None:
            assert self.opt.parse is not None
            script = self.opt.parse(path, text.encode())
            if len(_STRING_CACHE) > 4096:
                _STRING_CACHE.clear()
            _STRING_CACHE[key] = script
        return script

    # ---------------------------------------------------------------- paths
    def normalize(self, value: Val, st: State) -> Val:
        """Make a script path repo-relative where possible."""
        head = leading(value)
        for alias in self.opt.workspace_aliases:
            a = alias.rstrip("/")
            if head == a or head.startswith(a + "/"):
                rest = head[len(a) :].lstrip("/")
                return _norm(concat(lit(rest), value[1:]))
        if head.startswith("/"):
            return value
        if head.startswith("~"):
            return value
        if not value:
            return value
        base = st.cwd
        if base and not is_known(base):
            return concat(base, lit("/"), value)
        prefix = known(base) or ""
        joined = concat(lit(prefix + "/" if prefix else ""), value)
        return _norm(joined)

    def _resolve_dir(self, target: Val, st: State) -> Val:
        k = known(target)
        if k is None:
            return unknown("cwd")
        norm = self.normalize(target, st)
        nk = known(norm)
        if nk is None or nk.startswith(("/", "../")):
            return unknown(f"cwd {k}")
        nk = nk.rstrip("/")
        if nk in (".", ""):
            return EMPTY
        if not self.fs.is_dir(nk):
            return unknown(f"cwd {k}")  # made at run time (a clone, a build dir): not the repo
        return lit(nk)

    def file_test(self, op: str, value: Val, st: State) -> bool | None:
        path = known(self.normalize(value, st))
        if path is None or path.startswith(("/", "~")) or path.startswith("../"):
            return None
        path = path.rstrip("/") or "."
        parent = posixpath.dirname(path)
        if parent and not self.fs.is_dir(parent):
            return None  # a folder the repo does not have: made at run time, if at all
        if op in ("-f", "-s", "-r"):
            return self.fs.is_file(path)
        if op == "-d":
            return self.fs.is_dir(path) or path == "."
        if op in ("-e", "-a"):
            return self.fs.is_file(path) or self.fs.is_dir(path)
        return None

    # -------------------------------------------------------------- words
    def expand(self, word: ir.Word, st: State) -> Val:
        self._tick()
        out: list[Val] = []
        for p in word.parts:
            out.append(self.part(p, st))
        return self._cap(concat(*out), st)

    def pattern(self, word: ir.Word, st: State) -> Pat:
        out: list[object] = []
        for p in word.parts:
            if isinstance(p, ir.Lit):
                out.append((p.text, not p.quoted))
            else:
                v = self.part(p, st)
                glob = not getattr(p, "quoted", False)
                out.extend(pat_from_val(v, glob))
        return tuple(out)  # type: ignore[arg-type]

    def part(self, p: ir.Part, st: State) -> Val:
        if isinstance(p, ir.Lit):
            return lit(p.text)
        if isinstance(p, ir.Param):
            return self.param(p, st)
        if isinstance(p, ir.CmdSub):
            return self.cmdsub(p, st)
        return self.arith(p.text, st)

    def lookup(self, name: str, st: State) -> Val | None:
        """The value of a parameter, None when unset."""
        if name.isdigit():
            n = int(name)
            if n == 0:
                v = st.vars.get("0")
                return v.value if v else None
            return st.argv[n - 1] if n - 1 < len(st.argv) else None
        if name in ("@", "*"):
            return _join_words(list(st.argv))
        if name == "#":
            return lit(str(len(st.argv)))
        if name == "?":
            return lit(str(st.status)) if st.status is not None else unknown("$?")
        if name in ("$", "!", "-", "RANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS"):
            return unknown(f"${name}")
        if name == "PWD":
            return unknown("$PWD")
        var = st.vars.get(name)
        if self._frames:
            if var is None:
                self._frames[-1].add(name)
            else:
                self._frames[-1].update(var.deps)
        if var is None and (self.opt.unset_is_unknown or self._unknown_name(name)):
            return unknown(f"${name}")
        return var.value if var is not None else None

    def param(self, p: ir.Param, st: State) -> Val:
        op = p.op
        if p.name in ("BASH_SOURCE", "FUNCNAME") and op in ("", "["):
            return lit(st.file) if p.name == "BASH_SOURCE" else unknown("$FUNCNAME")
        value = self.lookup(p.name, st)
        if op == "":
            return value if value is not None else EMPTY
        if op == "len":
            k = known(value or EMPTY)
            return lit(str(len(k))) if k is not None else unknown(f"${{#{p.name}}}")
        if op in ("-", ":-", "=", ":=", "?", ":?", "+", ":+"):
            colon = op.startswith(":")
            base = op[-1]
            is_set = value is not None
            empty = known(value or EMPTY) == ""
            maybe_empty = value is not None and not is_known(value) and not leading(value) and \
                not any(isinstance(x, str) and x for x in value)
            use_alt = (not is_set) or (colon and empty)
            if colon and maybe_empty:
                return unknown(f"${{{p.name}{op}...}}")
            if base == "+":
                return (self.expand(p.arg, st) if p.arg else EMPTY) if not use_alt else EMPTY
            if not use_alt:
                return value or EMPTY
            if base == "-":
                return self.expand(p.arg, st) if p.arg else EMPTY
            if base == "=":
                v = self.expand(p.arg, st) if p.arg else EMPTY
                st.setvar(p.name, Var(v, st.vars[p.name].exported if p.name in st.vars else False, None))
                return v
            # ? : error, the script exits
            self._control({p.name})
            st.flow = "exit"
            st.status = 1
            return EMPTY
        if value is None:
            value = EMPTY
        if op in ("#", "##", "%", "%%"):
            pat = self.pattern(p.arg, st) if p.arg else ()
            r = remove(value, pat, op, self._tick)
            return r if r is not None else unknown(f"${{{p.name}{op}...}}")
        if op in ("/", "//", "/#", "/%"):
            pat = self.pattern(p.arg, st) if p.arg else ()
            repl = self.expand(p.arg2, st) if p.arg2 else EMPTY
            try:
                r = replace(value, pat, repl, op, self._tick, self.budget.value_limit)
            except TooLong:
                self._hit(self.budget.value_what(), st, f"${{{p.name}{op}...}}")
                return unknown(self.budget.value_what())
            return r if r is not None else unknown(f"${{{p.name}{op}...}}")
        if op == ":":
            k = known(value)
            off = _int_or_none(self.expand(p.arg, st)) if p.arg else 0
            length = _int_or_none(self.expand(p.arg2, st)) if p.arg2 else None
            if k is None or off is None or (p.arg2 is not None and length is None):
                return unknown(f"${{{p.name}:...}}")
            start = off if off >= 0 else max(0, len(k) + off)
            if length is None:
                return lit(k[start:])
            end = start + length if length >= 0 else len(k) + length
            return lit(k[start:end])
        if op in ("^^", ",,", "^", ","):
            k = known(value)
            if k is None:
                return unknown(f"${{{p.name}{op}}}")
            if op == "^^":
                return lit(k.upper())
            if op == ",,":
                return lit(k.lower())
            return lit((k[:1].upper() if op == "^" else k[:1].lower()) + k[1:])
        if op == "!":
            k = known(value)
            if k and _NAME_RE.match(k):
                target = self.lookup(k, st)
                return target if target is not None else EMPTY
            return unknown(f"${{!{p.name}}}")
        return unknown(f"${{{p.name}{op}...}}")

    def cmdsub(self, p: ir.CmdSub, st: State) -> Val:
        child = st.copy()
        child.out = EMPTY
        child.status = 0
        results = self.block(p.body, [child])
        outs = set()
        for r in results:
            for e in r.events:
                if isinstance(e, Exited):
                    continue
                if isinstance(e, Dispatch) and e.via in ("bash", "sh"):
                    e = Dispatch(e.target, e.raw, e.loc, e.built_at, "subst", e.var_parts)
                st.emit(e)
            outs.add(r.out if r.out is not None else unknown("output"))
        statuses = {r.status for r in results}
        st.status = statuses.pop() if len(statuses) == 1 else None
        if len(outs) == 1:
            out = outs.pop()
            return _strip_trailing_newlines(out)
        return unknown("$(...)")

    def arith(self, text: str, st: State) -> Val:
        try:
            value = _arith.evaluate(text)
        except _arith.Capped as e:
            self._hit("arithmetic beyond 64 bits", st, f"$(({text.strip()[:40]})): {e}")
            return unknown("$((...)) beyond 64 bits")
        return lit(str(value)) if value is not None else unknown("$((...))")

    # --------------------------------------------------------------- tests
    def test(self, expr: ir.TestExpr | None, st: State) -> bool | None:
        if expr is None:
            return False
        if isinstance(expr, ir.TNot):
            v = self.test(expr.expr, st)
            return None if v is None else not v
        if isinstance(expr, ir.TAnd):
            a = self.test(expr.left, st)
            if a is False:
                return False
            b = self.test(expr.right, st)
            if a is True:
                return b
            return False if b is False else None
        if isinstance(expr, ir.TOr):
            a = self.test(expr.left, st)
            if a is True:
                return True
            b = self.test(expr.right, st)
            if a is False:
                return b
            return True if b is True else None
        if isinstance(expr, ir.TWord):
            return _nonempty(self.expand(expr.word, st))
        if isinstance(expr, ir.TUnary):
            return self.unary(expr.op, self.expand(expr.arg, st), st)
        left = self.expand(expr.left, st)
        if expr.op in ("==", "=", "!="):
            v = match(left, self.pattern(expr.right, st), self._tick)
            if expr.op == "!=":
                return None if v is None else not v
            return v
        right = self.expand(expr.right, st)
        return _binary(expr.op, left, right, self._tick)

    def unary(self, op: str, value: Val, st: State) -> bool | None:
        if op == "-n":
            return _nonempty(value)
        if op == "-z":
            v = _nonempty(value)
            return None if v is None else not v
        if op in ("-f", "-e", "-a", "-d", "-s", "-r"):
            return self.file_test(op, value, st)
        if op == "-v":
            k = known(value)
            return (k in st.vars) if k else None
        return None


# ------------------------------------------------------------------ helpers


__all__ = ["Dispatch", "Event", "Evaluator", "Exited", "FileSystem", "Loc", "Options", "PathResult", "Ran", "Result",
           "Sourced", "State", "Unk", "Val", "Var"]
