"""Config files a server command names (vLLM ``--config F``, TRT-LLM ``--extra_llm_api_options F``).

The script wrote them before the command (``cat > F <<EOF``); the caller hands their text in
``files``. Here they are found and parsed with PyYAML; a missing file, unknown text or a
YAML error becomes a reason, never an exception. Whatever can be read is still read: a
value with MARK in it is None (and a reason), its siblings are kept.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from bot.repo.load import yamlfile
from bot.serve.argv import Builder, has_mark
from bot.serve.model import MARK, File, Tok


def find(path: str, files: Mapping[str, File] | None) -> File | None:
    """The file written at ``path`` (exact, then normalized, then by unique basename)."""
    if not files:
        return None
    if path in files:
        return files[path]
    norm = posixpath.normpath(path)
    for key, f in files.items():
        if posixpath.normpath(key) == norm:
            return f
    base = posixpath.basename(norm)
    hits = [f for key, f in files.items() if posixpath.basename(key) == base]
    return hits[0] if len(hits) == 1 else None


def load(b: Builder, flag: str, value: Tok, files: Mapping[str, File] | None) -> tuple[dict[str, Any], File | None]:
    """The top-level mapping of the YAML file named by ``value`` (``{}`` when unreadable)."""
    if not value.known:
        b.reason(f"{flag}: file name unknown ({MARK}) at {value.src}")
        return {}, None
    f = find(value.text, files)
    if f is None:
        b.reason(f"{flag} {value.text}: the file is not written by the script (at {value.src})")
        return {}, None
    if MARK in f.text:
        b.reason(f"{flag} {f.path}: part of the file is unknown ({MARK}), written at {f.src}")
    # the repo's own reader: libyaml's composer, and a budget on values (an alias bomb in a
    # heredoc is a reason, not a hang)
    data, err = yamlfile.load(f.text)
    if err is not None:
        b.reason(f"{flag} {f.path}: not YAML ({err.message}), written at {f.src}")
        return {}, f
    data = _plain(data)
    if data is None:
        return {}, f
    if not isinstance(data, dict):
        b.reason(f"{flag} {f.path}: not a YAML mapping, written at {f.src}")
        return {}, f
    return {str(k): v for k, v in data.items()}, f


def clean(b: Builder, dest: str, value: Any, f: File) -> Any:
    """``value`` with every MARK-bearing string replaced by None (one reason each)."""
    if isinstance(value, str):
        if MARK in value:
            b.reason(f"{dest}: value unknown ({MARK}) in {f.path}, written at {f.src}")
            return None
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            if has_mark(key):
                b.reason(f"{dest}: a key is unknown ({MARK}) in {f.path}, written at {f.src}")
                continue
            out[key] = clean(b, f"{dest}.{key}", v, f)
        return out
    if isinstance(value, list):
        return [clean(b, dest, v, f) for v in value]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return str(value)  # dates and other YAML types: their text


def _plain(v: Any) -> Any:
    """Plain dicts and lists (the reader's carry positions)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v
