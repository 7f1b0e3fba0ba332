"""Builtins the evaluator computes itself: ``echo``, ``printf`` (with width caps),
``dirname``/``basename``, ``[``/``test`` given as words, and the binary tests of
``[[ ]]`` (``=~`` through re2: linear time)."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Protocol

from bot.shell.ir.values import (
    EMPTY,
    Cost,
    TooLong,
    Val,
    concat,
    known,
    leading,
    lit,
    match,
    pat_from_val,
    regex_search,
    unknown,
)

if TYPE_CHECKING:
    from bot.shell.evaluator.state import State


def _status(v: bool | None) -> int | None:
    return None if v is None else (0 if v else 1)


def _nonempty(v: Val) -> bool | None:
    if any(isinstance(p, str) and p for p in v):
        return True
    return False if not v else None


def _binary(op: str, left: Val, right: Val, cost: Cost) -> bool | None:
    a, b = known(left), known(right)
    if a is None or b is None:
        return None
    if op == "=~":
        # linear time (re2); a pattern re2 rejects (a backreference) is unknown
        return regex_search(b, a, cost)
    if op in ("<", ">"):
        return (a < b) if op == "<" else (a > b)
    ia, ib = _to_int(a), _to_int(b)
    if ia is None or ib is None:
        return None
    return {"-eq": ia == ib, "-ne": ia != ib, "-lt": ia < ib, "-le": ia <= ib, "-gt": ia > ib,
            "-ge": ia >= ib}.get(op)


def _to_int(s: str) -> int | None:
    try:
        return int(s.strip())
    except ValueError:
        return None


def _int_or_none(v: Val) -> int | None:
    k = known(v)
    return _to_int(k) if k is not None else None


class Tester(Protocol):
    """What ``test``/``[`` asks of the evaluator running it (``bot.shell.evaluator.core.Core``)."""

    def _tick(self, n: int = 1) -> None: ...
    def unary(self, op: str, value: Val, st: State) -> bool | None: ...


def _test_argv(words: list[Val], ev: Tester, st: State) -> bool | None:
    """``[ ... ]`` / ``test ...`` given as words (the bashlex front-end)."""
    toks = [known(w) for w in words]

    def expr(i: int) -> tuple[bool | None, int]:
        left, i = term(i)
        while i < len(words) and toks[i] in ("-a", "-o"):
            op = toks[i]
            right, i = term(i + 1)
            if op == "-a":
                left = False if left is False or right is False else (None if None in (left, right) else True)
            else:
                left = True if left is True or right is True else (None if None in (left, right) else False)
        return left, i

    def term(i: int) -> tuple[bool | None, int]:
        if i < len(words) and toks[i] == "!":
            v, j = term(i + 1)
            return (None if v is None else not v), j
        if i + 2 < len(words) + 0 and toks[i + 1] in ("=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            op = toks[i + 1] or ""
            if op in ("=", "==", "!="):
                v = match(words[i], pat_from_val(words[i + 2], False), ev._tick)
                if op == "!=":
                    v = None if v is None else not v
            else:
                v = _binary(op, words[i], words[i + 2], ev._tick)
            return v, i + 3
        if i + 1 < len(words) and toks[i] and (toks[i] or "").startswith("-") and len(toks[i] or "") == 2:
            return ev.unary(toks[i] or "", words[i + 1], st), i + 2
        if i < len(words):
            return _nonempty(words[i]), i + 1
        return False, i

    if not words:
        return False
    v, _ = expr(0)
    return v


def _echo(args: list[Val]) -> Val:
    newline = True
    interpret = False
    while args and known(args[0]) in ("-n", "-e", "-E", "-ne", "-en"):
        flag = known(args[0]) or ""
        newline = newline and "n" not in flag
        interpret = "e" in flag
        args = args[1:]
    parts: list[Val] = []
    for i, a in enumerate(args):
        if i:
            parts.append(lit(" "))
        parts.append(_escapes(a) if interpret else a)
    if newline:
        parts.append(lit("\n"))
    return concat(*parts)


def _escapes(v: Val) -> Val:
    return tuple(p.replace("\\n", "\n").replace("\\t", "\t") if isinstance(p, str) else p for p in v)


_PRINTF_SPEC = re.compile(r"%[-+ 0#]*([0-9]*)(?:\.([0-9]+))?([sdiqbxXfc%])")


def _printf_too_wide(fmt: str | None, limit: int) -> bool:
    """A format whose width or precision alone is over the byte limit (``%2000000000s``)."""
    if not fmt or "%" not in fmt:
        return False
    for m in _PRINTF_SPEC.finditer(fmt):
        for g in (m.group(1), m.group(2)):
            if g and (len(g) > 12 or int(g) > limit):
                return True
    return False


def _printf(args: list[Val], limit: int = 0) -> Val:
    if not args:
        return EMPTY
    fmt = known(args[0])
    if fmt is None:
        return unknown("printf")
    rest = list(args[1:])
    out: list[Val] = []
    i = 0
    while True:
        j = 0
        while j < len(fmt):
            ch = fmt[j]
            if ch == "\\" and j + 1 < len(fmt):
                out.append(lit({"n": "\n", "t": "\t", "\\": "\\"}.get(fmt[j + 1], fmt[j + 1])))
                j += 2
                continue
            if ch == "%" and j + 1 < len(fmt):
                m = re.match(r"%[-+ 0#]*[0-9]*(?:\.[0-9]+)?([sdiqbxXfc%])", fmt[j:])
                if m is None:
                    out.append(lit(ch))
                    j += 1
                    continue
                conv = m.group(1)
                if conv == "%":
                    out.append(lit("%"))
                else:
                    arg = rest[i] if i < len(rest) else EMPTY
                    i += 1
                    if conv in ("s", "q", "b") and m.group(0) == "%" + conv:
                        out.append(arg)
                    elif conv == "c" and m.group(0) == "%c":
                        k = known(arg)  # the first character of the argument, as bash prints it
                        out.append(lit(k[:1]) if k is not None else unknown("printf"))
                    else:
                        k = known(arg)
                        if k is None:
                            out.append(unknown("printf"))
                        else:
                            spec = m.group(0).replace("q", "s").replace("b", "s")
                            if _printf_too_wide(spec, limit or 1 << 20):
                                raise TooLong(len(spec))
                            try:
                                if conv == "c":
                                    spec, k = spec[:-1] + "s", k[:1]
                                out.append(lit(spec % (int(k) if conv in "diXx" else k)))
                            except (ValueError, TypeError, OverflowError):
                                out.append(unknown("printf"))
                j += len(m.group(0))
                continue
            out.append(lit(ch))
            j += 1
        if i >= len(rest) or i == 0:
            break
    return concat(*out)


def _path_op(name: str, args: list[Val]) -> Val:
    args = [a for a in args if known(a) not in ("--",)]
    if not args:
        return EMPTY
    k = known(args[0])
    if k is None:
        if name == "dirname":
            # dirname of a path whose last component is unknown: keep the known head
            head = leading(args[0])
            if "/" in head and len(args[0]) == 2 and "/" not in head.split("/")[-1]:
                pass
        return unknown(name)
    if name == "dirname":
        d = posixpath.dirname(k.rstrip("/")) if k.rstrip("/") else "/"
        return lit(d or ".")
    b = posixpath.basename(k.rstrip("/"))
    if len(args) > 1:
        suffix = known(args[1])
        if suffix and b.endswith(suffix) and b != suffix:
            b = b[: -len(suffix)]
    return lit(b)
