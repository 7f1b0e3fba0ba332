"""Byte-preserving edits of YAML values for fixes.

A YAML fix replaces one scalar at the position PyYAML's composer reported, keeping its quote
style, and is then verified by loading the edited text: the document must equal the old one
with exactly those values changed. (ruamel.yaml's round-trip dump would be the other way, but
it rewrites flow mappings: on a 10,000-line InferenceX master config one changed value made
a 993-line diff, and it takes 3 s.)
"""

from __future__ import annotations

import copy
import re
from typing import Any

from bot.repo.yamlfile import Mark, load

_PLAIN = re.compile(r"[A-Za-z0-9_.:/@+-]+")


def _scalar_end(line: str, start: int) -> int | None:
    """The end (exclusive) of the scalar token that starts at ``start`` in ``line``."""
    if start >= len(line):
        return None
    quote = line[start]
    if quote == "'":
        i = start + 1
        while i < len(line):
            if line[i] == "'":
                if line[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return None
    if quote == '"':
        i = start + 1
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                return i + 1
            i += 1
        return None
    m = _PLAIN.match(line, start)
    return m.end() if m else None


def _render(old_token: str, value: str) -> str | None:
    if old_token.startswith("'"):
        return "'" + value.replace("'", "''") + "'"
    if old_token.startswith('"'):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value if _PLAIN.fullmatch(value) and not value.startswith(("@", "-", ":")) else '"' + value + '"'


def replace_scalars(text: str, targets: list[tuple[str, str, Mark]], value: str,
                    old_data: Any = None) -> str | None:
    """The text with the scalar values at the marks replaced by ``value``; ``targets`` are
    (top-level key, field, mark of the value); ``old_data``: the document as already loaded
    from ``text``, if at hand. None when a value is not a simple scalar
    or the reloaded document differs in anything but those values."""
    lines = text.splitlines(keepends=True)
    for _, _, mark in sorted(targets, key=lambda t: (t[2].line, -t[2].col)):
        if not 0 < mark.line <= len(lines):
            return None
        line = lines[mark.line - 1]
        start = mark.col - 1
        end = _scalar_end(line, start)
        if end is None:
            return None
        new_token = _render(line[start:end], value)
        if new_token is None:
            return None
        lines[mark.line - 1] = line[:start] + new_token + line[end:]
    new_text = "".join(lines)
    err = None
    if old_data is None:
        old_data, err = load(text)
    new_data, err2 = load(new_text)
    if err is not None or err2 is not None or not isinstance(old_data, dict):
        return None
    want: Any = copy.deepcopy(_plain(old_data))
    for name, key, _ in targets:
        if not isinstance(want.get(name), dict):
            return None
        want[name][key] = value
    return new_text if _plain(new_data) == want else None


def _plain(data: Any) -> Any:
    """The document as plain dicts and lists (no positions)."""
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    return data
