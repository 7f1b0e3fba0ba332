"""``[ ... ]`` for the bashlex front-end: test(1)'s grammar over a command's words."""

from __future__ import annotations

from typing import Any, Protocol

from bot.shell.front.bashlex_words import Positions
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir

Node = Any  # bashlex.ast.node (untyped)


class Host(Protocol):
    """What the test parser asks of the command converter (``bashlex_cmds.CommandConverter``)."""

    depth: int
    @property
    def loc(self) -> Positions: ...

    def enter(self, start: int, what: str) -> bool: ...
    def raw(self, node: Node) -> str: ...
    def span(self, node: Node) -> tuple[int, int]: ...
    def word(self, node: Node, pattern: bool = False) -> ir.Word: ...

_TEST_UNARY = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-n", "-o", "-p", "-r", "-s", "-t",
               "-u", "-w", "-x", "-z", "-G", "-L", "-N", "-O", "-S", "-v", "-R"}
_TEST_BINARY = {"=", "==", "!=", "=~", "<", ">", "\\<", "\\>", "-eq", "-ne", "-lt", "-le", "-gt", "-ge",
                "-nt", "-ot", "-ef"}
_TEST_PATTERN = {"=", "==", "!=", "=~"}



class CondParser:
    """``test`` expression grammar: -o below -a below ! below primaries and ( )."""

    def __init__(self, conv: Host, words: list[Node]) -> None:
        self.conv = conv
        self.words = words
        self.raws = [conv.raw(w) for w in words]
        self.i = 0

    def parse(self) -> ir.TestExpr:
        expr = self.or_()
        while self.i < len(self.words):  # junk after a full expression: keep the words visible
            expr = ir.TAnd(expr, ir.TWord(self.conv.word(self.words[self.i])))
            self.i += 1
        return expr

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.raws[j] if j < len(self.raws) else None

    def or_(self) -> ir.TestExpr:
        left = self.and_()
        while self.peek() == "-o" and self.peek(1) is not None:
            self.i += 1
            left = ir.TOr(left, self.and_())
        return left

    def and_(self) -> ir.TestExpr:
        left = self.not_()
        while self.peek() == "-a" and self.peek(1) is not None:
            self.i += 1
            left = ir.TAnd(left, self.not_())
        return left

    def not_(self) -> ir.TestExpr:
        if self.peek() in ("!", "(", "\\(", "'('", '"("') and self.peek(1) is not None:
            conv = self.conv
            start = conv.span(self.words[self.i])[0]
            if not conv.enter(start, "test operator"):
                self.i = len(self.words)  # the rest of the expression is unknown
                return nesting.unknown_test(conv.loc.pos(start, start))
            try:
                if self.peek() == "!":
                    self.i += 1
                    return ir.TNot(self.not_())
                return self.primary()
            finally:
                conv.depth -= 1
        return self.primary()

    def primary(self) -> ir.TestExpr:
        tok = self.peek()
        if tok in ("(", "\\(", "'('", '"("') and self.peek(1) is not None:
            self.i += 1
            expr = self.or_()
            if self.peek() in (")", "\\)", "')'", '")"'):
                self.i += 1
            return expr
        nxt = self.peek(1)
        if nxt is not None and nxt in _TEST_BINARY and self.peek(2) is not None:
            left = self.conv.word(self.words[self.i])
            right = self.conv.word(self.words[self.i + 2], pattern=nxt in _TEST_PATTERN)
            self.i += 3
            return ir.TBinary(nxt.lstrip("\\"), left, right)
        if tok is not None and tok in _TEST_UNARY and nxt is not None:
            arg = self.conv.word(self.words[self.i + 1])
            self.i += 2
            return ir.TUnary(tok, arg)
        word = self.conv.word(self.words[self.i])
        self.i += 1
        return ir.TWord(word)
