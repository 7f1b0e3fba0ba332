"""The one decoder of what benchbot reads back from its persistent cache (``bot.cache``).

A cache entry is input like any other: the folder can be shared, restored from a CI cache
another job saved, or edited by hand. So every reader decodes an entry here, as JSON values
only (nothing read back is ever run as code), within budgets checked before the decoder
recurses into it: at most ``max_bytes`` long and nested at most ``max_depth``
deep (Python's decoder recurses per level: a deep entry was a RecursionError, exit 3). An
entry over a budget, not JSON, or not of the shape the reader relies on raises ``Refused``
(a ValueError), which every reader treats as a miss: the value is computed again.

The shape helpers (``string``, ``integer``, ``array``...) check one decoded value each and
raise ``Refused`` too, so a reader's decoding is a sequence of checks, never a guess.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_BYTES = 64 << 20  # an entry's decoded text (bot.cache refuses a larger file before reading it)
MAX_DEPTH = 48  # the deepest entry benchbot writes nests 17 levels (an evaluation: a fixed structure)

_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')  # all but brackets and quotes
_STRING = re.compile(rb'"[^"]*"')  # a string once its escapes are gone


class Refused(ValueError):
    """An entry this code did not write: over a budget, not JSON, or of another shape."""


def depth_within(data: bytes, limit: int) -> bool:
    """Whether the JSON text ``data`` nests at most ``limit`` arrays and objects deep, in
    C-speed ``bytes`` operations and no recursion (a tenth of what decoding costs). Its
    structure is its brackets outside strings: drop the escapes that could hide a quote (``\\\\``
    then ``\\"``), keep only brackets and quotes, drop the strings (``""`` pairs first: the
    common case, then what is left between quotes), and each round removes the innermost
    bracket pairs. Text that is not balanced is refused too: it is not JSON anyone wrote."""
    if b'\\"' in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = data.translate(_BRACKETS, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = _STRING.sub(b"", skeleton)
    for _ in range(limit):
        if not skeleton:
            return True
        inner = skeleton.replace(b"[]", b"")
        if len(inner) == len(skeleton):
            return False
        skeleton = inner
    return not skeleton


def loads(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``data``, within the budgets; ``Refused`` otherwise."""
    if len(data) > max_bytes:
        raise Refused("the entry is larger than its budget")
    if not depth_within(data, max_depth):
        raise Refused("the entry nests deeper than its budget")
    try:
        return json.loads(data)
    except (ValueError, RecursionError, MemoryError) as e:  # UnicodeDecodeError is a ValueError
        raise Refused("the entry is not JSON") from e


# ------------------------------------------------------------------ shapes


def string(v: Any) -> str:
    if not isinstance(v, str):
        raise Refused("not a string")
    return v


def integer(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise Refused("not an integer")
    return v


def boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise Refused("not a boolean")
    return v


def array(v: Any, length: int | None = None) -> list[Any]:
    """A JSON array (of ``length`` items when given)."""
    if not isinstance(v, list) or (length is not None and len(v) != length):
        raise Refused("not an array" if length is None else f"not an array of {length}")
    return v


def obj(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise Refused("not an object")
    return v
