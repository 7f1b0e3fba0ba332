"""The fast validator only ever says "valid" where jsonschema does: over every config of
the fixtures and the example, and over random mutations of them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as s

from bot.repo.load import schema, yamlfile
from tests.conftest import EXAMPLE, FIXTURES

_DOCS: list[tuple[str, Any]] = []
for _p in sorted([*Path(FIXTURES).rglob("*master*.yaml"), *Path(EXAMPLE).rglob("*master*.yaml")])[:80]:
    _doc, _err = yamlfile.load(_p.read_text())
    if _err is None and _doc is not None:
        _DOCS.append(("master-config.schema.json", _doc))
for _p in sorted([*Path(FIXTURES).rglob("runners.yaml"), *Path(EXAMPLE).rglob("runners.yaml")])[:40]:
    _doc, _err = yamlfile.load(_p.read_text())
    if _err is None and _doc is not None:
        _DOCS.append(("runners.schema.json", _doc))


def _agree(name: str, doc: Any) -> None:
    fast = schema._fast(name)
    assert fast is not None
    slow = jsonschema.validators.validator_for(schema.load_schema(name))(schema.load_schema(name))
    try:
        fast(doc)
        fast_ok = True
    except Exception:  # noqa: BLE001 - any refusal sends the document to jsonschema
        fast_ok = False
    if fast_ok:
        assert slow.is_valid(doc), (name, list(slow.iter_errors(doc))[:1])
        assert schema.validate(doc, name) == []


def test_every_fixture_config() -> None:
    assert len(_DOCS) > 20
    for name, doc in _DOCS:
        _agree(name, doc)


_VALUES = s.one_of(s.none(), s.booleans(), s.integers(-3, 100), s.floats(allow_nan=False, width=32),
                   s.text(max_size=6), s.lists(s.integers(0, 9), max_size=3),
                   s.dictionaries(s.sampled_from(["tp", "ep", "x"]), s.integers(0, 9), max_size=2))


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _leaves(v, (*path, i))
    return out


@settings(max_examples=150, deadline=None)
@given(pick=s.integers(0, 10_000), where=s.integers(0, 10_000), value=_VALUES, drop=s.booleans())
def test_mutated_configs(pick: int, where: int, value: Any, drop: bool) -> None:
    name, doc = _DOCS[pick % len(_DOCS)]
    doc = copy.deepcopy(dict(doc))
    paths = [p for p in _leaves(doc) if p]
    path = paths[where % len(paths)]
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    _agree(name, doc)
