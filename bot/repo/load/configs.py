"""Master config entries and the runner label map, as typed facts with positions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.repo.files.tree import Tree
from bot.repo.load.recover import Broken, recover
from bot.repo.load.yamlfile import Mark, YamlError, YList, YMap, key_pos, load, pos_of

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"


@dataclass(frozen=True)
class Point:
    """One search-space item of an entry, with the scenario block it sits in."""

    fields: Mapping[str, Any]
    pos: Mark
    scenario: str  # "fixed-seq-len" or "agentic-coding"
    seq: Mapping[str, Any]  # the block holding isl/osl or trace-source

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    @property
    def spec_decoding(self) -> str:
        value = self.fields.get("spec-decoding", "none")
        return str(value) if value is not None else "none"


@dataclass(frozen=True)
class Entry:
    name: str
    path: str
    pos: Mark  # of the entry's key
    fields: Mapping[str, Any]
    points: tuple[Point, ...]

    def field_pos(self, key: str) -> Mark:
        return pos_of(self.fields, key, self.pos)

    @property
    def runner(self) -> str | None:
        r = self.fields.get("runner")
        return str(r) if isinstance(r, (str, int, float)) else None

    @property
    def multinode(self) -> bool:
        return self.fields.get("multinode") is True


@dataclass
class ConfigFile:
    """A master config. ``error``: the file could not be read at all (no entry of it is here).
    ``broken``: it did not load whole, but its other top-level blocks did (``bot.repo.load.recover``):
    ``error`` is None, ``data`` and ``entries`` hold what loaded, at its positions in the file."""

    path: str
    entries: list[Entry] = field(default_factory=list)
    error: YamlError | None = None
    data: Any = None  # the whole document (YMap/YList tree), for schema checks
    broken: tuple[Broken, ...] = ()


def load_config(tree: Tree, path: str) -> ConfigFile:
    text = tree.text(path)
    if text is None:
        return ConfigFile(path, error=YamlError(tree.problem(path) or "unreadable", 1, 1))
    data, err = load(text)
    broken: tuple[Broken, ...] = ()
    if err is not None:  # read the entries that do load
        rec = recover(text)
        if rec is None:
            return ConfigFile(path, error=err)
        data, broken = rec.data, rec.broken
    out = ConfigFile(path, data=data, broken=broken)
    if not isinstance(data, YMap):
        return out
    for name, body in data.items():
        if not isinstance(body, YMap):
            continue
        out.entries.append(Entry(str(name), path, key_pos(data, name), body, tuple(_points(body))))
    return out


# Entry fields that hold the points (read by ``_points``), not settings of the entry itself
POINT_BLOCKS = frozenset({"scenarios", "seq-len-configs"})


def _points(body: YMap) -> list[Point]:
    out: list[Point] = []
    scenarios = body.get("scenarios")
    blocks: list[tuple[str, Any]] = []
    if isinstance(scenarios, YMap):
        blocks = [(str(k), v) for k, v in scenarios.items()]
    elif isinstance(body.get("seq-len-configs"), YList):
        blocks = [(FIXED, body["seq-len-configs"])]
    for scenario, items in blocks:
        if not isinstance(items, YList):
            continue
        for seq in items:
            if not isinstance(seq, YMap):
                continue
            space = seq.get("search-space")
            if not isinstance(space, YList):
                continue
            for i, item in enumerate(space):
                if isinstance(item, YMap):
                    out.append(Point(item, pos_of(space, i), scenario, seq))
    return out


@dataclass
class Runners:
    """Runner label -> runner (node) names, from runners.yaml (either format)."""

    path: str | None
    labels: dict[str, list[str]] = field(default_factory=dict)
    label_pos: dict[str, Mark] = field(default_factory=dict)
    node_pos: dict[tuple[str, int], Mark] = field(default_factory=dict)
    error: YamlError | None = None
    data: Any = None
    # set with ``error`` when the file did not load whole but other labels did: ``labels`` and
    # ``data`` hold those (``bot.repo.load.recover``)
    broken: tuple[Broken, ...] = ()

    def nodes(self) -> list[tuple[str, str, Mark]]:
        """(label, node, position) for every node, in file order."""
        out = []
        for label, nodes in self.labels.items():
            for i, node in enumerate(nodes):
                out.append((label, node, self.node_pos.get((label, i), self.label_pos.get(label, Mark(1, 1)))))
        return out


def load_runners(tree: Tree, candidates: list[str]) -> Runners:
    for path in candidates:
        if tree.is_file(path):
            break
    else:
        return Runners(None)
    text = tree.text(path)
    if text is None:
        return Runners(path, error=YamlError(tree.problem(path) or "unreadable", 1, 1))
    data, err = load(text)
    out = Runners(path, error=err, data=data)
    if err is not None:
        rec = recover(text, nested="labels")  # the labels that do load still route entries
        if rec is None:
            return out
        data = out.data = rec.data
        out.broken = rec.broken
    if not isinstance(data, YMap):
        return out
    labels = data.get("labels")
    table: YMap = labels if isinstance(labels, YMap) else data
    for label, nodes in table.items():
        if not isinstance(nodes, YList):
            continue
        out.labels[str(label)] = [str(n) for n in nodes]
        out.label_pos[str(label)] = key_pos(table, label)
        for i in range(len(nodes)):
            out.node_pos[(str(label), i)] = pos_of(nodes, i)
    return out
