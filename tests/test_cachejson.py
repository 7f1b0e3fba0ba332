"""``bot.cachejson``: the one decoder of cache entries. JSON only, its depth measured before
Python's decoder recurses (exactly, strings and escapes included), its size bounded; what is
refused is a ``Refused`` (a ValueError), never a RecursionError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import cachejson
from bot.cachejson import Refused


def _depth(v: Any) -> int:
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    return 0


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n\u00e9\ud800'),
                     lambda inner: (st.lists(inner, max_size=4)
                                    | st.dictionaries(st.text('[]{}"\\x'), inner, max_size=4)),
                     max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_the_measured_depth_is_the_depth(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    depth = _depth(value)
    assert cachejson.depth_within(text, depth)
    assert not cachejson.depth_within(text, depth - 1) if depth else True


def test_brackets_in_strings_are_text() -> None:
    # each level holds a string of closing brackets: counted as brackets, the nesting would look flat
    text = json.dumps(json.loads('["]]]", ' * 60 + "1" + "]" * 60)).encode()
    assert not cachejson.depth_within(text, 59) and cachejson.depth_within(text, 60)
    assert cachejson.depth_within(json.dumps(["\\\"[[[[", {"k\"[": "\\"}]).encode(), 2)


@pytest.mark.parametrize("data", [b"[" * 100_000 + b"]" * 100_000, b"[" * 49 + b"]" * 49, b"[[]", b"[]]", b"{]"],
                         ids=["100000-deep", "49-deep", "unclosed", "unopened", "mismatched"])
def test_too_deep_or_unbalanced_is_refused(data: bytes) -> None:
    with pytest.raises(Refused):
        cachejson.loads(data)


@pytest.mark.parametrize("data", [b"", b"not json", b"\xff\xfe", b'{"a": 1', b"[1,]", b'"\\ud800"x'],
                         ids=["empty", "text", "not-utf-8", "cut-short", "trailing-comma", "trailing-text"])
def test_what_is_not_json_is_refused(data: bytes) -> None:
    with pytest.raises(Refused):
        cachejson.loads(data)


def test_a_large_entry_is_refused_before_it_is_decoded() -> None:
    data = json.dumps(["x" * 1000]).encode()
    assert cachejson.loads(data) == ["x" * 1000]
    with pytest.raises(Refused):
        cachejson.loads(data, max_bytes=len(data) - 1)


def test_within_the_budgets_it_is_json() -> None:
    nested: Any = "leaf"
    for _ in range(cachejson.MAX_DEPTH):
        nested = [nested]
    assert cachejson.loads(json.dumps(nested).encode()) == nested
    assert cachejson.loads(b'{"a": [1, 2.5, true, null, "\\u00e9"]}') == {"a": [1, 2.5, True, None, "\u00e9"]}


def test_shape_helpers() -> None:
    assert cachejson.string("s") == "s" and cachejson.integer(3) == 3 and cachejson.boolean(False) is False
    assert cachejson.array([1, 2], 2) == [1, 2] and cachejson.obj({"a": 1}) == {"a": 1}
    for check, bad in ((cachejson.string, 1), (cachejson.integer, True), (cachejson.integer, 1.0),
                       (cachejson.boolean, 0), (cachejson.array, {}), (cachejson.obj, [])):
        with pytest.raises(Refused):
            check(bad)
    with pytest.raises(Refused):
        cachejson.array([1], 2)
    assert issubclass(Refused, ValueError)
