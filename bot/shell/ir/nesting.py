"""The nesting limit both front-ends keep, and iterative walks over the IR.

A pull request can nest ``if``, ``$( )``, ``${a:-${a:-...}}`` or ``( ( ... ) )``
thousands deep. The converters and the evaluator recurse once per nesting level, so
each front-end counts levels while it converts and stops at ``MAX_NESTING``: the
construct one level too deep becomes ``ir.Opaque(TOO_DEEP)`` (a statement) or a
substitution of it (a word part, a test operand), which the evaluator treats as
unknown, and the script gets a ``ParseError`` saying where (``too_deep``). So the
IR the evaluator sees never nests deeper than ``IR_DEPTH_BOUND``. An unknown, not a
parse error for the whole file: bash accepts such a script, and everything around the
construct is still analysed exactly; the ``shell-syntax`` rule reports the cut.

Measured at 50 levels (Python frames per level: tree-sitter converter / bashlex with
its converter / evaluator): ``if`` 3 / 9 / 3; ``for``, ``while``, ``case`` 4 / 9 / 3;
``$( )`` 6 / 11 / 7; ``"$( )"`` 8 / 12 / 7; ``( )``, ``{ }`` 3 / 5-6 / 2-3;
``${a:-...}`` 3 / 5 / 1; ``( a | ...)`` 6 / 8 / 7. So parsing stays under 420 frames
(bashlex: 620) and evaluating under 370, well below Python's default limit of 1000; a
``RecursionError`` (a parse started from deep in a stack) is still caught and reported.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from bot.shell.ir import nodes as ir

MAX_NESTING = 50
"""Compound commands, substitutions, ``${...}`` expansions and test operators, nested."""

IR_DEPTH_BOUND = 4 * MAX_NESTING + 8
"""What ``ir_depth`` of a converted script never exceeds (a level is at most 4 IR nodes)."""

TOO_DEEP = "nesting-limit"
_MESSAGE = "nesting deeper than {limit} levels"


def too_deep(pos: ir.Pos, what: str = "", outcome: str = "the construct is treated as unknown") -> ir.ParseError:
    detail = f" ({what})" if what else ""
    return ir.ParseError(f"{_MESSAGE.format(limit=MAX_NESTING)}{detail}; {outcome}", pos)


def is_too_deep(error: ir.ParseError) -> bool:
    """True for the errors ``too_deep`` makes: the script is valid, only too deep to analyse."""
    return error.message.startswith(_MESSAGE.format(limit=MAX_NESTING))


def unknown_stmt(pos: ir.Pos) -> ir.Opaque:
    return ir.Opaque(TOO_DEEP, pos)


def unknown_part(pos: ir.Pos, quoted: bool) -> ir.CmdSub:
    """A word part with an unknown value (the output of an unknown command)."""
    return ir.CmdSub((ir.Opaque(TOO_DEEP, pos),), quoted)


def unknown_test(pos: ir.Pos) -> ir.TWord:
    return ir.TWord(ir.Word((unknown_part(pos, True),), pos))


# ------------------------------------------------------------- IR walks ----


def _children(obj: object) -> list[object]:
    if isinstance(obj, tuple):
        return list(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, (type, ir.Pos)):
        return [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    return []


def ir_depth(root: object) -> int:
    """The deepest chain of IR nodes (dataclasses other than ``Pos``) below ``root``, iteratively."""
    deepest = 0
    stack: list[tuple[object, int]] = [(root, 0)]
    while stack:
        obj, depth = stack.pop()
        if dataclasses.is_dataclass(obj) and not isinstance(obj, (type, ir.Pos)):
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((c, depth) for c in _children(obj))
    return deepest


def rebase(root: Any, line_off: int, col_off: int, byte_off: int) -> Any:
    """Move every ``Pos`` of a sub-parse back into the file (the first line also shifts
    columns), without recursion: nodes are rebuilt children first."""

    def move(p: ir.Pos) -> ir.Pos:
        if p.line == 0:
            return p
        return ir.Pos(p.line + line_off, p.col + (col_off if p.line == 1 else 0), p.end_line + line_off,
                      p.end_col + (col_off if p.end_line == 1 else 0), p.start_byte + byte_off,
                      p.end_byte + byte_off)

    flat = _flat_word(root, move)
    if flat is not None:
        return flat
    done: dict[int, Any] = {}  # id -> rebuilt node (every node stays alive inside root)
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        obj, expanded = stack.pop()
        if id(obj) in done:
            continue
        if isinstance(obj, ir.Pos):
            done[id(obj)] = move(obj)
            continue
        kids = _children(obj)
        if not kids or expanded:
            if isinstance(obj, tuple):
                done[id(obj)] = tuple(done.get(id(k), k) for k in kids)
            elif kids:
                fields = dataclasses.fields(obj)
                done[id(obj)] = dataclasses.replace(obj, **{f.name: done.get(id(k), k) for f, k in zip(fields, kids)})
            else:
                done[id(obj)] = obj
            continue
        stack.append((obj, True))
        stack.extend((k, False) for k in kids)
    return done[id(root)]


def _flat_word(root: Any, move: Any) -> ir.Word | ir.Pos | None:
    """``rebase`` of a position, or of a word of text and plain ``$X`` parts (most words of a
    ``[ ... ]`` test): only positions change, and a word's parts hold none (an equal word,
    without the walk). None for anything else."""
    if type(root) is ir.Pos:
        return move(root)  # type: ignore[no-any-return]
    if type(root) is not ir.Word:
        return None
    for p in root.parts:
        if type(p) is not ir.Lit and not (type(p) is ir.Param and p.arg is None and p.arg2 is None):
            return None
    return ir.Word(root.parts, move(root.pos))


# ------------------------------------------------------- text pre-check ----

_TOKEN = re.compile(r"""[\\'"`(){}#\n]|\$[({]|<<-?|\b(?:if|fi|case|esac|do|done)\b""")
_CLOSES = {"if": "fi", "case": "esac", "do": "done"}
_WORD_END = " \t\n;&|()<>"
_HEREDOC = re.compile(r"""[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([^\s;&|()<>'"]+))""")


def too_deep_offset(text: str, limit: int = MAX_NESTING) -> int | None:
    """The offset where the nesting of ``text`` first goes past ``limit``, else None."""
    return _scan(text, limit)[0]


def deepest(text: str) -> tuple[int, int]:
    """The deepest nesting of ``text`` and the offset where it is first reached."""
    _, depth, offset = _scan(text, None)
    return depth, offset


def _scan(text: str, limit: int | None) -> tuple[int | None, int, int]:
    """(offset past ``limit`` or None, deepest nesting, its offset).

    A quick lexical scan for the front-end whose library recurses (bashlex): it follows
    quotes, comments and here-documents, and counts ``$( )``, ``( )``, ``${ }``,
    ``{ }``, backquotes, ``if``/``fi``, ``case``/``esac`` and ``do``/``done``. A closer
    only closes the opener it matches, so stray words never make the count drift up.
    """
    stack: list[str] = []  # the closer each open level waits for; '"' is a string (no level)
    levels = deepest_level = deepest_at = 0
    heredocs: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while True:
        m = _TOKEN.search(text, i)
        if m is None:
            return None, deepest_level, deepest_at
        tok, i = m.group(0), m.end()
        top = stack[-1] if stack else ""
        in_dq = top == '"'
        if tok == "\\":
            i += 1
            continue
        if in_dq and tok not in ('"', "$(", "${", "`"):
            continue
        opened = ""
        if tok == "'":
            j = text.find("'", i)
            i = n if j < 0 else j + 1
        elif tok == '"':
            if in_dq:
                stack.pop()
            else:
                stack.append('"')
        elif tok == "#":
            if m.start() == 0 or text[m.start() - 1] in " \t\n;&|(":
                j = text.find("\n", i)
                i = n if j < 0 else j
        elif tok == "\n":
            i = _skip_heredocs(text, i, heredocs)
        elif tok.startswith("<<"):
            if text.startswith("<", i):  # <<< here-string
                i += 1
                continue
            h = _HEREDOC.match(text, i)
            if h is not None:
                heredocs.append((h.group(1) or h.group(2) or h.group(3) or "", tok == "<<-"))
                i = h.end()
        elif tok in ("$(", "("):
            opened = ")"
        elif tok == "${":
            opened = "}"
        elif tok == "{":
            if i >= n or text[i] in " \t\n":
                opened = "}"
        elif tok == "`":
            if top == "`":
                stack.pop()
                levels -= 1
            else:
                opened = "`"
        elif tok in (")", "}") or tok in ("fi", "esac", "done"):
            if top == tok and (tok in (")", "}") or i >= n or text[i] in _WORD_END):
                stack.pop()
                levels -= 1
        elif tok in _CLOSES and (i >= n or text[i] in _WORD_END) \
                and (m.start() == 0 or text[m.start() - 1] in _WORD_END):
            opened = _CLOSES[tok]
        if opened:
            stack.append(opened)
            levels += 1
            if levels > deepest_level:
                deepest_level, deepest_at = levels, m.start()
            if limit is not None and levels > limit:
                return m.start(), deepest_level, deepest_at


def _skip_heredocs(text: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """After a newline: skip the bodies of the here-documents opened on the line before."""
    while pending:
        delim, strip_tabs = pending.pop(0)
        while i < len(text):
            j = text.find("\n", i)
            line = text[i:] if j < 0 else text[i:j]
            i = len(text) if j < 0 else j + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
    return i
