"""What a script reads that nobody set: ``set -u``, ``Read`` events and env checks.

bash ends a script that reads an unset variable under ``set -u`` (``set -euo pipefail``,
``set -o nounset``); the evaluator does the same on that path (always: it is what bash
does), with an error exit at the read. With ``Options.record_reads`` it also records every
read with no default of a variable the path does not set (``Read``: "plain", "test" for the
operand of ``-n``/``-z``/``[[ $X ]]``, "nounset", "guard" for ``${X:?}``, "check" for an
argument of an ``Options.env_checks`` command such as ``check_env_vars MODEL TP``, which ends
its path when a named variable is unset or empty, as the function does).

Names recorded are relevant (``Result.relevant``); variables from the evaluation's env
whose being set decided a path are in ``Result.presence`` (the cache keys on their
unset / empty / non-empty state: see ``presence_key``).

The functions here are called from the expansion and command code (``bot.shell.evaluator.expand``,
``bot.shell.evaluator.execute``) only when ``set -u`` is on for the path or ``record_reads`` is asked
for: otherwise the evaluator runs as it did without them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from bot.shell.evaluator.options import _NAME_RE
from bot.shell.evaluator.sinks import Sinks
from bot.shell.evaluator.state import Exited, Loc, Read, State
from bot.shell.evaluator.wordops import _word_at, special
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import EMPTY, Val, concat, known

if TYPE_CHECKING:
    from bot.shell.evaluator.core import Core

# Operators with a default or an alternative: never an unset read (``${X:-}``, ``${X+a}``).
_DEFAULTS = frozenset({"-", ":-", "=", ":=", "+", ":+"})
_GUARDS = frozenset({"?", ":?"})
# Operators under which ``set -u`` ends the path on an unset name (``${X%%_*}``, ``${#X}``);
# not ``${!X}`` nor array forms, which bash versions treat differently.
_NOUNSET_OPS = frozenset({"", "len", "#", "##", "%", "%%", "/", "//", "/#", "/%", ":", "^", "^^", ",", ",,"})


# A path records Read events only while it has fewer events than this (each emit compares
# with the path's events: a 20,000-line launcher of unset reads must stay linear).
MAX_READ_EVENTS = 512
_CAPPED = f"reads of unset variables beyond {MAX_READ_EVENTS} events on a path are not recorded"


def _record(ev: Core, st: State, name: str, loc: Loc, kind: str) -> None:
    if len(st.events) >= MAX_READ_EVENTS:
        if _CAPPED not in ev.notes:
            ev.notes.append(_CAPPED)
        return
    st.emit(Read(name, loc, kind))


def _loc(ev: Core, st: State) -> Loc:
    pos = ev._wpos
    if pos is None or not pos.line:
        stmt = ev._at[1]
        pos = stmt.pos if stmt is not None else ir.NOPOS
    return Loc(st.file, pos.line, pos.col or 1)


def _from_env(ev: Core, name: str, st: State) -> None:
    """A variable read as the evaluation's env gave it: whether it is set decided the path."""
    var = ev._inputs.get(name)
    if var is not None and st.vars.get(name) is var:
        ev.presence.add(name)


def param_read(ev: Core, p: ir.Param, value: Val | None, st: State) -> Val | None:
    """``p`` was read (its value ``value``, None when unset): record it, and under ``set -u``
    end the path when it is unset. Returns the value to use when the read ends the path."""
    name, op = p.name, p.op
    if op in _DEFAULTS or p.index or special(name):
        return None
    if value is not None:
        _from_env(ev, name, st)
        if op in _GUARDS and ev.opt.record_reads and op == ":?" and known(value) == "":
            ev.relevant.add(name)
            _record(ev, st, name, _loc(ev, st), "guard")
        return None
    ev.relevant.add(name)
    if op in _GUARDS:
        if ev.opt.record_reads:
            _record(ev, st, name, _loc(ev, st), "guard")
        return None  # ``param`` ends the path, as before
    ends = st.nounset and op in _NOUNSET_OPS
    if ev.opt.record_reads:
        kind = "nounset" if st.nounset else ("test" if ev._test_depth else "plain")
        _record(ev, st, name, _loc(ev, st), kind)
    if not ends:
        return None
    loc = _loc(ev, st)
    st.flow = "exit"
    st.status = 1
    st.emit(Exited(loc, 1))
    return EMPTY


def expand_at(ev: Core, word: ir.Word, st: State) -> Val:
    """``Expand.expand`` while reads are watched: reads inside are placed at this word."""
    saved = ev._wpos
    if word.pos.line:
        ev._wpos = word.pos
    try:
        parts = word.parts
        if len(parts) == 1:  # one part: its value as ``concat`` would leave it, without the copy
            v = ev.part(parts[0], st)
            if len(v) == 1:
                p = v[0]
                if type(p) is str:
                    if not p:
                        return EMPTY
                    if len(p) <= ev.budget.limits.max_value:
                        return v
                    return ev._cap(v, st)
            elif not v:
                return v
            return ev._cap(concat(v), st)
        return ev._cap(concat(*[ev.part(p, st) for p in parts]), st)
    finally:
        ev._wpos = saved


def inert_words(ev: Core, cmd: ir.Command, st: State) -> None:
    """The words of a command the evaluator does not run (``echo``, ``mkdir``): only their
    reads count (an unset one ends the path under ``set -u``)."""
    for w in cmd.words[1:]:
        if any(isinstance(p, ir.Param) for p in w.parts):
            ev.expand(w, st)
            if st.flow is not None:
                return


def operand(ev: Core, word: ir.Word, st: State) -> Val:
    """The operand of ``-n``/``-z``/``[[ $X ]]``: its reads are "test" reads."""
    ev._test_depth += 1
    try:
        return ev.expand(word, st)
    finally:
        ev._test_depth -= 1


def test_words(ev: Core, words: tuple[ir.Word, ...], st: State) -> list[Val]:
    """The words of ``[ ... ]`` / ``test ...`` as a command: those that are an operand of
    ``-n``/``-z`` or the only operand are expanded as test operands."""
    ops = list(words[1:])
    if words[0].literal() == "[" and ops and ops[-1].literal() == "]":
        ops = ops[:-1]
    tested = {i + 1 for i, w in enumerate(ops) if (len(ops) == 1 or (i and ops[i - 1].literal() in ("-n", "-z")))}
    return [operand(ev, w, st) if i in tested else ev.expand(w, st) for i, w in enumerate(words)]


def set_flags(args: Iterable[Val], st: State) -> None:
    """``set -u`` / ``set -euo pipefail`` / ``set -o nounset`` (and ``+u``, ``+o nounset``)."""
    option_next: bool | None = None  # the sign of a pending ``-o``
    for a in args:
        k = known(a)
        if option_next is not None:
            if k == "nounset":
                st.nounset = option_next
            option_next = None
            continue
        if k is None or k in ("--", "-"):
            return  # what follows are positional parameters (or unknown)
        if len(k) < 2 or k[0] not in "-+" or not k[1:].isalpha():
            return
        on = k[0] == "-"
        if "u" in k[1:]:
            st.nounset = on
        if "o" in k[1:]:
            option_next = on


def env_check(ev: Core, cmd: ir.Command, args: list[Val], st: State) -> list[State] | None:
    """An ``Options.env_checks`` command: when a variable it names is unset or known to be
    empty, the path ends with an error exit there (None: all are set, run it as usual)."""
    missing: list[str] = []
    for a in args:
        name = known(a)
        if not name or not _NAME_RE.match(name):
            continue
        var = st.vars.get(name)
        if var is None and (ev.opt.unset_is_unknown or ev._unknown_name(name)):
            continue  # set by the runner, to a value we cannot know
        if var is not None:
            _from_env(ev, name, st)
            if known(var.value) != "":
                continue  # set (an unknown value counts as set)
        missing.append(name)
    if not missing:
        return None
    loc = Loc(st.file, cmd.pos.line, cmd.pos.col)
    ev.relevant.update(missing)
    if ev.opt.record_reads:
        for name in missing:
            _record(ev, st, name, loc, "check")
    st.flow = "exit"
    st.status = 1
    st.emit(Exited(loc, 1))
    return [st]


def presence_key(env: Mapping[str, Val], names: Iterable[str]) -> frozenset[tuple[str, int]]:
    """How an env stands on ``Result.presence``: per name 0 unset, 1 empty, 2 anything else."""
    return frozenset((n, 0 if n not in env else (1 if env[n] == EMPTY else 2)) for n in names)


class Handoffs(Sinks):
    """``Options.handoffs``: record ``Handed`` for every dispatched script without ``sinks``
    (where ``sinks`` is set, ``Sinks._dispatch`` already does)."""

    def _dispatch(self, cmd: ir.Command, argv: list[Val], idx: int, via: str, st: State,
                  widx: list[int] | None) -> None:
        super()._dispatch(cmd, argv, idx, via, st, widx)
        if not self.opt.handoffs or self.opt.sinks is not None:
            return
        word = _word_at(cmd, idx, widx)
        pos = word.pos if word is not None else cmd.pos
        loc = Loc(st.file, pos.line or cmd.pos.line, pos.col or cmd.pos.col)
        self.handed(cmd, argv, idx, self.normalize(argv[idx], st), loc, st)
