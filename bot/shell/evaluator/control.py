"""Control flow: if, case, loops, and-or lists, pipelines, subshells."""

from __future__ import annotations

from collections.abc import Iterable

from bot.shell.evaluator.core import Core
from bot.shell.evaluator.state import Exited, State, Var, join, join_live, merge_events
from bot.shell.evaluator.varmap import VarMap
from bot.shell.evaluator.wordops import (
    _word_is_quoted,
)
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import (
    EMPTY,
    Val,
    concat,
    known,
    lit,
    match,
    unknown,
)


class Control(Core):
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
            events = merge_events(events, r.events, Exited)
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
                before = s.vars.copy()
                ran = self.block(stmt.body, [s])
                for r in ran:
                    again = r.flow in (None, "continue")  # a path that may run the body again
                    if r.flow in ("break", "continue"):
                        r.flow = None
                    if again:
                        _widen(r, before)
                    r.status = 0
                out.extend(ran)
            else:
                s.status = 0
                out.append(s)
        return self.bound(out)


def _widen(st: State, before: VarMap[Var]) -> None:
    """After one run of a loop body that may run again: what it assigned may take other
    values in later iterations (``X+=",$n"``), so it is unknown, never the first value."""
    for name, now, then in st.vars.diff(before):
        if now is None or now is then or (then is not None and now.value == then.value):
            continue
        st.setvar(name, Var(unknown(f"${name} (set in a loop)"), now.exported, now.origin, (), now.deps))
