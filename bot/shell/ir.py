"""A small intermediate representation of a shell script.

Both front-ends (tree-sitter-bash in ``parse.py``, bashlex in ``bashlex_front.py``)
produce these nodes; the partial evaluator in ``evaluate.py`` only ever sees them.
Positions are 1-based line and column numbers in the file the node came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Pos:
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    start_byte: int = -1
    end_byte: int = -1


NOPOS = Pos(0, 0)


# ---------------------------------------------------------------- words ----


@dataclass(frozen=True)
class Lit:
    """Literal text. ``quoted`` text never acts as a glob pattern."""

    text: str
    quoted: bool = False


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class CmdSub:
    body: tuple[Stmt, ...]
    quoted: bool = False


@dataclass(frozen=True)
class Arith:
    text: str


Part = Union[Lit, Param, CmdSub, Arith]


@dataclass(frozen=True)
class Word:
    parts: tuple[Part, ...]
    pos: Pos = NOPOS

    def literal(self) -> str | None:
        """The text of the word when it has no expansions, else None."""
        if all(isinstance(p, Lit) for p in self.parts):
            return "".join(p.text for p in self.parts)  # type: ignore[union-attr]
        return None


# -------------------------------------------------------- test ([[ ]]) ----


@dataclass(frozen=True)
class TUnary:
    op: str  # -f -e -d -n -z -s -r -x -L ...
    arg: Word


@dataclass(frozen=True)
class TBinary:
    op: str  # == = != =~ -eq -ne -lt -le -gt -ge < >
    left: Word
    right: Word


@dataclass(frozen=True)
class TNot:
    expr: TestExpr


@dataclass(frozen=True)
class TAnd:
    left: TestExpr
    right: TestExpr


@dataclass(frozen=True)
class TOr:
    left: TestExpr
    right: TestExpr


@dataclass(frozen=True)
class TWord:
    """A bare word: true when non-empty."""

    word: Word


TestExpr = Union[TUnary, TBinary, TNot, TAnd, TOr, TWord]


# ----------------------------------------------------------- statements ----


@dataclass(frozen=True)
class Assign:
    name: str
    value: Word | None  # None: declared without a value (``export X``)
    pos: Pos = NOPOS
    append: bool = False
    array: tuple[Word, ...] | None = None  # ``X=(a b c)``


@dataclass(frozen=True)
class Redirect:
    op: str  # > >> < 2> >& <<  <<< ...
    fd: int | None
    target: Word | None
    body: Word | None = None  # a here-document's text (expansions as parts unless its delimiter is quoted)


@dataclass(frozen=True)
class Command:
    """A simple command; ``assigns`` are the ``X=1 cmd`` prefix assignments.

    A line with only assignments is a Command with no words.
    """

    words: tuple[Word, ...]
    assigns: tuple[Assign, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Decl:
    """``export``/``local``/``readonly``/``declare``/``typeset``."""

    kind: str
    assigns: tuple[Assign, ...]
    flags: tuple[str, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Test:
    """``[[ expr ]]`` (``[ ]`` and ``test`` are Commands, evaluated the same way)."""

    expr: TestExpr | None
    pos: Pos = NOPOS


@dataclass(frozen=True)
class AndOr:
    first: Stmt
    rest: tuple[tuple[str, Stmt], ...]  # ("&&" | "||", stmt)
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Pipeline:
    cmds: tuple[Stmt, ...]
    negated: bool = False
    pos: Pos = NOPOS


@dataclass(frozen=True)
class If:
    clauses: tuple[tuple[tuple[Stmt, ...], tuple[Stmt, ...]], ...]  # (condition, body)
    else_body: tuple[Stmt, ...] | None = None
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Case:
    word: Word
    items: tuple[tuple[tuple[Word, ...], tuple[Stmt, ...]], ...]
    pos: Pos = NOPOS


@dataclass(frozen=True)
class For:
    var: str
    items: tuple[Word, ...] | None  # None: ``for x; do`` (positional args)
    body: tuple[Stmt, ...]
    pos: Pos = NOPOS


@dataclass(frozen=True)
class While:
    cond: tuple[Stmt, ...]
    body: tuple[Stmt, ...]
    until: bool = False
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Group:
    """``{ ...; }`` (subshell=False) or ``( ... )`` (subshell=True)."""

    body: tuple[Stmt, ...]
    subshell: bool = False
    redirects: tuple[Redirect, ...] = ()
    pos: Pos = NOPOS


@dataclass(frozen=True)
class FuncDef:
    name: str
    body: tuple[Stmt, ...]
    pos: Pos = NOPOS


@dataclass(frozen=True)
class ArithCmd:
    text: str
    pos: Pos = NOPOS


@dataclass(frozen=True)
class Opaque:
    """A construct the front-end does not model; evaluated as an unknown command."""

    kind: str
    pos: Pos = NOPOS


Stmt = Union[Command, Decl, Test, AndOr, Pipeline, If, Case, For, While, Group, FuncDef, ArithCmd, Opaque]


@dataclass(frozen=True)
class ParseError:
    message: str
    pos: Pos


@dataclass(frozen=True)
class Script:
    path: str
    body: tuple[Stmt, ...]
    errors: tuple[ParseError, ...] = field(default=())
    source: bytes = b""
