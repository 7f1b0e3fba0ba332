"""Where a benchmark script may switch speculative decoding by a variable: read from its text.

``switches(script)`` finds the conditionals (``if``, ``case``, ``[ ... ] && X=...``) of a
parsed script, functions of the same file included, that test a variable and have a branch
whose text holds a speculative setting (``--speculative-config``, ``SPEC_ARGS``,
``decoding_type``...). The spec view (``bot.launches.specview``) evaluates the points of a
group one by one only for scripts with such a switch on a variable that differs between
them (``case "$CONC"``, ``if [ "$TP" -gt 4 ]``, ``EVAL_ONLY``); every other script is
evaluated once per group, as lint evaluates launchers. Facts only, no judgement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from bot.shell.ir import nodes as ir

# Text that sets or names a speculative setting in a script (a flag, a config key, a variable).
# Upper-case names count as a variable read (``$SPEC_ARGS``) or set (``MTP=3``), not in prose.
SPEC_TEXT = re.compile(
    r"speculative|decoding_type|nextn|max_draft_len|draft[-_]?model|--method\b|num[-_]spec"
    r"|\$\{?[A-Z0-9_]*(?:SPEC|MTP|EAGLE|DRAFT)[A-Z0-9_]*|\b[A-Z0-9_]*(?:SPEC|MTP|EAGLE|DRAFT)[A-Z0-9_]*\+?=")
_VAR = re.compile(r"\$\{?#?!?([A-Za-z_][A-Za-z0-9_]*)")


def _code(text: str) -> str:
    """A script's text without its comment lines."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def mentions_spec(text: str) -> bool:
    """Whether a script's text (comments aside) says anything speculative."""
    return SPEC_TEXT.search(_code(text)) is not None


def reads(text: str, var: str) -> bool:
    """Whether a script's code (comments aside) reads ``var``."""
    return re.search(rf"\$\{{?{re.escape(var)}\b", _code(text)) is not None


def switches(script: ir.Script) -> Mapping[str, tuple[int, ...]]:
    """Variable -> lines of the conditionals on it that choose a speculative setting."""
    out: dict[str, list[int]] = {}
    src = script.source
    for cond, branches, line in _conditionals(script.body):
        if not any(SPEC_TEXT.search(_text(src, b)) for b in branches):
            continue
        for name in _VAR.findall(" ".join(_text(src, c) for c in cond)):
            out.setdefault(name, []).append(line)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _text(src: bytes, node: object) -> str:
    pos = getattr(node, "pos", None)
    if pos is None or pos.start_byte < 0 or pos.end_byte < pos.start_byte:
        return ""
    return src[pos.start_byte:pos.end_byte].decode("utf-8", "replace")


def _conditionals(stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]
                  ) -> Iterator[tuple[list[object], list[object], int]]:
    """(the nodes of a condition, the nodes of its branches, line) for every conditional."""
    for cond, ways, line, _ in _choices(stmts):
        yield cond, [b for way in ways for b in way], line


def _choices(stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]
             ) -> Iterator[tuple[list[object], list[list[object]], int, bool]]:
    """(the nodes of a condition, its ways through (the nodes of each branch), line, whether
    the ways are every way: an ``if`` with an ``else``, a ``case`` with ``*)``) for every
    ``if``, ``case`` and ``&&``/``||`` list, nested ones and those in functions included."""
    for node in _walk(stmts):
        if isinstance(node, ir.If):
            cond: list[object] = [c for clause, _ in node.clauses for c in clause]
            ways = [_objects(body) for _, body in node.clauses]
            if node.else_body is not None:
                ways.append(_objects(node.else_body))
            yield cond, ways, node.pos.line, node.else_body is not None
        elif isinstance(node, ir.Case):
            every = any(p.literal() == "*" for pats, _ in node.items for p in pats)
            yield [node.word], [_objects(body) for _, body in node.items], node.pos.line, every
        elif isinstance(node, ir.AndOr):
            yield [node.first], [[r for _, r in node.rest]], node.pos.line, False


# A flag whose next word is a speculative value (``--speculative-config "$SPEC"``).
_SPEC_FLAG = re.compile(r"^-{1,2}(?:speculative|spec)[-_.a-z]*$|^-sc$|^--method$|^--num-speculative-tokens$")


def spec_vars(script: ir.Script) -> frozenset[str]:
    """The variables the script's speculative settings may depend on: those the conditionals
    that choose a speculative setting test, those read where a setting is written (a spec
    flag's value, ``SPEC_CONFIG="...$N..."``), and, transitively, those read by the
    assignments of any of them. An evaluation of the script stands for another env that
    agrees on these (``bot.launches.specview``)."""
    src = script.source
    assigned: dict[str, set[str]] = {}
    need: set[str] = set(switches(script))
    for node in _walk(script.body):
        if isinstance(node, (ir.Command, ir.Decl)):
            for a in node.assigns:
                text = _text(src, a)
                reads = set(_VAR.findall(text.partition("=")[2] if "=" in text else ""))
                assigned.setdefault(a.name.rstrip("[]"), set()).update(reads)
                if SPEC_TEXT.search(text):
                    need.update(reads)
                    need.add(a.name.rstrip("[]"))
        if isinstance(node, ir.Command):
            words = [_text(src, w) for w in node.words]
            for i, w in enumerate(words):
                if SPEC_TEXT.search(w) or (i and _SPEC_FLAG.match(words[i - 1].strip("'\""))):
                    need.update(_VAR.findall(w))
    todo = list(need)
    while todo:
        for v in assigned.get(todo.pop(), ()):
            if v not in need:
                need.add(v)
                todo.append(v)
    return frozenset(need)


def _objects(stmts: tuple[ir.Stmt, ...]) -> list[object]:
    return list(stmts)


def _walk(stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> Iterator[object]:
    for s in stmts:
        yield s
        if isinstance(s, ir.If):
            for cond, body in s.clauses:
                yield from _walk(cond)
                yield from _walk(body)
            yield from _walk(s.else_body or ())
        elif isinstance(s, ir.Case):
            for _, body in s.items:
                yield from _walk(body)
        elif isinstance(s, ir.AndOr):
            yield from _walk([s.first, *(r for _, r in s.rest)])
        elif isinstance(s, ir.Pipeline):
            yield from _walk(s.cmds)
        elif isinstance(s, (ir.For, ir.While)):
            yield from _walk(s.body)
            if isinstance(s, ir.While):
                yield from _walk(s.cond)
        elif isinstance(s, (ir.Group, ir.FuncDef)):
            yield from _walk(s.body)


_OPS = r"(?P<op>-le|-lt|-ge|-gt|-eq|-ne|<=|>=|<|>|==|!=)"
_NUM_TEST = re.compile(
    r"\$\{?(?P<v>[A-Za-z_][A-Za-z0-9_]*)\}?\"?\s*" + _OPS + r"\s*\"?(?P<n>\d+)\b"
    r"|\b(?P<n2>\d+)\"?\s*" + _OPS.replace("op", "op2") + r"\s*\"?\$\{?(?P<v2>[A-Za-z_][A-Za-z0-9_]*)")
# Where a value equal to the threshold goes: with the values below it ("lo": ``x -le t`` and
# ``x -gt t`` decide for it as for smaller x), above it ("hi"), or on its own (``-eq``)
_EQUAL = {"-le": "lo", "<=": "lo", "-gt": "lo", ">": "lo", "-lt": "hi", "<": "hi", "-ge": "hi", ">=": "hi"}
_FLIP = {"-le": "-ge", "-ge": "-le", "-lt": "-gt", "-gt": "-lt", "<=": ">=", ">=": "<=", "<": ">", ">": "<"}

Cut = tuple[int, str]  # a threshold and where a value equal to it goes: "lo", "hi" or "own"


def thresholds(script: ir.Script, var: str) -> tuple[Cut, ...] | None:
    """The numbers the script's speculative switches compare ``var`` with, when that is all
    they do with it (``[ "$CONC" -le 8 ]``, ``(( CONC >= 128 ))``): values on the same side of
    each of them take the same branches. None when a switch uses ``var`` another way (a
    ``case`` on it, arithmetic, a string test): then every value counts."""
    src = script.source
    found: dict[int, str] = {}
    for cond, branches, _ in _conditionals(script.body):
        if not any(SPEC_TEXT.search(_text(src, b)) for b in branches):
            continue
        text = " ".join(_text(src, c) for c in cond)
        if var not in _VAR.findall(text) and not re.search(rf"\b{re.escape(var)}\b", text):
            continue
        if any(isinstance(c, ir.Word) for c in cond):
            return None  # ``case "$CONC" in``: patterns, not numbers
        hits = [m for m in _NUM_TEST.finditer(text) if var in (m.group("v"), m.group("v2"))]
        mentions = len(re.findall(rf"\b{re.escape(var)}\b", text))
        if not hits or len(hits) != mentions:
            return None
        for m in hits:
            op = m.group("op") if m.group("v") else _FLIP.get(m.group("op2"), m.group("op2"))
            n = int(m.group("n") or m.group("n2"))
            side = _EQUAL.get(op, "own")
            found[n] = side if found.get(n, side) == side else "own"
    return tuple(sorted(found.items()))


def value_class(value: str, cuts: tuple[Cut, ...]) -> tuple[int, ...] | str:
    """Where a value sits against each threshold (-1 below, 1 above, 0 on one that sets it
    apart); the value itself if not a number."""
    try:
        n = int(value)
    except ValueError:
        return value
    return tuple((n > t) - (n < t) if n != t else {"lo": -1, "hi": 1}.get(side, 0) for t, side in cuts)


_CLEARS = re.compile(r"\b[A-Z0-9_]*(?:SPEC|MTP|EAGLE|DRAFT)[A-Z0-9_]*\+?=(?:\(\s*\)|0\b|\"\"|''|\s|$)")


def may_disable(script: ir.Script, var: str) -> bool:
    """Whether a switch on ``var`` may leave the server without speculation: one way through
    it writes no speculative setting (a branch without one, an ``if`` with no ``else``, an
    ``&&``), or a branch clears one (``SPEC_ARGS=()``, ``NUM_SPEC=0``). False when every way
    writes one (``EVAL_ONLY`` picking real verification instead of synthetic acceptance):
    speculation then stays on whichever branch runs."""
    src = script.source
    for cond, ways, _, every in _choices(script.body):
        texts = [" ".join(_text(src, b) for b in way) for way in ways] + ([] if every else [""])
        if not any(SPEC_TEXT.search(t) for t in texts):
            continue
        if var not in _VAR.findall(" ".join(_text(src, c) for c in cond)):
            continue
        if any(_CLEARS.search(t) or not SPEC_TEXT.search(t) for t in texts):
            return True
    return False
