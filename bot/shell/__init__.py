"""Shell analysis, in four parts: ``ir`` (the language: the IR, partially known values, words),
``front`` (the two front-ends, tree-sitter-bash and bashlex, to that IR), ``evaluator`` (the
partial evaluation of a script under an env), ``analysis`` (what a script needs, read without
evaluating). ``default_parser`` picks the front-end. Imports nothing outside ``bot.shell``.
"""

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
