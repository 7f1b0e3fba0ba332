"""Dispatch slicing: the statements an evaluation may skip, because nothing it records can
depend on them.

A launcher spends much of its length on work that cannot change which script runs, what
it is handed or what a server starts with: retry loops that wait for NFS locks, log
copies, ``if [ -d "$LOGS" ]; then echo ...; fi``. Evaluating them costs steps, and every
condition the evaluator cannot decide forks the path (in ``launch_gb300-nv.sh`` a five-try
``rm -rf outputs && break`` loop after the job made 600 of 2,247 forks). Such a statement
is *quiet* when, all the way down, it

- runs only commands the evaluator already treats as inert (``bot.shell.evaluator.wordops._inert``:
  ``echo``, ``rm``, ``sleep``, ``grep``...), tests, ``:``/``true``/``false``, arithmetic,
  ``break``/``continue`` of a loop inside it, and control structures of those, with no
  command named in ``Options.observe`` or ``Options.env_checks`` and no ``python``;
- redirects only to ``/dev/null``, another descriptor or from a file (a write is a
  ``Wrote`` event in the serve model);
- has no ``printf`` format that is not a literal with small widths and no ``**`` in
  arithmetic (budget hits are findings: those stay where they were);
- has no expansion that assigns or exits (``${X:=d}``, ``${X:?}``), no indirect one
  (``${!X}``), defines no function, sources nothing, and assigns only lower-case variables
  (upper-case ones are the serve model's "set without export") that no statement of its
  file outside it reads (a ``for i`` loop counter), in a file with no ``eval``, no
  ``declare -n`` and no ``set -a``;
- and its exit status is not looked at: it is not the last statement of a condition, a
  function, a group, a substitution or the file, and the next statement does not read
  ``$?``.

At run time (``Core.stmt``) a quiet statement is skipped only when skipping cannot differ
from running it: outside ``$(...)`` (whose output is captured), outside a command's word
expansion, before any server command (the steps after one are counted), not in scan mode,
when every variable it assigns is neither exported nor from the evaluation's env, and, when
``set -u`` or ``Options.record_reads`` is on, every variable it reads without a default is
set (an unset one may end the path or be a ``Read`` event: then it runs as before). A
skipped statement leaves an unknown exit status and makes the variables it assigns unknown
(a sourced file's function could read one).

What is skipped spends no budget: the one difference it can make is a value over
``max-value-bytes`` that only a skipped ``echo`` would have built, which is no longer a
``dispatch-bound`` note. Findings are otherwise the same with slicing on and off
(``tests/shell/test_slicing.py`` compares every fixture repo and the example).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Protocol

from bot.shell.evaluator.options import Options
from bot.shell.evaluator.quiet import SERVING, Quiet, _Analysis
from bot.shell.evaluator.state import State, Var
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import unknown

__all__ = ["ENABLED", "SERVING", "Quiet", "enter", "register", "reset", "skip", "table"]

_MAX_TABLES = 200_000  # statements remembered per set of loud commands before starting over
ENABLED = True  # off: every evaluation runs every statement (the differential test compares)

# (frozenset of loud names) -> id(statement) -> (statement, Quiet); bodies analysed likewise
_TABLES: dict[frozenset[str], dict[int, tuple[ir.Stmt, Quiet]]] = {}
_DONE: dict[frozenset[str], dict[int, tuple[tuple[ir.Stmt, ...], frozenset[str]]]] = {}


def table(loud: frozenset[str]) -> dict[int, tuple[ir.Stmt, Quiet]]:
    """The skippable statements found so far, for evaluations that treat ``loud`` as commands
    with effects (``Options.observe``, ``Options.env_checks``)."""
    return _TABLES.setdefault(loud, {})


def register(body: tuple[ir.Stmt, ...], loud: frozenset[str]) -> frozenset[str]:
    """Find the quiet statements of a file's body (once per body object); returns the names
    the file reads."""
    done = _DONE.setdefault(loud, {})
    hit = done.get(id(body))
    if hit is not None and hit[0] is body:
        return hit[1]
    tab = table(loud)
    if len(tab) > _MAX_TABLES:
        tab.clear()
        done.clear()
    names = _Analysis(loud, tab).file(body)
    done[id(body)] = (body, names)
    return names


def reset() -> None:
    _TABLES.clear()
    _DONE.clear()




class Evaluation(Protocol):
    """What slicing reads and counts of the evaluator running (``bot.shell.evaluator.core.Core``)."""

    @property
    def opt(self) -> Options: ...
    @property
    def presence(self) -> set[str]: ...
    @property
    def _entered(self) -> set[int]: ...
    @property
    def _frames(self) -> list[set[str]]: ...
    @property
    def _inputs(self) -> Mapping[str, Var]: ...
    @property
    def _loud(self) -> frozenset[str]: ...
    @property
    def _read_by(self) -> Counter[str]: ...
    @property
    def _skips(self) -> dict[int, tuple[ir.Stmt, Quiet]] | None: ...
    @property
    def _stop_at(self) -> int | None: ...
    def _unknown_name(self, name: str) -> bool: ...


def enter(ev: Evaluation, body: tuple[ir.Stmt, ...]) -> None:
    """A file's statements are about to run in ``ev``: find its skippable ones, and count the
    names it reads (a statement of another file assigning one of them is run)."""
    if ev._skips is None or id(body) in ev._entered:
        return
    ev._entered.add(id(body))
    ev._read_by.update(register(body, ev._loud))  # a Counter: one more reader of each name


def skip(ev: Evaluation, q: Quiet, st: State) -> bool:
    """Skip a quiet statement, when doing so cannot differ from running it."""
    if st.out is not None or ev._frames or ev._stop_at is not None:
        return False
    inputs = ev._inputs
    for n in q.assigns:
        v = st.vars.get(n)
        if v is not None and (v.exported or v is inputs.get(n)):
            return False
        if ev._read_by.get(n, 0) > (n in q.file_reads):
            return False  # another file of the evaluation reads it (a sourced function)
    if q.reads and (st.nounset or ev.opt.record_reads):
        for n in q.reads:
            v = st.vars.get(n)
            if v is None:
                if ev.opt.unset_is_unknown or ev._unknown_name(n):
                    continue
                return False  # an unset read: run it (it may end the path, or be a ``Read``)
            if v is inputs.get(n):
                ev.presence.add(n)
    for n in q.assigns:
        st.setvar(n, Var(unknown(f"${n}"), False, None))
    st.status = None
    return True
