"""bashlex front-end: source bytes -> ``ir.Script``.

The second front-end, used where tree-sitter is unavailable and in the
differential test against ``parse.py``. It produces the same IR shapes as the
tree-sitter front-end for everything bashlex can parse.

bashlex gives a tree of commands, lists, pipelines and compound commands whose
nodes carry ``pos`` as (start, end) character offsets. Its words are already
dequoted and only simple ``$X``/``${X}`` expansions and command substitutions
are broken out, so words are re-read here from the source text at ``pos``:
quoting, ``${X op arg}`` expansions, escapes and nested substitutions are all
lexed by this module.

bashlex is stricter than tree-sitter and rejects ``[[ ]]``, ``case``,
``$(( ))``, arrays, quoted here-document delimiters and more; a rejected script
becomes an ``ir.Script`` with an empty body and one ``ParseError``. Nothing in
this module raises. bashlex recurses (about ten frames per ``$( )`` level), so text
nested deeper than ``nesting.MAX_NESTING`` (a lexical pre-check) is rejected before
bashlex sees it, a ``RecursionError`` from bashlex is a parse error at the deepest
point, and the converter counts levels as ``parse.py`` does.

Deliberate differences from ``parse.py`` (where tree-sitter-bash is wrong):
``! a | b`` negates the whole pipeline; ``[ a -a b ]``/``[ ! a = b ]`` are
parsed with ``test``'s precedence; ``$10`` is ``$1`` then ``0``; patterns in
``${X%% *}`` keep their leading blanks; ``${X/a\\/b/c}`` splits at the first
unescaped ``/``; ``${#}``/``${!}`` are the special parameters; the arguments
of ``"${X:-...}"`` follow double-quote rules; redirections after a here-document
operator and on a function body are kept.

This module runs bashlex; ``bashlex_convert.py`` (statements), ``bashlex_words.py``
(words) and ``bashlex_cond.py`` (``[ ... ]``) turn its tree into the IR.
"""

from __future__ import annotations

import re
from typing import Any

import bashlex  # type: ignore[import-untyped, unused-ignore]
import bashlex.ast  # type: ignore[import-untyped, unused-ignore]
import bashlex.parser  # type: ignore[import-untyped, unused-ignore]
import bashlex.subst  # type: ignore[import-untyped, unused-ignore]

from bot.shell.front.bashlex_convert import Converter, ConvertError, Locator
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir

Node = Any  # bashlex.ast.node (untyped)


class _UnclosedBrace(Exception):
    """Raised instead of letting bashlex 0.18 loop forever on a ``${`` with no ``}``."""


def _guard_bashlex() -> None:
    """Make bashlex fail instead of hanging on words like ``x'${'``.

    bashlex's ``subst._paramexpand`` does ``string.find('}')`` and, on -1, restarts the
    word at offset 0: an endless loop. The tokenizer rejects an unquoted ``${`` without
    ``}``, but not one inside single quotes in the middle of a word. The wrapper raises
    for exactly that case and delegates everything else.
    """
    subst = bashlex.subst
    original = getattr(subst, "_paramexpand", None)
    if original is None or getattr(original, "_bot_guarded", False):
        return

    def guarded(parserobj: Any, string: str, sindex: int) -> Any:
        if string.startswith("${", sindex) and string.find("}", sindex + 2) < 0:
            raise _UnclosedBrace(f"bad substitution: no closing '}}' in {string!r}")
        return original(parserobj, string, sindex)

    guarded._bot_guarded = True  # type: ignore[attr-defined]
    subst._paramexpand = guarded


def parse(path: str, source: bytes) -> ir.Script:
    try:
        return _parse(path, source)
    except Exception as exc:  # pragma: no cover - _parse already turns failures into errors
        return ir.Script(path, (), (ir.ParseError(f"bashlex: {type(exc).__name__}: {exc}", ir.Pos(1, 1)),), source)


def _parse(path: str, source: bytes) -> ir.Script:
    _guard_bashlex()
    text = source.decode("utf-8", "surrogateescape")  # byte offsets survive invalid UTF-8
    loc = Locator(text)
    deep = nesting.too_deep_offset(text)
    if deep is not None:
        return ir.Script(path, (), (nesting.too_deep(loc.pos(deep, deep), outcome="bashlex was not run"),), source)
    try:
        trees = _bashlex_parse(text)
    except Exception as exc:
        offset = exc.offset if isinstance(exc, _ChunkError) else None
        cause = exc.__cause__ if isinstance(exc, _ChunkError) and exc.__cause__ is not None else exc
        if isinstance(cause, RecursionError):
            return ir.Script(path, (), (_recursion_error(text, loc),), source)
        if _blank(text):  # bashlex fails on scripts with no commands at all
            return ir.Script(path, (), (), source)
        return ir.Script(path, (), (_error(cause, offset, loc),), source)
    conv = Converter(text, loc, 0)
    try:
        body = [s for tree in trees for s in conv.stmts(tree)]
    except ConvertError as exc:
        return ir.Script(path, (), (_error(exc, exc.offset, loc),), source)
    except RecursionError:  # bashlex re-parses substitutions; or called from deep in a stack
        return ir.Script(path, (), (_recursion_error(text, loc),), source)
    except Exception as exc:
        return ir.Script(path, (), (_error(exc, None, loc),), source)
    return ir.Script(path, tuple(body), tuple(conv.errors), source)


def _recursion_error(text: str, loc: Locator) -> ir.ParseError:
    """bashlex ran out of stack (it recurses about ten frames per level): say where the text is deepest."""
    depth, offset = nesting.deepest(text)
    return ir.ParseError(f"bashlex: nesting too deep for bashlex ({depth} levels at the deepest point)",
                         loc.pos(offset, offset))


class _ChunkError(Exception):
    """A bashlex failure; ``offset`` is its position in the whole text, when bashlex gave one."""

    def __init__(self, offset: int | None) -> None:
        super().__init__(offset)
        self.offset = offset


def _bashlex_parse(text: str) -> list[Node]:
    """``bashlex.parse(text)``, with error positions made relative to the whole text.

    ``bashlex.parse`` parses one top-level command after another, each from a slice
    of the text, and its errors carry the position within the slice. This is the
    same loop (bashlex 0.18's ``parser.parse``) keeping track of the slice start.
    """
    make = getattr(bashlex.parser, "_parser", None)
    endfinder = getattr(bashlex.parser, "_endfinder", None)
    if make is None or endfinder is None:  # another bashlex: positions may be slice-relative
        try:
            return list(bashlex.parse(text))
        except Exception as exc:
            position = getattr(exc, "position", None)
            raise _ChunkError(position if isinstance(position, int) else None) from exc
    trees: list[Node] = []
    index = 0
    while index < len(text):
        try:
            part = make(text[index:]).parse()
        except Exception as exc:
            position = getattr(exc, "position", None)
            raise _ChunkError(index + position if isinstance(position, int) else None) from exc
        if not isinstance(part, bashlex.ast.node):
            if not _blank(text[index:]):  # never drop the rest of a script silently
                raise _ChunkError(index) from ConvertError("no command found")
            break
        if index:
            bashlex.ast.posshifter(index).visit(part)
        trees.append(part)
        finder = endfinder()
        finder.visit(part)
        index = max(part.pos[1], finder.end) + 1
    return trees


def _error(exc: BaseException, offset: int | None, loc: Locator) -> ir.ParseError:
    # bashlex appends "(position N)" with N relative to the command it was parsing; pos says where
    message = re.sub(r" \(position \d+\)$", "", str(exc)) or type(exc).__name__
    if not isinstance(exc, (bashlex.errors.ParsingError, ConvertError, _UnclosedBrace)):
        message = f"{type(exc).__name__}: {message}"
    if offset is None:
        return ir.ParseError(f"bashlex: {message}", ir.Pos(1, 1))
    return ir.ParseError(f"bashlex: {message}", loc.pos(offset, offset))


def _blank(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())
