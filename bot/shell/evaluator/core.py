"""The core of the partial evaluator (see :mod:`bot.shell.evaluator.evaluate`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from bot.shell.evaluator import slicing
from bot.shell.evaluator.budget import Budget, BudgetExceeded, BudgetHit
from bot.shell.evaluator.builtins import (
    _status,
)
from bot.shell.evaluator.options import (
    MAX_ROUNDS,
    FileSystem,
    Options,
    PathResult,
    Result,
)
from bot.shell.evaluator.state import Loc, Served, State, Var, join
from bot.shell.evaluator.steps import SinkDone, Steps, input_var
from bot.shell.evaluator.varmap import VarMap
from bot.shell.evaluator.wordops import _redirects_stdout
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import (
    Pat,
    Val,
    concat,
    known,
    lit,
    unknown,
)

__all__ = ["Core", "SinkDone"]

_NO_DEPS: frozenset[str] = frozenset()


class Core(Steps):
    """The evaluator's state, its budget and dependency bookkeeping, statements and assignments.

    The other parts (control flow, commands, sinks, expansion) are mixins on this class; the
    stubs at the end declare what they define, for the type checker."""

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
        self._lines: list[int] = []  # per word of the command running: its line (``Options.sinks``)
        self._in_client = 0
        self._inputs: dict[str, Var] = {}  # the variables of the env the evaluation started with
        self._initial: VarMap[Var] = VarMap()  # and the map that held them
        self._sunk: list[Served] = []  # every Served event, in order (kept when the evaluation ends early)
        self._stop_at: int | None = None  # the step count at which it does (``Options.after_sink_steps``)
        # ``bot.shell.evaluator.reads``: the word being expanded, operands of -n/-z, presence-relevant names
        self._wpos: ir.Pos | None = None
        self._test_depth = 0
        self.presence: set[str] = set()
        self._loud = self.opt.observe | self.opt.env_checks | (
            {slicing.SERVING} if self.opt.sinks is not None else frozenset())
        self._skips = slicing.table(self._loud) if self.opt.slice and slicing.ENABLED and not self.opt.linear else None
        self._read_by: Counter[str] = Counter()  # per name: how many files entered read it
        self._file_deps: dict[Val, set[str]] = {}  # written file -> the names its writes read (serve)
        self._entered: set[int] = set()
        self._external_memo: dict[tuple[int, tuple[Val, ...]], tuple[str | None, tuple[str, int, str] | None]] = {}

    # ---------------------------------------------------------------- slicing
    def enter(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        """A file's statements are about to run (``bot.shell.evaluator.slicing.enter``)."""
        slicing.enter(self, body)
        return body

    # ------------------------------------------------------------ dependencies
    def _push(self) -> None:
        self._frames.append(set())

    def _pop(self) -> frozenset[str]:
        deps = self._frames.pop()
        if not deps:
            return _NO_DEPS
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
        self._inputs = {name: input_var(name, value) for name, value in env.items()}
        st.vars = VarMap.of(self._inputs.items())
        self._initial = st.vars.copy()
        st.setvar("0", Var(lit(argv0 or script.path), False, None))
        self.bound_hit = False
        self.relevant = set()
        self.presence = set()
        self._frames = []
        self.budget = Budget(self.opt.limits)
        self._assigned = {}
        self._interned = {}
        self._at = (script.path, None)
        self._sunk = []
        self._stop_at = None
        self._read_by = Counter()
        self._file_deps = {}
        self._entered = set()
        try:
            states = self.block(self.enter(script.body), [st])
        except SinkDone:
            return Result([PathResult(tuple(dict.fromkeys(self._sunk)), False)], self.bound_hit,
                          frozenset(self.relevant), [*self.notes, "stopped after the server command"],
                          tuple(self.budget.hits), frozenset(self.presence))
        except BudgetExceeded as e:
            return Result([], self.bound_hit, frozenset(self.relevant), list(self.notes),
                          (*self.budget.hits, e.hit), frozenset(self.presence))
        except RecursionError:
            path, line, detail = self._where()
            hit = BudgetHit("nesting depth", path, line, detail, True)
            return Result([], self.bound_hit, frozenset(self.relevant), list(self.notes), (*self.budget.hits, hit),
                          frozenset(self.presence))
        paths = [PathResult(s.events, s.flow == "exit") for s in self.bound(states)]
        return Result(paths, self.bound_hit, frozenset(self.relevant), list(self.notes), tuple(self.budget.hits),
                      frozenset(self.presence))

    def _unknown_name(self, name: str) -> bool:
        """``Options.unknown_names``, asked once per name (it matches globs)."""
        hit = self._unknown_names.get(name)
        if hit is None:
            hit = self._unknown_names[name] = bool(self.opt.unknown_names is not None
                                                   and self.opt.unknown_names(name))
        return hit

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
        if len(states) == 2:  # two paths (an undecided condition): their keys compared, not hashed
            if states[0].quick_key() == states[1].quick_key():
                states = [states[0]]
        else:
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
        b = self.budget
        b.steps += 1  # ``_tick``, inline: once per statement
        if b.steps >= b._next_check:
            self._checkpoint()
        if self._skips is not None:
            hit = self._skips.get(id(stmt))
            if hit is not None and hit[0] is stmt and slicing.skip(self, hit[1], st):
                return [st]
        kind = type(stmt)
        if kind is ir.Command:  # the common case (a node is of its class exactly)
            return self.command(stmt, st)  # type: ignore[arg-type]
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
            text = stmt.text.strip()
            if text.startswith("((") and text.endswith("))"):
                self._push()
                v = self.arith(text[2:-2], st)
                self._control(self._pop())
                k = known(v)
                st.status = (0 if k != "0" else 1) if k is not None else None
            else:
                st.status = None
            return [st]
        # Opaque
        st.status = None
        if st.out is not None:
            st.out = concat(st.out, unknown(stmt.kind))
        return [st]

    # ----------------------------------------------------- defined by the mixins
    def decl(self, stmt: ir.Decl, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def assign(self, a: ir.Assign, st: State, exported: bool = False) -> None:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def _var_parts(self, word: ir.Word, st: State) -> tuple[tuple[str, str], ...]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def array_items(self, a: ir.Assign, st: State) -> tuple[tuple[Val, int], ...]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def fields_of(self, w: ir.Word, st: State) -> tuple[list[Val], list[int]]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def expand_segments(self, w: ir.Word, st: State) -> tuple[Val, tuple[tuple[int, int], ...]]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def sink(self, cmd: ir.Command, argv: list[Val], lines: list[int], st: State,
             function: bool = False) -> str | None:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def wrote(self, cmd: ir.Command, st: State) -> bool:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def handed(self, cmd: ir.Command, argv: list[Val], idx: int, target: Val, loc: Loc, st: State) -> None:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def _linear(self, stmt: ir.If | ir.Case | ir.AndOr | ir.While, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def subshell(self, body: Iterable[ir.Stmt], st: State) -> State:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def andor(self, stmt: ir.AndOr, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def pipeline(self, stmt: ir.Pipeline, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def if_(self, stmt: ir.If, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def case(self, stmt: ir.Case, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def for_(self, stmt: ir.For, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def while_(self, stmt: ir.While, st: State) -> list[State]:
        # One iteration at most: loops in launchers poll for jobs; their bodies rarely
        # build dispatch paths, and the state after the loop is what follows.
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def command(self, cmd: ir.Command, st: State) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def external(self, cmd: ir.Command, argv: list[Val], st: State,
                 widx: list[int] | None = None) -> list[State]:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def _parse_string(self, path: str, text: str) -> ir.Script:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def normalize(self, value: Val, st: State) -> Val:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def _resolve_dir(self, target: Val, st: State) -> Val:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def expand(self, word: ir.Word, st: State) -> Val:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def arith(self, text: str, st: State) -> Val:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def part(self, p: ir.Part, st: State) -> Val:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def pattern(self, word: ir.Word, st: State) -> Pat:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def test(self, expr: ir.TestExpr | None, st: State) -> bool | None:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

    def unary(self, op: str, value: Val, st: State) -> bool | None:
        raise NotImplementedError  # pragma: no cover - defined by a mixin

