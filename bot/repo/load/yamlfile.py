"""YAML with positions: PyYAML's C composer, nodes turned into dicts/lists that
remember where every key and value is (1-based line and column).

The composer gives a node graph in which an alias is the very node its anchor names.
Each node is converted once (aliases share the result, as PyYAML's own constructor does),
and the nodes a reader would visit, alias expansions included, are counted against a
budget (:data:`MAX_NODES`): a "billion laughs" document (a few lines of anchors whose
aliases multiply) is an error at the line where it blows up, found in time and memory
proportional to the text, not to the expansion. Nesting deeper than :data:`MAX_DEPTH`,
a recursive alias and a value no constructor accepts are errors too, never exceptions.
"""

from __future__ import annotations

import gc
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from bot.repo.files.parsed import shared
from bot.shell.ir.frozen import quick_init

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_NODES = 1_000_000  # nodes visited, alias expansions included
MAX_DEPTH = 200  # nested mappings/lists (libyaml itself stops at 1000)


_STR = "tag:yaml.org,2002:str"


@quick_init  # one per key and value: ``bot.shell.ir.frozen``
@dataclass(frozen=True, slots=True)
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
    blocks: set[str]  # keys whose value is a ``|`` or ``>`` block scalar (its text starts a line below)


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


class _Stop(Exception):
    """The document cannot be converted: a YamlError at a node."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.error = YamlError(message, node.start_mark.line + 1, node.start_mark.column + 1)


def load(text: str, max_nodes: int = MAX_NODES) -> tuple[Any, YamlError | None]:
    """Parse one YAML document; on error, the value is None and the error says where.

    The cyclic garbage collector is paused meanwhile: the nodes and values made here hold
    no cycles, and its passes over the growing heap made loading superlinear (4x slower on
    an 8 MB file).

    The result is shared by every load of the same text in this process (the head and base of
    a change, the commits of ``history``): readers never change it."""
    data = text.encode("utf-8", "surrogatepass")
    return shared(("yaml", hashlib.sha1(data).digest(), max_nodes), lambda: _paused(text, max_nodes), len(data))


def _paused(text: str, max_nodes: int) -> tuple[Any, YamlError | None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(text, max_nodes)
    finally:
        if collecting:
            gc.enable()


def _load(text: str, max_nodes: int) -> tuple[Any, YamlError | None]:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        return None, _composer_error(exc, text)
    except yaml.YAMLError as exc:
        return None, YamlError(str(exc).splitlines()[0], 1, 1)
    if node is None:
        return None, None
    try:
        return _Converter(max_nodes).convert(node, 0), None
    except _Stop as stop:
        return None, stop.error


def _composer_error(exc: yaml.MarkedYAMLError, text: str) -> YamlError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else 1
    col = mark.column + 1 if mark is not None else 1
    context = exc.context or ""
    if "duplicate anchor" in context and exc.context_mark is not None and exc.problem_mark is not None:
        name = _name_at(text, exc.problem_mark.line, exc.problem_mark.column, "&")
        first = exc.context_mark.line + 1
        return YamlError(f"the anchor {name or 'here'} is defined twice, at line {first} and again at line {line}; "
                         "rename one of them (YAML does not allow redefining an anchor here)", line, col)
    if (exc.problem or "").startswith("found undefined alias"):
        name = _name_at(text, line - 1, col - 1, "*")
        return YamlError(f"the alias {name or 'here'} names no anchor defined before it", line, col)
    what = exc.problem or str(exc)
    if context:
        what = f"{context}: {what}" if exc.problem else context
    return YamlError(_explain(what, text, line, col), line, col)


_ANCHOR_NAME = re.compile(r"[^\s,\[\]{}]{1,200}")


def _name_at(text: str, line: int, col: int, sigil: str) -> str:
    """``&name`` / ``*name`` at a 0-based position of the text ('' if it is not there)."""
    lines = text.split("\n", line + 1)
    if line >= len(lines):
        return ""
    rest = lines[line][col:]
    if not rest.startswith(sigil):
        return ""
    m = _ANCHOR_NAME.match(rest, 1)
    return sigil + m.group() if m else ""


def _explain(what: str, text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    if 0 < line <= len(lines):
        bad = [ch for ch in lines[line - 1] if ord(ch) > 127 and ch in "，：；、（）【】＂＇"]
        if bad:
            return f"{what} (full-width {bad[0]!r} U+{ord(bad[0]):04X} where ASCII punctuation is expected)"
    return what


class _Converter:
    """Nodes to YMap/YList/scalars, each collection once; ``visited`` counts alias expansions."""

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.c = _Constructor()
        self.done: dict[int, tuple[Any, int, int]] = {}  # id(node) -> (value, expanded size, height)
        self.stack: list[yaml.Node] = []  # the collections being converted, outermost first
        self.active: set[int] = set()
        self.visited = 0

    def _too_large(self) -> _Stop:
        at = self.stack[-1]  # the collection whose aliases pushed the count over
        return _Stop(f"document too large: more than {self.max_nodes:,} values once aliases are expanded "
                     f"(aliases of an anchor multiply, here at line {at.start_mark.line + 1})", at)

    def convert(self, node: yaml.Node, depth: int) -> Any:
        if isinstance(node, yaml.ScalarNode):
            self.visited += 1
            if self.visited > self.max_nodes:
                raise self._too_large()
            return self._scalar(node)
        key = id(node)
        found = self.done.get(key)
        if found is not None:  # an alias: the shared value, its nodes counted again
            value, size, height = found
            if depth + height > MAX_DEPTH:
                raise _Stop(f"document nests too deeply (more than {MAX_DEPTH} levels, through an alias)",
                            self.stack[-1] if self.stack else node)
            self.visited += size
            if self.visited > self.max_nodes:
                raise self._too_large()
            return value
        if key in self.active:
            raise _Stop("recursive alias: an anchor is used inside its own value", node)
        if depth > MAX_DEPTH:
            raise _Stop(f"document nests too deeply (more than {MAX_DEPTH} levels)", node)
        before = self.visited
        self.visited += 1
        self.active.add(key)
        self.stack.append(node)
        if isinstance(node, yaml.MappingNode):
            value, height = self._mapping(node, depth)
        elif isinstance(node, yaml.SequenceNode):
            value, height = self._sequence(node, depth)
        else:  # pragma: no cover - the composer makes only these three kinds
            raise _Stop(f"unexpected YAML node {type(node).__name__}", node)
        self.stack.pop()
        self.active.discard(key)
        self.done[key] = (value, self.visited - before, height)
        return value

    def _height(self, node: yaml.Node) -> int:
        found = self.done.get(id(node))
        return found[2] if found is not None else 0

    def _mapping(self, node: yaml.MappingNode, depth: int) -> tuple[YMap, int]:
        out = YMap()
        out.pos = _mark(node)
        out.key_pos = {}
        out.val_pos = {}
        out.duplicates = []
        out.blocks = set()
        height = 0
        for k_node, v_node in node.value:
            if k_node.tag == "tag:yaml.org,2002:merge":
                merged = self.convert(v_node, depth + 1)
                height = max(height, self._height(v_node) + 1)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, YMap):
                        self.visited += len(m)
                        if self.visited > self.max_nodes:
                            raise self._too_large()
                        for k, v in m.items():
                            if k not in out:
                                out[k] = v
                                out.key_pos[k] = m.key_pos.get(k, out.pos)
                                out.val_pos[k] = m.val_pos.get(k, out.pos)
                                if k in m.blocks:
                                    out.blocks.add(k)
                continue
            key = self.convert(k_node, depth + 1)
            key = key if isinstance(key, str) else str(key)
            if key in out.key_pos:
                out.duplicates.append((key, out.key_pos[key]))  # the earlier one, which is dropped
            out[key] = self.convert(v_node, depth + 1)
            out.key_pos[key] = _mark(k_node)
            out.val_pos[key] = _mark(v_node)
            if isinstance(v_node, yaml.ScalarNode) and v_node.style in ("|", ">"):
                out.blocks.add(key)
            if not isinstance(v_node, yaml.ScalarNode) or not isinstance(k_node, yaml.ScalarNode):
                height = max(height, self._height(k_node), self._height(v_node))
        return out, height + 1

    def _sequence(self, node: yaml.SequenceNode, depth: int) -> tuple[YList, int]:
        lst = YList(self.convert(n, depth + 1) for n in node.value)
        lst.pos = _mark(node)
        lst.item_pos = [_mark(n) for n in node.value]
        return lst, 1 + max((self._height(n) for n in node.value if not isinstance(n, yaml.ScalarNode)), default=0)

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR:  # most scalars: the constructor would return the text as it is
            return node.value
        try:
            return self.c.construct_object(node, deep=True)
        except yaml.YAMLError as exc:  # an unknown tag
            raise _Stop(str(exc).splitlines()[0], node) from None
        except (ValueError, OverflowError, TypeError) as exc:  # 2001-13-45, an int of 5,000 digits
            raise _Stop(f"invalid {node.tag.rsplit(':', 1)[-1]} value: {str(exc)[:120]}", node) from None


def pos_of(obj: Any, key: str | int | None = None, default: Mark = Mark(1, 1)) -> Mark:
    """Position of a key's value (mapping), an item (list) or the object itself."""
    if key is None:
        return getattr(obj, "pos", default)
    if isinstance(obj, YMap) and isinstance(key, str):
        return obj.val_pos.get(key, obj.pos)
    if isinstance(obj, YList) and isinstance(key, int) and 0 <= key < len(obj.item_pos):
        return obj.item_pos[key]
    return getattr(obj, "pos", default)


def text_line(obj: Any, key: str) -> int:
    """The line a string value's text starts on: the value's own line, or the next one
    for a ``|``/``>`` block scalar."""
    return pos_of(obj, key).line + (1 if key in getattr(obj, "blocks", ()) else 0)


def key_pos(obj: Any, key: str) -> Mark:
    if isinstance(obj, YMap):
        return obj.key_pos.get(key, obj.pos)
    return getattr(obj, "pos", Mark(1, 1))
