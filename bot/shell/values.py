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
from typing import Union


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
    """A regex matching every text the value could stand for."""
    return re.compile("".join(re.escape(p) if isinstance(p, str) else ".*" for p in v) + r"\Z", re.S)


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


def glob_regex(p: Pat) -> re.Pattern[str] | None:
    if not pat_known(p):
        return None
    return re.compile(_glob_regex(tuple(x for x in p if not isinstance(x, Unk))) + r"\Z", re.S)


def match(subject: Val, pattern: Pat) -> bool | None:
    """Whole-string glob match; None when it cannot be decided."""
    rx = glob_regex(pattern)
    s = known(subject)
    if rx is not None and s is not None:
        return rx.match(s) is not None
    if rx is not None:
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


def remove(v: Val, pattern: Pat, op: str) -> Val | None:
    """``${X#p}`` ``${X##p}`` ``${X%p}`` ``${X%%p}``; None when unknown."""
    s = known(v)
    rx = glob_regex(pattern)
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
                if rx.match(s[:i]):
                    return lit(s[i:])
            else:
                if rx.match(s[i:]):
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


def replace(v: Val, pattern: Pat, repl: Val, op: str) -> Val | None:
    s = known(v)
    r = known(repl)
    rx = glob_regex(pattern)
    if s is None or r is None or rx is None:
        return None
    body = rx.pattern[: -len(r"\Z")]
    if op == "/#":
        m = re.match(body, s, re.S)
        return lit(r + s[m.end() :]) if m and _longest(body, s, 0) else lit(s)
    if op == "/%":
        for i in range(len(s) + 1):
            if re.fullmatch(body, s[i:], re.S):
                return lit(s[:i] + r)
        return lit(s)
    out = []
    i = 0
    done = False
    while i <= len(s):
        if not done:
            end = _longest(body, s, i)
            if end is not None and end > i:
                out.append(r)
                i = end
                if op == "/":
                    done = True
                continue
        if i < len(s):
            out.append(s[i])
        i += 1
    return lit("".join(out))


def _longest(body: str, s: str, start: int) -> int | None:
    for end in range(len(s), start - 1, -1):
        if re.fullmatch(body, s[start:end], re.S):
            return end
    return None
