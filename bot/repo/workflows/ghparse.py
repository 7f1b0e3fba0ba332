"""Parsing ``${{ }}`` templates into bot.repo.workflows.ghnodes trees (budgets: MAX_EXPR, MAX_NEST, MAX_DEPTH)."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from bot.repo.workflows.ghnodes import (
    _IDENT,
    BAD,
    MAX_DEPTH,
    MAX_EXPR,
    MAX_NEST,
    Bin,
    Call,
    Lit,
    Node,
    Not,
    Ref,
    Template,
    _index,
    _measure,
)

# ---------------------------------------------------------------------------- parsing

class _Error(Exception):
    pass


_DEC = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NUM = re.compile(r"0x[0-9A-Fa-f]+|0o[0-7]+|" + _DEC.pattern)
_OPS = ("==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ",", ".", "*")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
def _parse_number(s: str) -> float:
    """A string as a number, as the runner coerces it ('' is 0, anything else NaN)."""
    s = s.strip()
    if not s or _DEC.fullmatch(s):
        return float(s or 0)
    if s in ("Infinity", "-Infinity"):
        return math.inf if s[0] == "I" else -math.inf
    if len(s) > 2 and s[:2] in ("0x", "0o") and _NUM.fullmatch(s):
        v = int(s[2:], 16 if s[1] == "x" else 8)
        return math.nan if v >= 2**32 else float(v - 2**32 if v >= 2**31 else v)  # Int32, two's complement
    return math.nan


_Tok = tuple[str, Any, int]  # kind (op, str, num, id, end), value, offset


def _lex(text: str, pos: int) -> tuple[list[_Tok], int]:
    """Tokens from ``pos`` up to the closing ``}}`` (outside strings); the offset after it."""
    toks: list[_Tok] = []
    n = len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            raise _Error("no closing '}}'")
        c = text[pos]
        if text.startswith("}}", pos):
            return toks, pos + 2
        if c == "'":
            j, chunks = pos + 1, []
            while True:
                k = text.find("'", j)
                if k < 0:
                    raise _Error(f"the string at character {pos + 1} has no closing quote")
                chunks.append(text[j:k])
                if text.startswith("''", k):
                    chunks.append("'")
                    j = k + 2
                    continue
                break
            toks.append(("str", "".join(chunks), pos))
            pos = k + 1
            continue
        m = _NUM.match(text, pos) if c in "+-.0123456789" else None
        if m and not (m.end() < n and text[m.end()] in _WORD):
            toks.append(("num", _parse_number(m.group()), pos))
            pos = m.end()
            continue
        m = _IDENT.match(text, pos)
        if m:
            toks.append(("id", m.group(), pos))
            pos = m.end()
            continue
        op = next((o for o in _OPS if text.startswith(o, pos)), None)
        if op is None:
            raise _Error(f"unexpected character {c!r} at character {pos + 1}")
        toks.append(("op", op, pos))
        pos += len(op)


class _Parser:
    def __init__(self, toks: list[_Tok]) -> None:
        self.toks, self.i, self.nest = toks, 0, 0

    def peek(self) -> _Tok:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "", -1)

    def is_op(self, *ops: str) -> bool:
        kind, value, _ = self.peek()
        return kind == "op" and value in ops

    def take(self) -> _Tok:
        t = self.peek()
        self.i += 1
        return t

    def expect(self, op: str) -> None:
        if not self.is_op(op):
            raise _Error(f"expected '{op}' but found {_describe(self.peek())}")
        self.i += 1

    def enter(self) -> None:
        self.nest += 1
        if self.nest > MAX_NEST:
            raise _Error(f"nested deeper than {MAX_NEST} levels")

    def top(self) -> Node:
        node = self.expr()
        if self.i < len(self.toks):
            raise _Error(f"unexpected {_describe(self.peek())}")
        return node

    def expr(self) -> Node:
        items = [self.and_()]
        while self.is_op("||"):
            self.i += 1
            items.append(self.and_())
        return _balanced("||", items)

    def and_(self) -> Node:
        items = [self.eq()]
        while self.is_op("&&"):
            self.i += 1
            items.append(self.eq())
        return _balanced("&&", items)

    def eq(self) -> Node:
        node = self.cmp()
        while self.is_op("==", "!="):
            node = Bin(self.take()[1], node, self.cmp())
        return node

    def cmp(self) -> Node:
        node = self.unary()
        while self.is_op("<", "<=", ">", ">="):
            node = Bin(self.take()[1], node, self.unary())
        return node

    def unary(self) -> Node:
        if not self.is_op("!"):
            return self.postfix()
        count = 0
        while self.is_op("!"):
            self.i += 1
            count += 1
            self.enter()
        node = self.postfix()
        for _ in range(count):
            node = Not(node)
        self.nest -= count
        return node

    def postfix(self) -> Node:
        node = self.primary()
        while self.is_op(".", "["):
            if self.take()[1] == ".":
                kind, name, _ = self.take()
                if kind != "id" and (kind, name) != ("op", "*"):
                    raise _Error(f"expected a property name after '.' but found {_describe((kind, name, 0))}")
                node = _index(node, Lit(name))
            else:
                self.enter()
                key = Lit("*") if self.is_op("*") and self.take() else self.expr()
                self.expect("]")
                self.nest -= 1
                node = _index(node, key)
        return node

    def primary(self) -> Node:
        kind, value, _ = t = self.take()
        if kind in ("str", "num"):
            return Lit(value)
        if kind == "op" and value == "(":
            self.enter()
            node = self.expr()
            self.expect(")")
            self.nest -= 1
            return node
        if kind != "id":
            raise _Error(f"unexpected {_describe(t)}")
        if value in _KEYWORDS:
            return Lit(_KEYWORDS[value])
        if not self.is_op("("):
            return Ref((value,))
        self.i += 1
        self.enter()
        args: list[Node] = []
        if not self.is_op(")"):
            args.append(self.expr())
            while self.is_op(","):
                self.i += 1
                args.append(self.expr())
        self.expect(")")
        self.nest -= 1
        return Call(value.lower(), tuple(args))


_KEYWORDS: dict[str, Any] = {"true": True, "false": False, "null": None, "NaN": math.nan, "Infinity": math.inf}


def _describe(t: _Tok) -> str:
    kind, value, _ = t
    if kind == "end":
        return "end of the expression"
    return repr(value) if kind != "str" else "a string"


def _balanced(op: str, items: list[Node]) -> Node:
    """``a || b || c ...`` as a shallow tree (&& and || are associative)."""
    while len(items) > 1:
        pairs = [Bin(op, items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + ([items[-1]] if len(items) % 2 else [])
    return items[0]


@lru_cache(maxsize=512)
def _scan(text: str) -> tuple[Template, tuple[str, ...]]:
    parts: list[str | Node] = []
    errors: list[str] = []
    pos = 0

    def add_text(s: str) -> None:
        if s:
            if parts and isinstance(parts[-1], str):
                parts[-1] += s
            else:
                parts.append(s)

    while True:
        start = text.find("${{", pos)
        if start < 0:
            add_text(text[pos:])
            return tuple(parts), tuple(errors)
        add_text(text[pos:start])
        snippet = text[start:start + 60] + ("..." if len(text) > start + 60 else "")
        try:
            toks, pos = _lex(text, start + 3)
        except _Error as e:
            errors.append(f"expression at character {start + 1} ({snippet!r}): {e}")
            parts.append(BAD)
            return tuple(parts), tuple(errors)
        try:
            if pos - start > MAX_EXPR:
                raise _Error(f"longer than {MAX_EXPR} characters")
            if not toks:
                raise _Error("empty expression")
            node = _Parser(toks).top()
            if _measure(node)[0] > MAX_DEPTH:
                raise _Error(f"nested deeper than {MAX_DEPTH} levels")
            parts.append(node)
        except _Error as e:
            errors.append(f"expression at character {start + 1} ({snippet!r}): {e}")
            parts.append(BAD)


def parse_template(text: str) -> Template:
    """Text and expressions; a malformed expression is ``Call("?", ())`` (never raises)."""
    return _scan(text)[0]


def parse_errors(text: str) -> list[str]:
    """One message per malformed expression in ``text`` (offsets are 1-based characters)."""
    return list(_scan(text)[1])
