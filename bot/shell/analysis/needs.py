"""What a benchmark script requires from its environment, read from its text (no evaluation).

``needs(script, env_checks)`` lists, once per variable (its first place):

- "check": a literal argument of an env-check command (``check_env_vars MODEL TP \\``, over
  continued lines too): the command fails when the variable is unset or empty;
- "guard": ``${X:?msg}`` / ``${X?msg}``;
- "nounset": when the script turns ``set -u`` on at its top level (``set -euo pipefail``,
  ``set -o nounset``), a read with no default of a variable the script never sets anywhere
  (an assignment, ``read``, ``for X in``, ``local``/``declare``/``readonly``, ``export X=``,
  ``${X:=d}``, ``getopts``, ``mapfile``, ``printf -v``) nor reads with a default anywhere
  (``if [[ -n "${X:-}" ]]; then use "$X"``: the script knows it may be unset). A script
  that sources a file from outside the repo (``. /etc/os-release``, an image's ``env.sh``)
  may get any variable from it: it has no "nounset" needs.

The IR is walked with an explicit stack: scripts nest deep (``bot.shell.ir.nesting``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.shell.evaluator.options import _NAME_RE
from bot.shell.evaluator.reads import _DEFAULTS, _NOUNSET_OPS, set_flags
from bot.shell.evaluator.state import Loc, State
from bot.shell.evaluator.wordops import special
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import lit

_READERS = frozenset({"read", "getopts", "mapfile", "readarray"})
# not looked into (Lit, the most common part, is skipped first)
_LEAVES = frozenset({ir.Lit, ir.Pos, ir.Arith, ir.ArithCmd, ir.Opaque})


@dataclass(frozen=True)
class Need:
    name: str
    loc: Loc
    how: str  # "check", "guard", "nounset"


def _nounset_at_top(body: Iterable[ir.Stmt]) -> bool:
    st = State()
    for s in body:
        if isinstance(s, ir.Command) and s.words and s.words[0].literal() == "set":
            set_flags([lit(k) if (k := w.literal()) is not None else () for w in s.words[1:]], st)
    return st.nounset


def needs(script: ir.Script, env_checks: frozenset[str]) -> list[Need]:
    found: list[Need] = []
    plain: list[Need] = []  # reads with no default (kept when the script runs ``set -u``)
    assigned: set[str] = set()  # or read with a default somewhere (``if [[ -n "${X:-}" ]]; then ... $X``)
    opaque = False  # sources a file from outside the repo, which may set anything
    path = script.path
    # (node, the position of the word it is in)
    stack: list[tuple[object, ir.Pos]] = [(s, ir.NOPOS) for s in reversed(script.body)]

    def push(items: Iterable[object], pos: ir.Pos = ir.NOPOS) -> None:
        stack.extend((x, pos) for x in reversed(list(items)))

    while stack:
        node, at = stack.pop()
        if type(node) in _LEAVES:
            continue
        if isinstance(node, ir.Word):
            push(node.parts, node.pos if node.pos.line else at)
        elif isinstance(node, ir.Param):
            loc = Loc(path, at.line, at.col or 1)
            if node.op in ("?", ":?"):
                found.append(Need(node.name, loc, "guard"))
            elif node.op in _DEFAULTS:
                assigned.add(node.name)
            elif node.op in _NOUNSET_OPS and not node.index and not special(node.name):
                plain.append(Need(node.name, loc, "nounset"))
            push([w for w in (node.arg, node.arg2) if w is not None], at)
        elif isinstance(node, ir.CmdSub):
            push(node.body)
        elif isinstance(node, ir.Command):
            assigned.update(a.name for a in node.assigns)
            name = node.words[0].literal() if node.words else None
            if name in env_checks:
                for w in node.words[1:]:
                    k = w.literal()
                    if k and _NAME_RE.match(k):
                        found.append(Need(k, Loc(path, w.pos.line, w.pos.col or 1), "check"))
            elif name in (".", "source") and len(node.words) > 1:
                target = node.words[1].literal()
                opaque = opaque or (target is not None and target.startswith("/"))
            elif name in _READERS or name == "printf":
                words = [w.literal() for w in node.words[1:]]
                if name == "printf":
                    words = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-v"]
                assigned.update(k for k in words if k and _NAME_RE.match(k))
            push(node.assigns)
            push(node.words)
            push(node.redirects)
        elif isinstance(node, ir.Assign):
            assigned.add(node.name)
            push([w for w in (node.value,) if w is not None])
            push(node.array or ())
        elif isinstance(node, ir.Redirect):
            push([w for w in (node.target, node.body) if w is not None])
        elif isinstance(node, ir.Decl):
            assigned.update(a.name for a in node.assigns if a.value is not None or node.kind != "export")
            push([a.value for a in node.assigns if a.value is not None])
        elif isinstance(node, ir.Test):
            push([node.expr] if node.expr is not None else [])
        elif isinstance(node, ir.TUnary):
            push([node.arg])
        elif isinstance(node, ir.TBinary):
            push([node.left, node.right])
        elif isinstance(node, ir.TNot):
            push([node.expr])
        elif isinstance(node, (ir.TAnd, ir.TOr)):
            push([node.left, node.right])
        elif isinstance(node, ir.TWord):
            push([node.word])
        elif isinstance(node, ir.AndOr):
            push([node.first, *(s for _, s in node.rest)])
        elif isinstance(node, ir.Pipeline):
            push(node.cmds)
        elif isinstance(node, ir.If):
            push([s for cond, body in node.clauses for s in (*cond, *body)] + list(node.else_body or ()))
        elif isinstance(node, ir.Case):
            push([node.word, *(x for pats, body in node.items for x in (*pats, *body))])
        elif isinstance(node, ir.For):
            assigned.add(node.var)
            push([*(node.items or ()), *node.body])
        elif isinstance(node, ir.While):
            push([*node.cond, *node.body])
        elif isinstance(node, (ir.Group, ir.FuncDef)):
            push(node.body)
    if _nounset_at_top(script.body) and not opaque:
        found.extend(n for n in plain if n.name not in assigned)
    first: dict[str, Need] = {}
    for n in sorted(found, key=lambda n: (n.loc.line, n.loc.col)):
        first.setdefault(n.name, n)
    return list(first.values())
