"""``[ ... ]`` for the tree-sitter front-end: test(1)'s grammar over the words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.shell.ir import nodes as ir

UNARY = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x", "-G",
          "-L", "-N", "-O", "-S", "-z", "-n", "-v", "-o"}
BINARY = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "=~"}


def test_words(texts: list[str | None], word: Any, i: int, limit: int,
                too_deep: Callable[[int], ir.TestExpr]) -> tuple[ir.TestExpr | None, int]:
    """test(1) grammar: expr := and (-o and)*; and := not (-a not)*; not := ! not | primary.
    ``texts`` are the plain words (None for words with quotes or expansions); ``word(k,
    pattern)`` converts word k. ``!`` and ``(`` nested more than ``limit`` deep give
    ``too_deep(k)`` for the rest of the words."""
    n = len(texts)
    depth = 0

    def lit(k: int) -> str | None:
        return texts[k] if k < n else None

    def primary(k: int) -> tuple[ir.TestExpr, int]:
        nonlocal depth
        if lit(k) == "(":
            if depth >= limit:
                return too_deep(k), n
            depth += 1
            e, k = expr(k + 1)
            depth -= 1
            return e or ir.TWord(ir.Word(())), k + 1 if lit(k) == ")" else k
        if k + 2 < n and lit(k + 1) in BINARY:
            op = lit(k + 1) or ""
            return ir.TBinary(op, word(k), word(k + 2, op in ("=", "==", "!=", "=~"))), k + 3
        if lit(k) in UNARY and k + 1 < n:
            return ir.TUnary(lit(k) or "", word(k + 1)), k + 2
        if k < n:
            return ir.TWord(word(k)), k + 1
        return ir.TWord(ir.Word(())), k

    def negation(k: int) -> tuple[ir.TestExpr, int]:
        nonlocal depth
        if lit(k) == "!" and k + 1 < n:
            if depth >= limit:
                return too_deep(k), n
            depth += 1
            e, k = negation(k + 1)
            depth -= 1
            return ir.TNot(e), k
        return primary(k)

    def conj(k: int) -> tuple[ir.TestExpr, int]:
        left, k = negation(k)
        while lit(k) == "-a":
            right, k = negation(k + 1)
            left = ir.TAnd(left, right)
        return left, k

    def expr(k: int) -> tuple[ir.TestExpr | None, int]:
        if k >= n:
            return None, k
        left, k = conj(k)
        while lit(k) == "-o":
            right, k = conj(k + 1)
            left = ir.TOr(left, right)
        return left, k

    return expr(i)
