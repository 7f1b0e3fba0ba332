"""Shell analysis: front-ends (tree-sitter-bash, bashlex) to one IR, and its evaluator."""

from __future__ import annotations

from collections.abc import Callable

from bot.shell.ir import nodes as ir

Parser = Callable[[str, bytes], ir.Script]


def default_parser() -> tuple[Parser, Callable[[bytes], tuple[ir.ParseError, ...]]]:
    """(parse, syntax_errors): tree-sitter-bash, or bashlex where its wheel is missing."""
    try:
        from bot.shell.front.parse import parse, syntax_errors
    except ImportError:  # pragma: no cover - platforms without a tree-sitter wheel
        from bot.shell.front import bashlex_front

        def bashlex_errors(source: bytes) -> tuple[ir.ParseError, ...]:
            return bashlex_front.parse("", source).errors

        return bashlex_front.parse, bashlex_errors
    return parse, syntax_errors
