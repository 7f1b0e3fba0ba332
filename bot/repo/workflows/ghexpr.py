"""GitHub Actions expressions (``${{ ... }}``), symbolically: parse, substitute, evaluate.

A YAML string value is a :data:`Template`: literal text and one :data:`Node` per
``${{ }}``. References are :class:`Ref` paths (``matrix.config['queue-token']`` and
``matrix.config.queue-token`` are both ``("matrix", "config", "queue-token")``; ``a[0]``
gives ``"0"``; the ``*`` filter stays in the path as ``"*"`` and evaluates to UNKNOWN).
An index that is not a literal, or an access on something that is not a reference
(``fromJSON(x).y``), is ``Call("?", (base, key))``; ``Call("?", ())`` is a value nobody
can know (a malformed expression, or one set at run time). Names keep the case they are
written in (GitHub matches context and property names case-insensitively; callers that
look names up should too).

Evaluation follows the runner's rules: ``==`` and ordering coerce differing primitive
kinds to numbers (null and false are 0, '' is 0, a non-number string is NaN), strings
compare case-insensitively, ``&&``/``||`` return an operand, UNKNOWN spreads only where
the result depends on it. Numbers are floats; to_string prints them as the runner does
(G15: ``1.0`` -> ``1``). Budgets: an expression over MAX_EXPR characters or nested deeper
than MAX_NEST is one unknown part and a parse_errors message; every walk is iterative and
visits a shared subtree once, and a substitution whose result would be deeper than
MAX_DEPTH or larger than MAX_SIZE nodes (a chain of env layers doubling a value) becomes
``Call("?", ())``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from bot.repo.workflows.ghnodes import (
    BAD,
    MAX_DEPTH,
    MAX_EXPR,
    MAX_JSON,
    MAX_NEST,
    MAX_SIZE,
    UNKNOWN,
    Bin,
    Call,
    Lit,
    Node,
    Not,
    Ref,
    Template,
    _Unknown,
    fold,
    refs,
    substitute,
    to_string,
    unparse,
)
from bot.repo.workflows.ghparse import _parse_number, parse_errors, parse_template

__all__ = ["BAD", "MAX_DEPTH", "MAX_EXPR", "MAX_JSON", "MAX_NEST", "MAX_SIZE", "UNKNOWN", "Bin", "Call", "Lit",
           "Node", "Not", "Ref", "Template", "evaluate", "evaluate_template", "parse_errors", "parse_template",
           "parts_of", "refs", "substitute", "to_string", "unparse"]


# ---------------------------------------------------------------------------- values

def _norm(v: object) -> object:
    return float(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _truthy(v: object) -> bool:
    if v is None or isinstance(v, bool):
        return bool(v)
    if isinstance(v, float):
        return v == v and v != 0
    return v != "" if isinstance(v, str) else True


def _kind(v: object) -> str:
    return ("null" if v is None else "bool" if isinstance(v, bool) else "num" if isinstance(v, float)
            else "str" if isinstance(v, str) else "obj")


def _coerce(a: object, b: object) -> tuple[str, object, object]:
    """The runner's CoerceTypes: differing primitives meet as numbers (bool and null first)."""
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        return ka, a, b
    if {ka, kb} == {"num", "str"}:
        return "num", _to_num(a), _to_num(b)
    if ka in ("bool", "null"):
        return _coerce(_to_num(a), b)
    if kb in ("bool", "null"):
        return _coerce(a, _to_num(b))
    return "mixed", a, b


def _to_num(v: object) -> float:
    if v is None or isinstance(v, bool):
        return float(bool(v))
    return v if isinstance(v, float) else _parse_number(v) if isinstance(v, str) else math.nan


def _compare(op: str, a: object, b: object) -> bool:
    kind, x, y = _coerce(a, b)
    if kind == "str":
        x, y = str(x).upper(), str(y).upper()
    elif kind == "bool":
        x, y = float(bool(x)), float(bool(y))
    eq: bool = {"null": True, "obj": x is y, "mixed": False}.get(kind, x == y)
    if op in ("==", "!="):
        return eq == (op == "==")
    if kind not in ("num", "str", "bool"):
        return eq and op in ("<=", ">=")
    lt: bool = x < y  # type: ignore[operator]
    gt: bool = x > y  # type: ignore[operator]
    return {"<": lt, "<=": lt or eq, ">": gt, ">=": gt or eq}[op]


def _format(fmt: str, args: list[object]) -> str | _Unknown:
    out, i, n = [], 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c in "{}" and fmt.startswith(c * 2, i):
            out.append(c)
            i += 2
        elif c == "}":
            return UNKNOWN
        elif c == "{":
            j = fmt.find("}", i)
            if j < 0 or not fmt[i + 1:j].isdigit() or not fmt[i + 1:j].isascii() or int(fmt[i + 1:j]) >= len(args):
                return UNKNOWN
            text = to_string(args[int(fmt[i + 1:j])])
            if text is UNKNOWN:
                return UNKNOWN
            out.append(str(text))
            i = j + 1
        else:
            j = min((k for k in (fmt.find("{", i), fmt.find("}", i)) if k >= 0), default=n)
            out.append(fmt[i:j])
            i = j
    return "".join(out)


def _function(name: str, args: list[object]) -> object:
    if name == "format" and args and args[0] is not UNKNOWN:
        fmt = to_string(args[0])
        return UNKNOWN if fmt is UNKNOWN else _format(str(fmt), args[1:])
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    if name in ("contains", "startswith", "endswith") and len(args) == 2:
        hay, needle = args
        if name == "contains" and isinstance(hay, list):
            return any(_compare("==", _norm(x), needle) for x in hay)
        h, s = to_string(hay), to_string(needle)
        if h is UNKNOWN or s is UNKNOWN:
            return UNKNOWN
        h, s = str(h).upper(), str(s).upper()
        return s in h if name == "contains" else h.startswith(s) if name == "startswith" else h.endswith(s)
    if name == "tojson" and len(args) == 1 and _kind(args[0]) != "obj":
        v = args[0]
        return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else "null" if v is None else to_string(v)
    if name == "fromjson" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) <= MAX_JSON:
        try:
            return _norm(json.loads(args[0]))
        except (ValueError, RecursionError):
            return UNKNOWN
    return UNKNOWN  # join, hashFiles, success(), always(), ...: not known before the run


def _member(base: object, key: object) -> object:
    if isinstance(base, dict) and isinstance(key, str):
        return _norm(next((v for k, v in base.items() if k.upper() == key.upper()), None))
    if isinstance(base, list) and isinstance(key, float) and key == key:
        return _norm(base[int(key)]) if 0 <= key < len(base) else None
    return UNKNOWN


def evaluate(node: Node, lookup: Callable[[tuple[str, ...]], object]) -> object:
    """The node's value under ``lookup`` (str | float | bool | None | list | dict | UNKNOWN)."""
    def f(n: Node, kids: list[object]) -> object:
        if isinstance(n, Lit):
            return _norm(n.value)
        if isinstance(n, Ref):
            return UNKNOWN if "*" in n.path else _norm(lookup(n.path))
        if isinstance(n, Not):
            return UNKNOWN if kids[0] is UNKNOWN else not _truthy(kids[0])
        if isinstance(n, Bin):
            a, b = kids
            if n.op in ("&&", "||"):
                if a is UNKNOWN:
                    return UNKNOWN
                return a if _truthy(a) == (n.op == "||") else b
            return UNKNOWN if a is UNKNOWN or b is UNKNOWN else _compare(n.op, a, b)
        assert isinstance(n, Call)
        if n.name == "?" and len(kids) == 2:
            base, key = n.args
            if isinstance(base, Ref) and isinstance(kids[1], (str, float)) and "*" not in base.path:
                return _norm(lookup((*base.path, to_string(kids[1]))))  # type: ignore[arg-type]
            return UNKNOWN if any(k is UNKNOWN for k in kids) else _member(kids[0], kids[1])
        return UNKNOWN if n.name == "?" else _function(n.name, kids)

    return fold(node, f)


def evaluate_template(t: Template, lookup: Callable[[tuple[str, ...]], object]) -> str | _Unknown:
    """The template's text, or UNKNOWN when any part is unknown."""
    parts = parts_of(t, lookup)
    if any(p is UNKNOWN for p in parts):
        return UNKNOWN
    return "".join(p for p in parts if isinstance(p, str))


def parts_of(t: Template, lookup: Callable[[tuple[str, ...]], object]) -> list[str | _Unknown]:
    """Each part's text (or UNKNOWN), in order."""
    return [p if isinstance(p, str) else to_string(evaluate(p, lookup)) for p in t]
