"""``$(( ... ))`` on literal integers, with caps: bash arithmetic is 64-bit, and a result
or an exponent beyond that is *unknown* (``9**9**9`` would otherwise be a number with
370 million digits). Never ``eval``; recursion bounded by the nesting cap."""

from __future__ import annotations

import re
from collections.abc import Callable

LIMIT = 2**63  # bash's intmax_t
MAX_EXPONENT = 63
MAX_NESTING = 64
_TOKEN = re.compile(r"\s*(?:(\d+)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$?([A-Za-z_][A-Za-z0-9_]*)"
                    r"|(\*\*=?|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%]=|[-+*/%()<>!?:=,]))")
_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
Names = Callable[[str], "int | None"]  # a variable's integer value; None: unknown


class Capped(Exception):
    """The expression is valid but its value is beyond the caps."""


class _Invalid(Exception):
    pass


def _no_names(name: str) -> int | None:
    return None


def evaluate(text: str, names: Names = _no_names,
             assigned: dict[str, int] | None = None) -> int | None:
    """The value of an arithmetic expression; None when we cannot tell it (a variable whose
    value is unknown, syntax we do not model). ``names`` gives variables' values;
    assignments (``X = 2``, ``X += 1``, ``X++``) are collected into ``assigned``, applied by
    the caller only when the whole expression has a value. Raises ``Capped`` beyond 64 bits."""
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        if m.group(2) or m.group(3):
            tokens.append("$" + (m.group(2) or m.group(3)))
        else:
            tokens.append(m.group(1) or m.group(4))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if not tokens:
        return None
    parser = _Parser(tokens, names, assigned if assigned is not None else {})
    try:
        value = parser.comma(0)
        if parser.i != len(tokens):
            return None
    except _Invalid:
        return None
    return value


class _Parser:
    def __init__(self, tokens: list[str], names: Names, assigned: dict[str, int]) -> None:
        self.tokens = tokens
        self.i = 0
        self.names = names
        self.assigned = assigned

    def value_of(self, name: str) -> int:
        if name in self.assigned:
            return self.assigned[name]
        v = self.names(name)
        if v is None:
            raise _Invalid
        return v

    def comma(self, depth: int) -> int:  # a, b
        value = self.assign(depth)
        while self.peek() == ",":
            self.take()
            value = self.assign(depth)
        return value

    def assign(self, depth: int) -> int:  # X = e, X op= e
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok is not None and tok.startswith("$") and nxt in ("=", "+=", "-=", "*=", "/=", "%="):
            self.i += 2
            right = self.assign(depth + 1) if depth < MAX_NESTING else _too_deep()
            name = tok[1:]
            if nxt != "=":
                old = self.value_of(name)
                right = _binary(nxt[0], old, right)
            self.assigned[name] = right
            return right
        return self.ternary(depth)

    def ternary(self, depth: int) -> int:  # c ? a : b
        cond = self.logical(depth)
        if self.peek() == "?":
            self.take()
            a = self.assign(depth + 1) if depth < MAX_NESTING else _too_deep()
            if self.take() != ":":
                raise _Invalid
            b = self.assign(depth + 1)
            return a if cond else b
        return cond

    def logical(self, depth: int) -> int:  # && || (both sides evaluated: no side effects here)
        value = self.compare(depth)
        while self.peek() in ("&&", "||"):
            op = self.take()
            right = self.compare(depth)
            value = int(bool(value) and bool(right)) if op == "&&" else int(bool(value) or bool(right))
        return value

    def compare(self, depth: int) -> int:  # < <= > >= == !=
        value = self.expr(depth)
        while self.peek() in _COMPARE:
            op = self.take()
            value = int(_COMPARE[op](value, self.expr(depth)))
        return value

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
            value = _binary(op, value, right)
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
        if tok == "!":
            return int(not self.unary(depth + 1))
        if tok in ("++", "--") and (self.peek() or "").startswith("$"):
            name = self.take()[1:]
            v = self.value_of(name) + (1 if tok == "++" else -1)
            self.assigned[name] = v
            return v
        if tok.startswith("$"):
            name = tok[1:]
            v = self.value_of(name)
            if self.peek() in ("++", "--"):
                self.assigned[name] = v + (1 if self.take() == "++" else -1)
            return v
        if tok == "(":
            v = self.comma(depth + 1)
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


def _binary(op: str, a: int, b: int) -> int:
    if op == "+":
        return _cap(a + b)
    if op == "-":
        return _cap(a - b)
    if op == "*":
        return _cap(a * b)
    if b == 0:
        raise _Invalid  # bash: division by 0
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncates, as C
    return q if op == "/" else a - q * b
