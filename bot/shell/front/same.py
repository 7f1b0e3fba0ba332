"""Whether two parses of one script say the same thing: their statements compared with the
positions left out, so that comments, blank lines, indentation, the spacing between words and
line continuations do not count (what ``changelog-missing`` asks of a changed file).

Facts only; conservative where the IR does not keep what a change could touch: a script with
parse errors, a construct the front-end keeps opaque (``ir.Opaque``, compared by its source
bytes) or a here-document without its text (bashlex keeps none) is the same only when its bytes
are. The ``#!`` line is compared too (it picks the
interpreter).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.shell.ir import nodes as ir

_FIELDS: dict[type, tuple[str, ...]] = {}
UNKNOWN_LINE = 0  # they differ, and no line of the head says where


def first_difference(a: ir.Script, b: ir.Script) -> int | None:
    """None when ``a`` and ``b`` have the same statements; else the line of ``b`` where the first
    difference is (the innermost node with a position around it), or ``UNKNOWN_LINE``."""
    if a.errors or b.errors:
        return None if a.source == b.source else UNKNOWN_LINE
    if _shebang(a.source) != _shebang(b.source):
        return 1
    try:
        return _Compare(a.source, b.source).diff(a.body, b.body, UNKNOWN_LINE)
    except _NotInIR:  # a here-document whose text the front-end did not keep (bashlex): the bytes decide
        return None if a.source == b.source else UNKNOWN_LINE
    except RecursionError:  # nesting deeper than the walk: say they differ
        return UNKNOWN_LINE


class _NotInIR(Exception):
    pass


def _shebang(source: bytes) -> bytes:
    return source.split(b"\n", 1)[0].rstrip() if source.startswith(b"#!") else b""


def _names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name != "pos")
    return names


def _line(node: Any, default: int) -> int:
    pos = getattr(node, "pos", None)
    return pos.line if isinstance(pos, ir.Pos) and pos.line > 0 else default


class _Compare:
    def __init__(self, a_source: bytes, b_source: bytes) -> None:
        self.a_source = a_source
        self.b_source = b_source

    def diff(self, a: Any, b: Any, line: int) -> int | None:
        if a is b:
            return None
        cls = type(a)
        if cls is not type(b):
            return _line(b, line)
        if cls is tuple:
            for x, y in zip(a, b):
                found = self.diff(x, y, line)
                if found is not None:
                    return found
            if len(a) == len(b):
                return None
            return _line(b[len(a)], line) if len(b) > len(a) else (_line(b[-1], line) if b else line)
        if cls is ir.Opaque:  # what it holds is not in the IR: its source bytes decide
            text = _span(self.a_source, a.pos)
            same = a.kind == b.kind and text is not None and text == _span(self.b_source, b.pos)
            return None if same else _line(b, line)
        if cls is ir.Redirect and a.op in ("<<", "<<-") and (a.body is None or b.body is None):
            raise _NotInIR
        if dataclasses.is_dataclass(a):
            here = _line(b, line)
            for name in _names(cls):
                found = self.diff(getattr(a, name), getattr(b, name), here)
                if found is not None:
                    return found
            return None
        return None if a == b else line


def _span(source: bytes, pos: ir.Pos) -> bytes | None:
    if pos.start_byte < 0 or pos.end_byte < pos.start_byte:
        return None
    return source[pos.start_byte:pos.end_byte]
