"""The tree-sitter-bash tree: the parser, its syntax errors and the nesting walk.

Every walk here is iterative (a pull request can nest thousands deep); ``parse.py``
converts the tree into the IR.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import tree_sitter
import tree_sitter_bash

from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir

Node = Any  # tree_sitter.Node (the stubs are incomplete)

# Each of these is one nesting level (the converter and the evaluator recurse once per level).
NESTING = {"if_statement", "for_statement", "c_style_for_statement", "select_statement", "while_statement",
           "until_statement", "case_statement", "compound_statement", "subshell", "function_definition",
           "negated_command", "command_substitution", "expansion"}
TEST_NESTING = {"binary_expression", "unary_expression", "parenthesized_expression"}


@lru_cache(maxsize=1)
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def swallowed_newline(root: Node, source: bytes) -> int | None:
    """Byte offset of a newline that tree-sitter read as a blank inside a command."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "command":
            kids = node.children
            for a, b in zip(kids, kids[1:]):
                gap = source[a.end_byte : b.start_byte]
                if b"\n" in gap and b"\\\n" not in gap and b"\\\r\n" not in gap:
                    return int(a.end_byte) + gap.index(b"\n")
        elif node.has_error or node.child_count:
            stack.extend(node.named_children)  # anonymous nodes are tokens: leaves, never a command
    return None


def collect_errors(root: Node, out: list[ir.ParseError]) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            what = f"missing {node.type!r}" if node.is_missing else "syntax error"
            snippet = node.text.decode("utf-8", "replace").strip().splitlines()
            if snippet and not node.is_missing:
                what += f" near {snippet[0][:40]!r}"
            out.append(ir.ParseError(what, pos(node)))
        elif node.has_error:
            stack.extend(reversed(node.children))


def _too_deep(root: Node) -> ir.ParseError | None:
    """The first construct nested deeper than the limit (the levels ``_Converter`` counts).

    Every level takes at least one byte more than the level inside it, so a node shorter
    than the levels still allowed is not opened."""
    limit = nesting.MAX_NESTING
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, in_test = stack.pop()
        t = node.type
        if t in NESTING or (in_test and t in TEST_NESTING):
            depth += 1
            if depth > limit:
                return nesting.too_deep(pos(node), t.replace("_", " "))
        if node.end_byte - node.start_byte <= limit - depth or t == "arithmetic_expansion":
            continue
        in_test = in_test or t == "test_command"
        for c in reversed(node.named_children):  # anonymous nodes are tokens: never a level
            # a function's body is its level (the converter reads it as a block)
            stack.append((c, depth - 1 if t == "function_definition" and c.type == "compound_statement"
                          else depth, in_test))
    return None


def pos(node: Node) -> ir.Pos:
    (r, c), (er, ec) = node.start_point, node.end_point
    return ir.Pos(r + 1, c + 1, er + 1, ec + 1, node.start_byte, node.end_byte)


def syntax_errors(source: bytes) -> tuple[ir.ParseError, ...]:
    """Syntax errors only (no IR): a cheap check for files the analysis does not evaluate,
    and the first construct nested deeper than the limit (``nesting.is_too_deep``)."""
    tree = parser().parse(source)
    errors: list[ir.ParseError] = []
    if tree.root_node.has_error:
        collect_errors(tree.root_node, errors)
    deep = _too_deep(tree.root_node)
    if deep is not None:
        errors.append(deep)
    return tuple(errors)
