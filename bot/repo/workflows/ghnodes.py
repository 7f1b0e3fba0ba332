"""The nodes of a GitHub Actions expression, and the walks over them (see bot.repo.workflows.ghexpr).

Every walk is iterative and visits a shared subtree once; a substitution whose result
would be deeper than MAX_DEPTH or larger than MAX_SIZE nodes becomes ``BAD``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeAlias, TypeVar, overload

MAX_EXPR = 10_000
MAX_NEST = 64
MAX_DEPTH = 200
MAX_SIZE = 100_000
MAX_JSON = 100_000


@dataclass(frozen=True)
class Lit:
    value: str | float | bool | None


@dataclass(frozen=True)
class Ref:
    path: tuple[str, ...]


@dataclass(frozen=True)
class Not:
    x: Node


@dataclass(frozen=True)
class Bin:
    op: str
    a: Node
    b: Node


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Node, ...]


Node: TypeAlias = Lit | Ref | Not | Bin | Call
Template: TypeAlias = tuple[str | Node, ...]
T = TypeVar("T")


class _Unknown:
    """The one UNKNOWN value (compare with ``is``)."""

    _it: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._it is None:
            cls._it = super().__new__(cls)
        return cls._it

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
BAD = Call("?", ())


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _index(base: Node, key: Node) -> Node:
    if isinstance(base, Ref) and isinstance(key, Lit) and not isinstance(key.value, bool) and key.value is not None:
        if isinstance(key.value, str):
            return Ref((*base.path, key.value))
        if key.value == key.value and key.value == int(key.value):
            return Ref((*base.path, str(int(key.value))))
    return Call("?", (base, key))


# ---------------------------------------------------------------------------- walking

def _kids(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Not):
        return (node.x,)
    if isinstance(node, Bin):
        return (node.a, node.b)
    if isinstance(node, Call):
        return node.args
    return ()


def fold(root: Node, f: Callable[[Node, list[T]], T]) -> T:
    """Post-order over the DAG without recursion; a shared subtree is folded once."""
    memo: dict[int, T] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in memo:
            continue
        kids = _kids(node)
        if ready or not kids:
            memo[id(node)] = f(node, [memo[id(k)] for k in kids])
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
    return memo[id(root)]


def _nodes(root: Node) -> Iterator[Node]:
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node
            stack.extend(_kids(node))


def _measure(node: Node) -> tuple[int, int]:
    """(depth, size counting shared subtrees every time), both capped."""
    def f(n: Node, kids: list[tuple[int, int]]) -> tuple[int, int]:
        return (1 + max((d for d, _ in kids), default=0), min(MAX_SIZE + 1, 1 + sum(s for _, s in kids)))
    return fold(node, f)


@overload
def substitute(x: Template, resolve: Callable[[tuple[str, ...]], Node | None]) -> Template: ...
@overload
def substitute(x: Node, resolve: Callable[[tuple[str, ...]], Node | None]) -> Node: ...


def substitute(x: Node | Template, resolve: Callable[[tuple[str, ...]], Node | None]) -> Node | Template:
    """Every Ref that ``resolve`` maps to a node, replaced by it (not re-resolved)."""
    if isinstance(x, tuple):
        return tuple(p if isinstance(p, str) else _subst(p, resolve) for p in x)
    return _subst(x, resolve)


def _subst(node: Node, resolve: Callable[[tuple[str, ...]], Node | None]) -> Node:
    def f(n: Node, kids: list[Node]) -> Node:
        if isinstance(n, Ref):
            got = resolve(n.path)
            return n if got is None else got
        if all(k is o for k, o in zip(kids, _kids(n))):
            return n
        if all(k == BAD for k in kids):  # unknowable in, unknowable out: a doubling chain stays small
            return BAD
        if isinstance(n, Not):
            return Not(kids[0])
        if isinstance(n, Bin):
            return Bin(n.op, kids[0], kids[1])
        assert isinstance(n, Call)
        return _index(kids[0], kids[1]) if n.name == "?" and len(kids) == 2 else Call(n.name, tuple(kids))

    out = fold(node, f)
    depth, size = _measure(out)
    return BAD if depth > MAX_DEPTH or size > MAX_SIZE else out


def refs(x: Node | Template) -> set[tuple[str, ...]]:
    """Every Ref path inside."""
    roots = [p for p in x if not isinstance(p, str)] if isinstance(x, tuple) else [x]
    return {n.path for r in roots for n in _nodes(r) if isinstance(n, Ref)}


def to_string(value: object) -> str | _Unknown:
    """How a value becomes env text (true/false, '' for null, numbers as the runner prints them)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return "" if value is None else "true" if value else "false"
    if isinstance(value, (int, float)):
        f = float(value)
        if f != f:
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return str(int(f)) if f == int(f) and abs(f) < 1e15 else "%.15G" % f
    return UNKNOWN



# ---------------------------------------------------------------------------- text

_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4}
_NAMES = {"tojson": "toJSON", "fromjson": "fromJSON", "startswith": "startsWith", "endswith": "endsWith",
          "hashfiles": "hashFiles"}


def _lit_text(v: str | float | bool | None) -> str:
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return "null" if v is None else "true" if v is True else "false" if v is False else str(to_string(v))


def _path_text(path: tuple[str, ...]) -> str:
    out = path[0] if path else ""
    for p in path[1:]:
        out += f".{p}" if p == "*" or _IDENT.fullmatch(p) else f"[{p}]" if p.isdigit() else f"[{_lit_text(p)}]"
    return out


def unparse(x: Node | Template) -> str:
    """A readable canonical form: ``a == 'x' && 'y' || 'z'``; a template keeps its ``${{ }}``."""
    if isinstance(x, tuple):
        return "".join(p if isinstance(p, str) else "${{ " + unparse(p) + " }}" for p in x)

    def f(n: Node, kids: list[tuple[str, int]]) -> tuple[str, int]:
        if isinstance(n, Lit):
            return _lit_text(n.value), 9
        if isinstance(n, Ref):
            return _path_text(n.path), 9
        if isinstance(n, Not):
            return "!" + (kids[0][0] if kids[0][1] >= 5 else f"({kids[0][0]})"), 5
        if isinstance(n, Bin):
            p = _PREC.get(n.op, 0)
            (a, pa), (b, pb) = kids
            a = a if pa >= p else f"({a})"
            b = b if pb > p or (pb == p and n.op in ("&&", "||")) else f"({b})"
            return f"{a} {n.op} {b}", p
        if n.name == "?":
            if len(kids) != 2:
                return "?", 9
            return (kids[0][0] if kids[0][1] >= 9 else f"({kids[0][0]})") + f"[{kids[1][0]}]", 9
        return f"{_NAMES.get(n.name, n.name)}({', '.join(k for k, _ in kids)})", 9

    return fold(x, f)[0]
