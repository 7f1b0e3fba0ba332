"""``frozen.quick_init``: the cheaper ``__init__`` behaves as the dataclass's own."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as s

from bot.repo.load import yamlfile
from bot.shell.evaluator import state
from bot.shell.front import parse
from bot.shell.ir import nodes as ir
from bot.shell.ir.frozen import quick_init
from bot.shell.ir.values import _glob_regex, match, re2_compile
from tests.conftest import FIXTURES


def _twins(slots: bool) -> tuple[type, type]:
    def make() -> type:
        @dataclass(frozen=True, slots=slots)
        class Node:
            name: str
            count: int = 0
            tags: tuple[str, ...] = field(default_factory=tuple)
            seen: list[int] = field(default_factory=list)
            note: str = field(default="n", init=False)
        return Node
    return make(), quick_init(make())


@pytest.mark.parametrize("slots", [True, False])
@pytest.mark.parametrize("args,kwargs", [(("a",), {}), (("a", 3), {}), (("a",), {"tags": ("x",)}),
                                         ((), {"name": "b", "count": 2, "seen": [1]}), (("a", 1, ("t",), [2]), {})])
def test_quick_init_builds_what_the_dataclass_builds(slots: bool, args: tuple[object, ...],
                                                     kwargs: dict[str, object]) -> None:
    plain, quick = _twins(slots)
    assert quick.__init__ is not plain.__init__
    a, b = plain(*args, **kwargs), quick(*args, **kwargs)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert repr(a).replace("Node", "") == repr(b).replace("Node", "")
    assert b == quick(*args, **kwargs) and hash(b.tags) == hash(a.tags)
    assert dataclasses.replace(b, count=9).count == 9 and dataclasses.replace(b, count=9).name == b.name
    with pytest.raises(FrozenInstanceError):
        b.count = 5  # type: ignore[misc]
    if "seen" not in kwargs and len(args) < 4:
        assert quick("z").seen is not quick("z").seen  # a fresh default per instance
    with pytest.raises(TypeError):
        quick()  # a field without a default stays required


def test_quick_init_refuses_what_it_does_not_model() -> None:
    @dataclass
    class Mutable:
        x: int

    @dataclass(frozen=True, kw_only=True)
    class KwOnly:
        x: int

    for cls in (Mutable, KwOnly):
        with pytest.raises(TypeError):
            quick_init(cls)


def test_post_init_still_runs() -> None:
    calls: list[int] = []

    @quick_init
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            calls.append(self.x)

    Checked(4)
    assert calls == [4]


def _nodes(root: object) -> list[object]:
    out, stack = [], [root]
    while stack:
        obj = stack.pop()
        if isinstance(obj, tuple):
            stack.extend(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            out.append(obj)
            stack.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
    return out


def test_every_parsed_node_rebuilds_equal_from_its_fields() -> None:
    """Each IR class's init stores every field: rebuilding a node from its own fields
    (which calls the replaced ``__init__``) gives an equal node, over every fixture script."""
    seen: set[type] = set()
    for path in sorted(Path(FIXTURES).rglob("*.sh"))[:400]:
        for node in _nodes(parse.parse(str(path), path.read_bytes())):
            rebuilt = type(node)(*(getattr(node, f.name) for f in dataclasses.fields(node)))  # type: ignore[arg-type]
            assert rebuilt == node and hash(rebuilt) == hash(node)
            seen.add(type(node))
    assert {ir.Pos, ir.Word, ir.Lit, ir.Param, ir.Command, ir.If, ir.Assign, ir.Script} <= seen


def test_the_hot_classes_use_it() -> None:
    for cls in (ir.Pos, ir.Word, ir.Command, state.Loc, state.Read, state.Var, yamlfile.Mark):
        names = cls.__init__.__code__.co_names  # the generated init stores through these
        assert "_set" in names or any(n.startswith("_s_") for n in names), cls
    assert not hasattr(ir.Pos(1, 1), "__dict__")  # slotted: no dict per position


# --------------------------------------------------------- the literal fast path of match

_TEXT = s.text(alphabet=s.sampled_from("ab.+()|^$\\{}-_/ 1é"), max_size=8)


@given(subject=_TEXT, pattern=_TEXT, quoted=s.booleans())
def test_a_pattern_without_wildcards_matches_as_its_regex_would(subject: str, pattern: str, quoted: bool) -> None:
    if not quoted and "\\" in pattern:
        pattern = pattern.replace("\\", "")
    pat = ((pattern, not quoted),)
    rx = re2_compile(_glob_regex(pat))
    assert rx is not None
    assert match((subject,) if subject else (), pat) is (rx.fullmatch(subject) is not None)
