"""Globs of literal text and ``*`` only, matched with string operations (``bot.shell.ir.values``
translates every other glob for re2)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

# A matcher's cost in budget steps: one per this many characters of subject text.
_CHARS_PER_STEP = 256
Cost = Callable[[int], None]  # charged with a number of steps; may raise to stop the evaluation


class _Stars:
    """A glob of literal text and ``*`` only (``%%/*``, ``##*@``, ``== *.sh``): what the re2
    translation matches (``.*`` matches anything, newlines too), in string operations; the
    same cost per subject as ``_Glob``. The text between stars is found leftmost, in order."""

    __slots__ = ("segs", "cost")

    def __init__(self, segs: tuple[str, ...], cost: Cost) -> None:
        self.segs = segs  # the literal text around the stars (one more than there are stars)
        self.cost = cost

    def full(self, s: str) -> bool:
        self.cost(len(s) // _CHARS_PER_STEP + 1)
        if not s.isascii():
            s.encode("utf-8")  # as re2 does: a lone surrogate raises
        segs = self.segs
        if len(segs) == 1:
            return s == segs[0]
        first, last = segs[0], segs[-1]
        if len(s) < len(first) + len(last) or not s.startswith(first) or not s.endswith(last):
            return False
        pos, end = len(first), len(s) - len(last)
        for mid in segs[1:-1]:
            at = s.find(mid, pos, end)
            if at < 0:
                return False
            pos = at + len(mid)
        return True


@lru_cache(maxsize=4096)
def _star_segments(p: tuple[tuple[str, bool], ...]) -> tuple[str, ...] | None:
    """The literal pieces of a glob that has no wildcard but ``*`` (None: it has ``?``, a
    bracket expression or a backslash, or text re2 would not take)."""
    segs = [""]
    for text, is_glob in p:
        if not is_glob:
            segs[-1] += text
            continue
        for ch in text:
            if ch == "*":
                segs.append("")
            elif ch in "?[\\":
                return None
            else:
                segs[-1] += ch
    if not all(seg.isascii() or not any("\ud800" <= c <= "\udfff" for c in seg) for seg in segs):
        return None  # re2_compile raises for these, as before
    return tuple(segs)
