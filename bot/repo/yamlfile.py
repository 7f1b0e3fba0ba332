"""YAML with positions: PyYAML's C composer, nodes turned into dicts/lists that
remember where every key and value is (1-based line and column)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


@dataclass(frozen=True)
class Mark:
    line: int
    col: int


class YMap(dict[str, Any]):
    """A mapping with the position of the mapping, of each key and of each value.

    ``duplicates`` lists (key, position) for every occurrence of a repeated key that YAML
    drops (PyYAML keeps the last one, whose position is in ``key_pos``).
    """

    pos: Mark
    key_pos: dict[str, Mark]
    val_pos: dict[str, Mark]
    duplicates: list[tuple[str, Mark]]


class YList(list[Any]):
    pos: Mark
    item_pos: list[Mark]


@dataclass(frozen=True)
class YamlError:
    message: str
    line: int
    col: int


def _mark(node: yaml.Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


class _Constructor(SafeConstructor):
    pass


def load(text: str) -> tuple[Any, YamlError | None]:
    """Parse one YAML document; on error, the value is None and the error says where."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        col = mark.column + 1 if mark is not None else 1
        what = exc.problem or str(exc)
        if exc.context:
            what = f"{exc.context}: {what}" if exc.problem else exc.context
        return None, YamlError(_explain(what, text, line, col), line, col)
    except yaml.YAMLError as exc:
        return None, YamlError(str(exc).splitlines()[0], 1, 1)
    if node is None:
        return None, None
    try:
        return _convert(node, _Constructor()), None
    except yaml.YAMLError as exc:  # bad scalar (e.g. an invalid timestamp)
        mark = getattr(exc, "problem_mark", None)
        return None, YamlError(str(exc).splitlines()[0], (mark.line + 1) if mark else 1,
                               (mark.column + 1) if mark else 1)
    except RecursionError:
        return None, YamlError("document nests too deeply", 1, 1)


def _explain(what: str, text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    if 0 < line <= len(lines):
        bad = [ch for ch in lines[line - 1] if ord(ch) > 127 and ch in "，：；、（）【】＂＇"]
        if bad:
            return f"{what} (full-width {bad[0]!r} U+{ord(bad[0]):04X} where ASCII punctuation is expected)"
    return what


def _convert(node: yaml.Node, c: SafeConstructor, depth: int = 0) -> Any:
    if depth > 200:
        raise RecursionError
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.pos = _mark(node)
        out.key_pos = {}
        out.val_pos = {}
        out.duplicates = []
        for k_node, v_node in node.value:
            if k_node.tag == "tag:yaml.org,2002:merge":
                merged = _convert(v_node, c, depth + 1)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, YMap):
                        for k, v in m.items():
                            if k not in out:
                                out[k] = v
                                out.key_pos[k] = m.key_pos.get(k, out.pos)
                                out.val_pos[k] = m.val_pos.get(k, out.pos)
                continue
            key = _convert(k_node, c, depth + 1)
            key = key if isinstance(key, str) else str(key)
            if key in out.key_pos:
                out.duplicates.append((key, out.key_pos[key]))  # the earlier one, which is dropped
            out[key] = _convert(v_node, c, depth + 1)
            out.key_pos[key] = _mark(k_node)
            out.val_pos[key] = _mark(v_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        lst = YList(_convert(n, c, depth + 1) for n in node.value)
        lst.pos = _mark(node)
        lst.item_pos = [_mark(n) for n in node.value]
        return lst
    return c.construct_object(node, deep=True)


def pos_of(obj: Any, key: str | int | None = None, default: Mark = Mark(1, 1)) -> Mark:
    """Position of a key's value (mapping), an item (list) or the object itself."""
    if key is None:
        return getattr(obj, "pos", default)
    if isinstance(obj, YMap) and isinstance(key, str):
        return obj.val_pos.get(key, obj.pos)
    if isinstance(obj, YList) and isinstance(key, int) and 0 <= key < len(obj.item_pos):
        return obj.item_pos[key]
    return getattr(obj, "pos", default)


def key_pos(obj: Any, key: str) -> Mark:
    if isinstance(obj, YMap):
        return obj.key_pos.get(key, obj.pos)
    return getattr(obj, "pos", Mark(1, 1))
