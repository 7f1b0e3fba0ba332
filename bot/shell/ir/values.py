"""Partially known shell values.

A value is a tuple of parts: ``str`` (known text) or ``Unk`` (text we cannot know
statically, e.g. the output of ``salloc``). Adjacent known parts are merged, so a fully
known value is ``()`` or ``("text",)``. Patterns (the right side of ``==`` in ``[[ ]]``,
case patterns, the ``%%`` argument) are tuples of ``(text, is_glob)`` and ``Unk``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

import re2

from bot.shell.ir.stars import _CHARS_PER_STEP, _star_segments, _Stars
from bot.shell.ir.stars import Cost as Cost  # re-exported: the matchers' callers name it from here


@dataclass(frozen=True)
class Unk:
    """An unknown piece of text; ``why`` says where it came from (for messages)."""

    why: str


Part = Union[str, Unk]
Val = tuple[Part, ...]
PPart = Union[tuple[str, bool], Unk]
Pat = tuple[PPart, ...]

EMPTY: Val = ()


def lit(text: str) -> Val:
    return (text,) if text else ()


def unknown(why: str) -> Val:
    return (Unk(why),)


def concat(*vals: Val) -> Val:
    out: list[Part] = []
    for v in vals:
        for p in v:
            if isinstance(p, str):
                if not p:
                    continue
                if out and isinstance(out[-1], str):
                    out[-1] = out[-1] + p
                    continue
            out.append(p)
    return tuple(out)


def known(v: Val) -> str | None:
    if not v:
        return ""
    if len(v) == 1 and isinstance(v[0], str):
        return v[0]
    return None


def is_known(v: Val) -> bool:
    return all(isinstance(p, str) for p in v)


def leading(v: Val) -> str:
    """The known text at the start of a value."""
    return v[0] if v and isinstance(v[0], str) else ""


def trailing(v: Val) -> str:
    return v[-1] if v and isinstance(v[-1], str) else ""


def render(v: Val, unknown_as: str = "…") -> str:
    return "".join(p if isinstance(p, str) else unknown_as for p in v)


def describe(v: Val) -> str:
    """Human-readable form: unknown parts shown as ``<why>``."""
    return "".join(p if isinstance(p, str) else f"<{p.why}>" for p in v)


def to_regex(v: Val) -> re.Pattern[str]:
    """A regex matching every text the value could stand for. Values with many unknown
    parts keep only their known head and tail (a wider match, never a backtracking blow-up)."""
    if sum(isinstance(p, Unk) for p in v) > _MAX_UNKNOWN_PARTS:
        v = (*lit(leading(v)), Unk("..."), *lit(trailing(v)))
    return re.compile("".join(re.escape(p) if isinstance(p, str) else ".*" for p in v) + r"\Z", re.S)


class TooLong(Exception):
    """A value would grow past the evaluation's byte limit."""


_MAX_UNKNOWN_PARTS = 4


def _no_cost(n: int) -> None:
    return None


def _re2_options() -> Any:
    opts = re2.Options()
    opts.log_errors = False  # a pattern re2 rejects is an unknown, not a line on stderr
    opts.dot_nl = True
    return opts


_RE2_OPTIONS = _re2_options()


@lru_cache(maxsize=4096)
def re2_compile(pattern: str) -> Any | None:
    """A linear-time regex (google-re2) for a pattern from the repo; None when re2 rejects
    it (backreferences, lookaround): the caller treats the match as unknown."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        return None


def regex_search(pattern: str, subject: str, cost: Cost = _no_cost) -> bool | None:
    """``[[ $s =~ $pattern ]]``; None when the pattern is not one re2 runs."""
    rx = re2_compile(pattern)
    if rx is None:
        return None
    cost(len(subject) // _CHARS_PER_STEP + 1)
    return rx.search(subject) is not None


# ------------------------------------------------------------------ patterns


def pat_known(p: Pat) -> bool:
    return all(not isinstance(x, Unk) for x in p)


def pat_from_val(v: Val, glob: bool) -> Pat:
    return tuple(x if isinstance(x, Unk) else (x, glob) for x in v)


_POSIX_CLASSES = {"[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:alnum:]": "a-zA-Z0-9", "[:upper:]": "A-Z",
                  "[:lower:]": "a-z", "[:space:]": " \\t\\n\\r\\f\\v", "[:blank:]": " \\t",
                  "[:punct:]": "!-/:-@\\[-`{-~", "[:xdigit:]": "0-9A-Fa-f"}


def _class_end(text: str, i: int) -> int:
    """Index of the ``]`` closing the bracket expression at ``i`` (-1 if none)."""
    j = i + 1
    if text[j : j + 1] in ("!", "^"):
        j += 1
    if text[j : j + 1] == "]":
        j += 1
    while j < len(text):
        if text.startswith("[:", j):
            end = text.find(":]", j + 2)
            if end != -1:
                j = end + 2
                continue
        if text[j] == "]":
            return j
        j += 1
    return -1


@lru_cache(maxsize=4096)
def _glob_regex(p: tuple[tuple[str, bool], ...]) -> str:
    out: list[str] = []
    for text, is_glob in p:
        if not is_glob:
            out.append(re.escape(text))
            continue
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                out.append(re.escape(text[i + 1]))
                i += 2
                continue
            if ch == "*":
                out.append(".*")
            elif ch == "?":
                out.append(".")
            elif ch == "[":
                j = _class_end(text, i)
                if j == -1:
                    out.append(re.escape(ch))
                else:
                    body = text[i + 1 : j]
                    neg = body[:1] in ("!", "^")
                    if neg:
                        body = body[1:]
                    for cls, rx in _POSIX_CLASSES.items():
                        body = body.replace(cls, rx)
                    body = body.replace("\\", "\\\\").replace("[", "\\[")
                    out.append("[" + ("^" if neg else "") + body + "]")
                    i = j
            else:
                out.append(re.escape(ch))
            i += 1
    return "".join(out)


class _Glob:
    """A glob compiled for re2 (linear time: ``*a*a*a*a*b`` cannot backtrack)."""

    __slots__ = ("body", "rx", "cost")

    def __init__(self, body: str, rx: Any, cost: Cost) -> None:
        self.body = body
        self.rx = rx
        self.cost = cost

    def full(self, s: str) -> bool:
        self.cost(len(s) // _CHARS_PER_STEP + 1)
        return self.rx.fullmatch(s) is not None


def glob_regex(p: Pat, cost: Cost = _no_cost) -> _Glob | _Stars | None:
    """The glob as a linear-time matcher; None when the pattern has unknown parts (or re2
    rejects its translation)."""
    if not pat_known(p):
        return None
    known_p = tuple(x for x in p if not isinstance(x, Unk))
    segs = _star_segments(known_p)
    if segs is not None:
        return _Stars(segs, cost)
    body = _glob_regex(known_p)
    rx = re2_compile(body)
    return _Glob(body, rx, cost) if rx is not None else None


def match(subject: Val, pattern: Pat, cost: Cost = _no_cost) -> bool | None:
    """Whole-string glob match; None when it cannot be decided."""
    s = known(subject)
    if s is not None:
        plain = _plain_literal(pattern)
        if plain is not None:  # no wildcard (``== "dsr1"``, the common case): equality
            cost(len(s) // _CHARS_PER_STEP + 1)
            return s == plain
        rx = glob_regex(pattern, cost)
        return rx.full(s) if rx is not None else None
    if pat_known(pattern):
        # Decide from the known prefix when the pattern is a plain literal.
        lit_text = _plain_literal(pattern)
        if lit_text is not None:
            head = leading(subject)
            if not lit_text.startswith(head[: len(lit_text)]) or len(head) > len(lit_text):
                return False
            tail = trailing(subject)
            if not lit_text.endswith(tail):
                return False
    return None


def _plain_literal(p: Pat) -> str | None:
    out = []
    for x in p:
        if isinstance(x, Unk):
            return None
        text, is_glob = x
        if is_glob and any(c in text for c in "*?[\\"):
            return None
        out.append(text)
    return "".join(out)


def remove(v: Val, pattern: Pat, op: str, cost: Cost = _no_cost) -> Val | None:
    """``${X#p}`` ``${X##p}`` ``${X%p}`` ``${X%%p}``; None when unknown."""
    s = known(v)
    rx = glob_regex(pattern, cost)
    if rx is None:
        return None
    if s is not None:
        n = len(s)
        if op == "#":
            rng = range(0, n + 1)
        elif op == "##":
            rng = range(n, -1, -1)
        elif op == "%":
            rng = range(n, -1, -1)
        else:  # %%
            rng = range(0, n + 1)
        for i in rng:
            if op in ("#", "##"):
                if rx.full(s[:i]):
                    return lit(s[i:])
            else:
                if rx.full(s[i:]):
                    return lit(s[:i])
        return lit(s)
    # Partially known: ``${X%%LIT*}`` cuts at the first LIT inside the known prefix.
    if op == "%%":
        lit_text = _star_suffix_literal(pattern)
        head = leading(v)
        if lit_text and head:
            idx = head.find(lit_text)
            if idx != -1:
                return lit(head[:idx])
    if op == "##":
        lit_text = _star_prefix_literal(pattern)
        tail = trailing(v)
        if lit_text and tail:
            idx = tail.rfind(lit_text)
            if idx != -1:
                return lit(tail[idx + len(lit_text) :])
    return None


def _star_suffix_literal(p: Pat) -> str | None:
    """For a pattern ``LIT*`` return LIT."""
    text = _pattern_text(p)
    if text is None or not text.endswith("*"):
        return None
    body = text[:-1]
    return body if body and not any(c in body for c in "*?[\\") else None


def _star_prefix_literal(p: Pat) -> str | None:
    text = _pattern_text(p)
    if text is None or not text.startswith("*"):
        return None
    body = text[1:]
    return body if body and not any(c in body for c in "*?[\\") else None


def _pattern_text(p: Pat) -> str | None:
    out = []
    for x in p:
        if isinstance(x, Unk):
            return None
        text, is_glob = x
        if not is_glob and any(c in text for c in "*?[\\"):
            return None
        out.append(text)
    return "".join(out)


def replace(v: Val, pattern: Pat, repl: Val, op: str, cost: Cost = _no_cost, limit: int = 0) -> Val | None:
    """``${X/p/r}`` ``${X//p/r}`` ``${X/#p/r}`` ``${X/%p/r}``; None when unknown. Raises
    ``TooLong`` when the result would be longer than ``limit`` characters (0: no limit)."""
    s = known(v)
    r = known(repl)
    rx = glob_regex(pattern, cost)
    if s is None or r is None or rx is None:
        return None
    if op == "/#":
        end = _longest(rx, s, 0)
        return lit(r + s[end:]) if end else lit(s)
    if op == "/%":
        for i in range(len(s) + 1):
            if rx.full(s[i:]):
                return lit(s[:i] + r)
        return lit(s)
    out = []
    size = 0
    i = 0
    done = False
    while i <= len(s):
        if not done:
            end = _longest(rx, s, i)
            if end is not None and end > i:
                out.append(r)
                size += len(r)
                if limit and size > limit:
                    raise TooLong(size)
                i = end
                if op == "/":
                    done = True
                continue
        if i < len(s):
            out.append(s[i])
            size += 1
        i += 1
    return lit("".join(out))


def _longest(rx: _Glob | _Stars, s: str, start: int) -> int | None:
    for end in range(len(s), start - 1, -1):
        if rx.full(s[start:end]):
            return end
    return None
