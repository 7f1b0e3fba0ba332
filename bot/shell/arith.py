"""``$(( ... ))`` on literal integers, with caps: bash arithmetic is 64-bit, and a result
or an exponent beyond that is *unknown* (``9**9**9`` would otherwise be a number with
370 million digits). Never ``eval``; recursion bounded by the nesting cap."""

from __future__ import annotations

import re

LIMIT = 2**63  # bash's intmax_t
MAX_EXPONENT = 63
MAX_NESTING = 64
_TOKEN = re.compile(r"\s*(?:(\d+)|(\*\*|[-+*/%()]))")


class Capped(Exception):
    """The expression is valid but its value is beyond the caps."""


class _Invalid(Exception):
    pass


def evaluate(text: str) -> int | None:
    """The value of a literal arithmetic expression; None when it is not one (variables,
    assignments, syntax we do not model). Raises ``Capped`` beyond 64 bits."""
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        tokens.append(m.group(1) or m.group(2))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if not tokens:
        return None
    parser = _Parser(tokens)
    try:
        value = parser.expr(0)
        if parser.i != len(tokens):
            return None
    except _Invalid:
        return None
    return value


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise _Invalid
        self.i += 1
        return tok

    def expr(self, depth: int) -> int:  # + -
        value = self.term(depth)
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.term(depth)
            value = _cap(value + right if op == "+" else value - right)
        return value

    def term(self, depth: int) -> int:  # * / %
        value = self.power(depth)
        while self.peek() in ("*", "/", "%"):
            op = self.take()
            right = self.power(depth)
            if op == "*":
                value = _cap(value * right)
            elif right == 0:
                raise _Invalid  # bash: division by 0
            else:
                q = abs(value) // abs(right) * (1 if (value >= 0) == (right >= 0) else -1)  # truncates, as C
                value = q if op == "/" else value - q * right
        return value

    def power(self, depth: int) -> int:  # ** (right-associative)
        base = self.unary(depth)
        if self.peek() == "**":
            self.take()
            exp = self.power(depth + 1) if depth < MAX_NESTING else _too_deep()
            if exp < 0:
                raise _Invalid  # bash: exponent less than 0
            if abs(base) > 1 and exp > MAX_EXPONENT:
                raise Capped(f"exponent {exp}")
            return _cap(base**exp)
        return base

    def unary(self, depth: int) -> int:
        if depth > MAX_NESTING:
            raise Capped("nesting")
        tok = self.take()
        if tok in ("-", "+"):
            v = self.unary(depth + 1)
            return -v if tok == "-" else v
        if tok == "(":
            v = self.expr(depth + 1)
            if self.take() != ")":
                raise _Invalid
            return v
        if tok.isdigit():
            if len(tok) > 19:
                raise Capped(f"operand {tok[:20]}...")
            if len(tok) > 1 and tok.startswith("0"):
                if not _octal(tok):
                    raise _Invalid  # bash: value too great for base
                return _cap(int(tok, 8))
            return _cap(int(tok))
        raise _Invalid


def _octal(tok: str) -> bool:
    return all(c in "01234567" for c in tok)


def _cap(v: int) -> int:
    if not -LIMIT <= v < LIMIT:
        raise Capped("beyond 64 bits")
    return v


def _too_deep() -> int:
    raise Capped("nesting")
