"""Byte-preserving edits of YAML values for fixes.

A YAML fix replaces one scalar token at the position PyYAML's composer reported, in the same
quote style, and nothing else. It is checked token by token: the old token must load as the
value the document has there, the new one as the new value, and a plain token is used only
where it cannot change the structure (block context, no indicator characters); otherwise
the value is quoted. (ruamel.yaml's round-trip dump would be the other way, but it rewrites
flow mappings: on a 10,000-line InferenceX master config one changed value made a 993-line
diff, and it takes 3 s; reloading the whole file to check one token costs 0.3 s per file.)
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from bot.repo.load.yamlfile import Mark

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


def _render(old_token: str, value: str, flow: bool) -> str:
    if old_token.startswith("'"):
        return "'" + value.replace("'", "''") + "'"
    if old_token.startswith('"') or flow or not _PLAIN.fullmatch(value) or value.startswith(("@", "-", ":")):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def _scalar(token: str) -> Any:
    try:
        return yaml.load(token, Loader=_LOADER)
    except yaml.YAMLError:
        return _BAD


_BAD = object()
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def replace_scalars(text: str, targets: list[tuple[str, str, Mark]], value: str,
                    old_value: Any = None) -> str | None:
    """The text with the scalar tokens at the marks replaced by ``value``; ``targets`` are
    (top-level key, field, mark of the value) and ``old_value`` what the document holds
    there. None when a token is not a simple scalar of that value."""
    lines = text.splitlines(keepends=True)
    for _, _, mark in sorted(targets, key=lambda t: (t[2].line, -t[2].col)):
        if not 0 < mark.line <= len(lines):
            return None
        line = lines[mark.line - 1]
        start = mark.col - 1
        end = _scalar_end(line, start)
        if end is None:
            return None
        old_token = line[start:end]
        if old_value is not None and _scalar(old_token) != old_value:
            return None
        flow = "{" in line[:start] or "[" in line[:start]
        new_token = _render(old_token, value, flow)
        if _scalar(new_token) != value:
            return None
        lines[mark.line - 1] = line[:start] + new_token + line[end:]
    return "".join(lines)
