"""A small intermediate representation of a shell script.

Both front-ends (tree-sitter-bash in ``parse.py``, bashlex in ``bashlex_front.py``)
produce these nodes; the partial evaluator in ``evaluate.py`` only ever sees them.
Positions are 1-based line and column numbers in the file the node came from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Union

from bot.shell.ir.frozen import quick_init


@dataclass(frozen=True, slots=True)
class Pos:
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    start_byte: int = -1
    end_byte: int = -1


NOPOS = Pos(0, 0)


# ---------------------------------------------------------------- words ----


@dataclass(frozen=True, slots=True)
class Lit:
    """Literal text. ``quoted`` text never acts as a glob pattern."""

    text: str
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter expansion: ``$X``, ``${X}``, ``${X op arg}``.

    ``op`` is one of "", "-", ":-", "=", ":=", "?", ":?", "+", ":+", "#", "##",
    "%", "%%", "/", "//", "/#", "/%", ":" (substring), "len" (``${#X}``),
    "^", "^^", ",", ",,", "!" (indirect), "[" (array index, unsupported).
    ``arg`` is the word after the operator (the pattern for # % /); ``arg2`` is
    the replacement for / ops and the length for ":".
    """

    name: str
    op: str = ""
    arg: Word | None = None
    arg2: Word | None = None
    quoted: bool = False
    index: str = ""  # "@" or "*" for ``${X[@]}`` / ``${X[*]}`` (the whole array)


@dataclass(frozen=True, slots=True)
class CmdSub:
    body: tuple[Stmt, ...]
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Arith:
    text: str


Part = Union[Lit, Param, CmdSub, Arith]


@dataclass(frozen=True, slots=True)
class Word:
    parts: tuple[Part, ...]
    pos: Pos = NOPOS

    def literal(self) -> str | None:
        """The text of the word when it has no expansions, else None."""
        if all(isinstance(p, Lit) for p in self.parts):
            return "".join(p.text for p in self.parts)  # type: ignore[union-attr]
        return None


# -------------------------------------------------------- test ([[ ]]) ----


@dataclass(frozen=True, slots=True)
class TUnary:
    op: str  # -f -e -d -n -z -s -r -x -L ...
    arg: Word


@dataclass(frozen=True, slots=True)
class TBinary:
    op: str  # == = != =~ -eq -ne -lt -le -gt -ge < >
    left: Word
    right: Word


@dataclass(frozen=True, slots=True)
class TNot:
    expr: TestExpr


@dataclass(frozen=True, slots=True)
class TAnd:
    left: TestExpr
    right: TestExpr


@dataclass(frozen=True, slots=True)
class TOr:
    left: TestExpr
    right: TestExpr


@dataclass(frozen=True, slots=True)
class TWord:
    """A bare word: true when non-empty."""

    word: Word


TestExpr = Union[TUnary, TBinary, TNot, TAnd, TOr, TWord]


# ----------------------------------------------------------- statements ----


@dataclass(frozen=True, slots=True)
class Assign:
    name: str
    value: Word | None  # None: declared without a value (``export X``)
    pos: Pos = NOPOS
    append: bool = False
    array: tuple[Word, ...] | None = None  # ``X=(a b c)``


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # > >> < 2> >& <<  <<< ...
    fd: int | None
    target: Word | None
    body: Word | None = None  # a here-document's text (expansions as parts unless its delimiter is quoted)


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command; ``assigns`` are the ``X=1 cmd`` prefix assignments.

    A line with only assignments is a Command with no words.
    """

    words: tuple[Word, ...]
    assigns: tuple[Assign, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Decl:
    """``export``/``local``/``readonly``/``declare``/``typeset``."""

    kind: str
    assigns: tuple[Assign, ...]
    flags: tuple[str, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Test:
    """``[[ expr ]]`` (``[ ]`` and ``test`` are Commands, evaluated the same way)."""

    expr: TestExpr | None
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class AndOr:
    first: Stmt
    rest: tuple[tuple[str, Stmt], ...]  # ("&&" | "||", stmt)
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Pipeline:
    cmds: tuple[Stmt, ...]
    negated: bool = False
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class If:
    clauses: tuple[tuple[tuple[Stmt, ...], tuple[Stmt, ...]], ...]  # (condition, body)
    else_body: tuple[Stmt, ...] | None = None
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Case:
    word: Word
    items: tuple[tuple[tuple[Word, ...], tuple[Stmt, ...]], ...]
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class For:
    var: str
    items: tuple[Word, ...] | None  # None: ``for x; do`` (positional args)
    body: tuple[Stmt, ...]
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class While:
    cond: tuple[Stmt, ...]
    body: tuple[Stmt, ...]
    until: bool = False
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Group:
    """``{ ...; }`` (subshell=False) or ``( ... )`` (subshell=True)."""

    body: tuple[Stmt, ...]
    subshell: bool = False
    redirects: tuple[Redirect, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class FuncDef:
    name: str
    body: tuple[Stmt, ...]
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class ArithCmd:
    text: str
    pos: Pos = NOPOS


@dataclass(frozen=True, slots=True)
class Opaque:
    """A construct the front-end does not model; evaluated as an unknown command."""

    kind: str
    pos: Pos = NOPOS


Stmt = Union[Command, Decl, Test, AndOr, Pipeline, If, Case, For, While, Group, FuncDef, ArithCmd, Opaque]


@dataclass(frozen=True, slots=True)
class ParseError:
    message: str
    pos: Pos


@dataclass(frozen=True, slots=True)
class Script:
    path: str
    body: tuple[Stmt, ...]
    errors: tuple[ParseError, ...] = field(default=())
    source: bytes = b""


# Every node class here is a frozen dataclass made by the ten thousand per script: the
# cheaper ``__init__`` of ``frozen.quick_init`` (same behaviour, half the cost).
for _cls in [c for c in list(globals().values())
             if isinstance(c, type) and c.__module__ == __name__ and dataclasses.is_dataclass(c)]:
    quick_init(_cls)
del _cls
