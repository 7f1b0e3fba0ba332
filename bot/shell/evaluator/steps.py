"""The budget side of the evaluator (the base of ``bot.shell.evaluator.core.Core``): counting steps,
where a budget ran out, values over the byte limit; and the variables of an evaluation's env."""

from __future__ import annotations

from bot.shell.evaluator.budget import Budget
from bot.shell.evaluator.state import State, Var
from bot.shell.evaluator.wordops import _describe
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val, unknown


class SinkDone(Exception):
    """Enough steps after a server sink (``Options.after_sink_steps``): the evaluation ends."""


# The variable of each (name, value) an evaluation's env held: the same object for every
# evaluation (a Var is immutable; identity with ``Core._inputs`` is only asked within one run).
_INPUT_VARS: dict[tuple[str, Val], Var] = {}


def input_var(name: str, value: Val) -> Var:
    """The variable of an env's ``name=value`` (exported, deriving from ``name``)."""
    key = (name, value)
    var = _INPUT_VARS.get(key)
    if var is None:
        if len(_INPUT_VARS) > 20_000:
            _INPUT_VARS.clear()
        var = _INPUT_VARS[key] = Var(value, True, None, (), frozenset((name,)))
    return var


class Steps:
    """Steps and limits of one evaluation (``Core`` sets these attributes)."""

    budget: Budget
    _at: tuple[str, ir.Stmt | None]  # the statement running (for budget hits)
    _stop_at: int | None  # the step count at which the evaluation ends (``Options.after_sink_steps``)

    def _where(self) -> tuple[str, int, str]:
        path, stmt = self._at
        if stmt is None:
            return path, 0, ""
        return path, stmt.pos.line, _describe(stmt)

    def _tick(self, n: int = 1) -> None:
        b = self.budget
        b.steps += n
        if b.steps >= b._next_check:
            self._checkpoint()

    def _checkpoint(self) -> None:
        """Steps reached the budget's next check (``_tick``; hot callers inline the count)."""
        b = self.budget
        if self._stop_at is not None and b.steps >= self._stop_at:
            raise SinkDone
        path, line, detail = self._where()
        b.step(path, line, detail, 0)

    def _hit(self, what: str, st: State, detail: str = "") -> None:
        path, line, here = self._where()
        self.budget.hit(what, st.file or path, line, detail or here)

    def _cap(self, value: Val, st: State) -> Val:
        """A value over the byte limit becomes unknown (and is recorded)."""
        limit = self.budget.limits.max_value
        size = 0
        for p in value:  # the known text's length (parts are text or ``Unk``)
            if type(p) is str:
                size += len(p)
        if size <= limit:
            return value
        what = self.budget.value_what()
        self._hit(what, st)
        return unknown(what)
