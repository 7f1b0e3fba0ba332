"""Commands for the bashlex front-end: one simple command's words, assignments and
redirections -> ``ir``, and the positions every part of the converter shares.

``CommandConverter`` holds the text, the ``Locator`` (character offsets -> ``ir.Pos``) and
the nesting count; ``bashlex_convert.Converter`` adds the statements (lists, pipelines,
compound commands) on top of it. Words go to ``bashlex_words.WordLexer``, ``[ ... ]`` to
``bashlex_cond.CondParser``.
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Any

from bot.shell.front.bashlex_cond import CondParser
from bot.shell.front.bashlex_words import NAME_RE, WordLexer
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir
from bot.shell.ir.words import merge as _merge

Node = Any  # bashlex.ast.node (untyped)

_DECL = {"export", "local", "readonly", "declare", "typeset"}
_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_REDIR_RE = re.compile(r"(\d+)?(&>>|&>|>>|>&|<&|>\||<<<|<<-|<<|<>|>|<)")


class ConvertError(Exception):
    """A construct this module cannot convert; ``offset`` is a character offset or None."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class Locator:
    """Character offsets -> ``ir.Pos`` (1-based line, 1-based byte column, byte offsets)."""

    def __init__(self, text: str) -> None:
        self.n = len(text)
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.byte_at: list[int] | None = None
        if not text.isascii():
            sizes = (len(ch.encode("utf-8", "surrogateescape")) for ch in text)
            self.byte_at = list(itertools.accumulate(sizes, initial=0))

    def byte(self, offset: int) -> int:
        offset = max(0, min(offset, self.n))
        return offset if self.byte_at is None else self.byte_at[offset]

    def point(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, self.n))
        line = bisect.bisect_right(self.line_starts, offset)
        col = self.byte(offset) - self.byte(self.line_starts[line - 1]) + 1
        return line, col

    def pos(self, start: int, end: int) -> ir.Pos:
        line, col = self.point(start)
        end_line, end_col = self.point(end)
        return ir.Pos(line, col, end_line, end_col, self.byte(start), self.byte(end))


class CommandConverter:
    """Simple commands and words; ``stmts`` and ``substitution_body`` are the statement
    converter's (``bashlex_convert.Converter``)."""

    def __init__(self, text: str, loc: Locator, base: int) -> None:
        self.text = text  # the whole file
        self.loc = loc
        self.base = base  # added to every bashlex position (non-zero when re-parsing a substitution)
        self.depth = 0  # nesting levels entered (as parse.py counts them)
        self.errors: list[ir.ParseError] = []  # constructs cut at the nesting limit

    def enter(self, start: int, what: str) -> bool:
        """Count a nesting level; False (and an error) when the one at ``start`` is too deep."""
        if self.depth >= nesting.MAX_NESTING:
            if not self.errors:
                self.errors.append(nesting.too_deep(self.loc.pos(start, start), what))
            return False
        self.depth += 1
        return True

    # ------------------------------------------------------------- positions
    def span(self, node: Node) -> tuple[int, int]:
        start, end = node.pos
        return start + self.base, end + self.base

    def pos(self, node: Node) -> ir.Pos:
        return self.loc.pos(*self.span(node))

    def raw(self, node: Node) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def stmts(self, node: Node) -> list[ir.Stmt]:
        raise NotImplementedError  # bashlex_convert.Converter

    def substitution_body(self, node: Node | None, start: int, end: int, backtick: bool) -> tuple[ir.Stmt, ...]:
        raise NotImplementedError  # bashlex_convert.Converter

    # -------------------------------------------------------------- commands
    def command(self, node: Node) -> ir.Stmt:
        assigns: list[Node] = []
        words: list[Node] = []
        redirs: list[ir.Redirect] = []
        for part in node.parts:
            if part.kind == "redirect":
                redirs.append(self.redirect(part))
            elif part.kind in ("assignment", "word") and not words and _ASSIGN_RE.match(self.raw(part)):
                assigns.append(part)  # bashlex misses some, e.g. ``X[0]=a``
            elif part.kind in ("word", "assignment"):
                words.append(part)
        # tree-sitter counts a here-string as part of the command, other redirections not
        keep = {id(p) for p in assigns + words}
        spans = sorted(self.span(p) for p in node.parts
                       if id(p) in keep or (p.kind == "redirect" and getattr(p, "type", "") == "<<<"))
        pos = self.loc.pos(spans[0][0], spans[-1][1]) if spans else self.pos(node)
        stmt: ir.Stmt
        head = self.raw(words[0]) if words else ""
        if head in _DECL and not assigns:  # ``X=1 export Y`` stays a Command, as in parse.py
            stmt = self.decl(head, words[1:], pos)
        elif head == "[" and not assigns and len(words) >= 2 and self.raw(words[-1]) == "]":
            stmt = ir.Test(self.test_expr(words[1:-1]), pos)
        else:
            return ir.Command(tuple(self.word(w) for w in words), tuple(self.assign(a) for a in assigns),
                              tuple(redirs), pos)
        if redirs:
            return ir.Group((stmt,), False, tuple(redirs), self.pos(node))
        return stmt

    def decl(self, kind: str, words: list[Node], pos: ir.Pos) -> ir.Decl:
        assigns: list[ir.Assign] = []
        flags: list[str] = []
        for w in words:
            raw = self.raw(w)
            if _ASSIGN_RE.match(raw):
                assigns.append(self.assign(w))
            elif NAME_RE.fullmatch(raw):
                assigns.append(ir.Assign(raw, None, self.pos(w)))
            elif raw.startswith(("-", "+")):
                flags.append(raw)
        return ir.Decl(kind, tuple(assigns), tuple(flags), pos)

    def assign(self, node: Node) -> ir.Assign:
        start, end = self.span(node)
        raw = self.text[start:end]
        m = _ASSIGN_RE.match(raw)
        if m is None:
            raise ConvertError(f"not an assignment: {raw!r}", start)
        name = m.group(1) + ("[]" if m.group(2) else "")
        vstart = start + m.end()
        if vstart >= end:
            value = ir.Word((ir.Lit(""),), self.loc.pos(start, end))
        else:
            value = self.word_span(vstart, end, subs_of(node))
        return ir.Assign(name, value, self.loc.pos(start, end), m.group(3) == "+")

    def redirect(self, node: Node) -> ir.Redirect:
        start, end = self.span(node)
        raw = self.text[start:end]
        m = _REDIR_RE.match(raw)
        if m is None:
            raise ConvertError(f"unknown redirection {raw!r}", start)
        fd = int(m.group(1)) if m.group(1) else None
        op = m.group(2)
        out = getattr(node, "output", None)
        target: ir.Word | None
        if out is not None and not isinstance(out, (int, str)):
            if op in ("<<", "<<-"):
                target = ir.Word((ir.Lit(self.raw(out)),), self.pos(out))
            else:
                target = self.word(out)
        else:
            rest = raw[m.end():]
            tstart = start + m.end() + (len(rest) - len(rest.lstrip()))
            rest = rest.strip()
            if rest == "-":
                op += "-"
                target = None
            elif rest:
                target = ir.Word((ir.Lit(rest),), self.loc.pos(tstart, tstart + len(rest)))
            else:
                target = None
        return ir.Redirect(op, fd, target)

    # ------------------------------------------------------------ [ ... ]
    def test_expr(self, words: list[Node]) -> ir.TestExpr | None:
        if not words:
            return None
        return CondParser(self, words).parse()

    # ----------------------------------------------------------------- words
    def word(self, node: Node, pattern: bool = False) -> ir.Word:
        start, end = self.span(node)
        return self.word_span(start, end, subs_of(node), pattern)

    def word_span(self, start: int, end: int, subs: dict[int, Node], pattern: bool = False) -> ir.Word:
        lexer = WordLexer(self, subs)
        parts = lexer.lex(start, end, quoted=False, pattern=pattern)
        return ir.Word(tuple(_merge(parts)), self.loc.pos(start, end))


def subs_of(node: Node) -> dict[int, Node]:
    """bashlex's command/process substitution nodes inside a word, by start offset (relative)."""
    out: dict[int, Node] = {}
    for part in getattr(node, "parts", None) or ():
        if part.kind in ("commandsubstitution", "processsubstitution"):
            out[part.pos[0]] = part
    return out
