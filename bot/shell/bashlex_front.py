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
this module raises.

Deliberate differences from ``parse.py`` (where tree-sitter-bash is wrong):
``! a | b`` negates the whole pipeline; ``[ a -a b ]``/``[ ! a = b ]`` are
parsed with ``test``'s precedence; ``$10`` is ``$1`` then ``0``; patterns in
``${X%% *}`` keep their leading blanks; ``${X/a\\/b/c}`` splits at the first
unescaped ``/``; ``${#}``/``${!}`` are the special parameters; the arguments
of ``"${X:-...}"`` follow double-quote rules; redirections after a here-document
operator and on a function body are kept.
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Any

import bashlex  # type: ignore[import-untyped, unused-ignore]
import bashlex.ast  # type: ignore[import-untyped, unused-ignore]
import bashlex.parser  # type: ignore[import-untyped, unused-ignore]
import bashlex.subst  # type: ignore[import-untyped, unused-ignore]

from bot.shell import ir
from bot.shell.words import ansi_c as _ansi_c
from bot.shell.words import merge as _merge
from bot.shell.words import unescape_dq as _unescape_dq
from bot.shell.words import unescape_unquoted as _unescape_unquoted

Node = Any  # bashlex.ast.node (untyped)

_DECL = {"export", "local", "readonly", "declare", "typeset"}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_REDIR_RE = re.compile(r"(\d+)?(&>>|&>|>>|>&|<&|>\||<<<|<<-|<<|<>|>|<)")
_SPECIAL = "@*#?-$!"
_PARAM_OPS = (":-", ":=", ":?", ":+", "##", "%%", "//", "/#", "/%", "^^", ",,",
              "-", "=", "?", "+", "#", "%", "/", "^", ",", ":", "@")
_PATTERN_OPS = {"#", "##", "%", "%%", "/", "//", "/#", "/%"}
_SLASH_OPS = {"/", "//", "/#", "/%"}
_TEST_UNARY = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-n", "-o", "-p", "-r", "-s", "-t",
               "-u", "-w", "-x", "-z", "-G", "-L", "-N", "-O", "-S", "-v", "-R"}
_TEST_BINARY = {"=", "==", "!=", "=~", "<", ">", "\\<", "\\>", "-eq", "-ne", "-lt", "-le", "-gt", "-ge",
                "-nt", "-ot", "-ef"}
_TEST_PATTERN = {"=", "==", "!=", "=~"}


class _ConvertError(Exception):
    """A construct this module cannot convert; ``offset`` is a character offset or None."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


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
    loc = _Locator(text)
    try:
        trees = _bashlex_parse(text)
    except Exception as exc:
        if _blank(text):  # bashlex fails on scripts with no commands at all
            return ir.Script(path, (), (), source)
        offset = exc.offset if isinstance(exc, _ChunkError) else None
        cause = exc.__cause__ if isinstance(exc, _ChunkError) and exc.__cause__ is not None else exc
        return ir.Script(path, (), (_error(cause, offset, loc),), source)
    try:
        conv = _Converter(text, loc, 0)
        body = [s for tree in trees for s in conv.stmts(tree)]
    except _ConvertError as exc:
        return ir.Script(path, (), (_error(exc, exc.offset, loc),), source)
    except Exception as exc:
        return ir.Script(path, (), (_error(exc, None, loc),), source)
    return ir.Script(path, tuple(body), (), source)


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
                raise _ChunkError(index) from _ConvertError("no command found")
            break
        if index:
            bashlex.ast.posshifter(index).visit(part)
        trees.append(part)
        finder = endfinder()
        finder.visit(part)
        index = max(part.pos[1], finder.end) + 1
    return trees


def _error(exc: BaseException, offset: int | None, loc: _Locator) -> ir.ParseError:
    # bashlex appends "(position N)" with N relative to the command it was parsing; pos says where
    message = re.sub(r" \(position \d+\)$", "", str(exc)) or type(exc).__name__
    if not isinstance(exc, (bashlex.errors.ParsingError, _ConvertError, _UnclosedBrace)):
        message = f"{type(exc).__name__}: {message}"
    if offset is None:
        return ir.ParseError(f"bashlex: {message}", ir.Pos(1, 1))
    return ir.ParseError(f"bashlex: {message}", loc.pos(offset, offset))


def _blank(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


class _Locator:
    """Character offsets -> ``ir.Pos`` (1-based line, 1-based byte column, byte offsets)."""

    def __init__(self, text: str) -> None:
        self.n = len(text)
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.byte_at: list[int] | None = None
        if not text.isascii():
            sizes = (len(ch.encode("utf-8", "surrogateescape")) for ch in text)
            self.byte_at = list(itertools.accumulate(sizes, initial=0))

    def byte(self, offset: int) -> int:
        offset = max(0, min(offset, self.n))
        return offset if self.byte_at is None else self.byte_at[offset]

    def point(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, self.n))
        line = bisect.bisect_right(self.line_starts, offset)
        col = self.byte(offset) - self.byte(self.line_starts[line - 1]) + 1
        return line, col

    def pos(self, start: int, end: int) -> ir.Pos:
        line, col = self.point(start)
        end_line, end_col = self.point(end)
        return ir.Pos(line, col, end_line, end_col, self.byte(start), self.byte(end))


class _Converter:
    def __init__(self, text: str, loc: _Locator, base: int) -> None:
        self.text = text  # the whole file
        self.loc = loc
        self.base = base  # added to every bashlex position (non-zero when re-parsing a substitution)

    # ------------------------------------------------------------- positions
    def span(self, node: Node) -> tuple[int, int]:
        start, end = node.pos
        return start + self.base, end + self.base

    def pos(self, node: Node) -> ir.Pos:
        return self.loc.pos(*self.span(node))

    def raw(self, node: Node) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    # ------------------------------------------------------------ statements
    def stmts(self, node: Node) -> list[ir.Stmt]:
        if node.kind != "list":
            s = self.stmt(node)
            return [s] if s is not None else []
        out: list[ir.Stmt] = []
        group: list[tuple[str, Node]] = []
        op = ""
        for part in node.parts:
            if part.kind == "operator":
                if part.op in ("&&", "||"):
                    op = part.op
                else:  # ; & newline
                    self._flush(group, out)
                    group = []
                    op = ""
            elif part.kind in ("reservedword", "pipe"):
                continue
            else:
                group.append((op, part))
                op = ""
        self._flush(group, out)
        return out

    def _flush(self, group: list[tuple[str, Node]], out: list[ir.Stmt]) -> None:
        items: list[tuple[str, ir.Stmt]] = []
        for op, node in group:
            if node.kind == "list":  # bashlex does not nest and-or lists, but be safe
                for i, sub in enumerate(self.stmts(node)):
                    items.append((op if i == 0 else "&&", sub))
                continue
            s = self.stmt(node)
            if s is not None:
                items.append((op, s))
        if not items:
            return
        if len(items) == 1:
            out.append(items[0][1])
            return
        start = self.span(group[0][1])[0]
        end = self.span(group[-1][1])[1]
        rest = tuple((op or "&&", s) for op, s in items[1:])
        out.append(ir.AndOr(items[0][1], rest, self.loc.pos(start, end)))

    def stmt(self, node: Node) -> ir.Stmt | None:
        kind = node.kind
        if kind == "command":
            return self.command(node)
        if kind == "pipeline":
            return self.pipeline(node)
        if kind == "compound":
            return self.compound(node)
        if kind == "if":
            return self.if_stmt(node)
        if kind == "for":
            return self.for_stmt(node)
        if kind in ("while", "until"):
            return self.while_stmt(node)
        if kind == "function":
            return self.function(node)
        if kind == "list":
            body = self.stmts(node)
            if len(body) == 1:
                return body[0]
            return ir.Group(tuple(body), False, (), self.pos(node))
        if kind in ("reservedword", "operator", "pipe"):
            return None
        return ir.Opaque(kind, self.pos(node))

    def body_of(self, nodes: list[Node]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for n in nodes:
            out.extend(self.stmts(n))
        return out

    def pipeline(self, node: Node) -> ir.Stmt:
        negated = False
        cmds: list[ir.Stmt] = []
        for part in node.parts:
            if part.kind == "reservedword":
                if part.word == "!":
                    negated = not negated
                continue
            if part.kind == "pipe":
                continue
            s = self.stmt(part)
            if s is not None:
                cmds.append(s)
        pos = self.pos(node)
        if negated and len(cmds) == 1 and isinstance(cmds[0], ir.Command) and cmds[0].redirects:
            # tree-sitter reads ``! cmd >f`` as ``(! cmd) >f``; the same thing, in parse.py's shape
            cmd = cmds[0]
            bare = ir.Command(cmd.words, cmd.assigns, (), cmd.pos)
            return ir.Group((ir.Pipeline((bare,), True, pos),), False, cmd.redirects, pos)
        return ir.Pipeline(tuple(cmds), negated, pos)

    def compound(self, node: Node) -> ir.Stmt | None:
        parts = list(node.list)
        redirs = tuple(self.redirect(r) for r in (getattr(node, "redirects", None) or ()))
        inner: ir.Stmt | None
        if parts and parts[0].kind == "reservedword" and parts[0].word in ("{", "("):
            start = self.span(parts[0])[0]
            end = self.span(parts[-1])[1]
            pos = self.loc.pos(start, end)
            if parts[0].word == "(" and self.text.startswith("((", start):
                inner = ir.ArithCmd(self.text[start:end], pos)
            else:
                body = self.body_of([p for p in parts[1:-1] if p.kind != "reservedword"])
                inner = ir.Group(tuple(body), parts[0].word == "(", (), pos)
        else:
            stmts = self.body_of([p for p in parts if p.kind != "reservedword"])
            if not stmts:
                return None
            inner = stmts[0] if len(stmts) == 1 else ir.Group(tuple(stmts), False, (), self.pos(node))
        if redirs:
            return ir.Group((inner,), False, redirs, self.pos(node))
        return inner

    def if_stmt(self, node: Node) -> ir.If:
        clauses: list[tuple[tuple[ir.Stmt, ...], tuple[ir.Stmt, ...]]] = []
        cond: list[ir.Stmt] = []
        body: list[ir.Stmt] = []
        else_body: list[ir.Stmt] | None = None
        mode = "cond"
        for part in node.parts:
            if part.kind == "reservedword":
                word = part.word
                if word == "if":
                    mode = "cond"
                elif word == "elif":
                    clauses.append((tuple(cond), tuple(body)))
                    cond, body = [], []
                    mode = "cond"
                elif word == "then":
                    mode = "body"
                elif word == "else":
                    else_body = []
                    mode = "else"
                elif word == "fi":
                    break
                continue
            stmts = self.stmts(part)
            if mode == "cond":
                cond.extend(stmts)
            elif mode == "body":
                body.extend(stmts)
            elif else_body is not None:
                else_body.extend(stmts)
        clauses.append((tuple(cond), tuple(body)))
        return ir.If(tuple(clauses), tuple(else_body) if else_body is not None else None, self.pos(node))

    def for_stmt(self, node: Node) -> ir.For:
        var = "_"
        items: list[ir.Word] | None = None
        body: list[ir.Stmt] = []
        mode = "var"
        for part in node.parts:
            if part.kind == "reservedword":
                word = part.word
                if word == "in":
                    items = []
                    mode = "items"
                elif word == "do":
                    mode = "body"
                elif word == "done":
                    break
                elif word in (";", "\n") and mode == "items":
                    mode = "sep"
                continue
            if mode == "var" and part.kind == "word":
                var = self.raw(part)
                mode = "after-var"
            elif mode == "items" and items is not None and part.kind == "word":
                items.append(self.word(part))
            elif mode == "body":
                body.extend(self.stmts(part))
        return ir.For(var, tuple(items) if items is not None else None, tuple(body), self.pos(node))

    def while_stmt(self, node: Node) -> ir.While:
        cond: list[ir.Stmt] = []
        body: list[ir.Stmt] = []
        mode = "cond"
        for part in node.parts:
            if part.kind == "reservedword":
                if part.word == "do":
                    mode = "body"
                elif part.word == "done":
                    break
                continue
            (cond if mode == "cond" else body).extend(self.stmts(part))
        return ir.While(tuple(cond), tuple(body), node.kind == "until", self.pos(node))

    def function(self, node: Node) -> ir.FuncDef:
        name = "_"
        body: list[ir.Stmt] = []
        for part in node.parts:
            if part.kind == "word" and name == "_":
                name = self.raw(part)
            elif part.kind == "compound":
                parts = list(part.list)
                redirs = getattr(part, "redirects", None) or ()
                if parts and parts[0].kind == "reservedword" and parts[0].word == "{":
                    body = self.body_of([p for p in parts[1:-1] if p.kind != "reservedword"])
                    if redirs:  # parse.py drops these; keep them around the body
                        body = [ir.Group(tuple(body), False, tuple(self.redirect(r) for r in redirs),
                                         self.pos(part))]
                else:
                    s = self.compound(part)
                    body = [s] if s is not None else []
            elif part.kind != "reservedword":
                body = self.stmts(part)
        return ir.FuncDef(name, tuple(body), self.pos(node))

    # -------------------------------------------------------------- commands
    def command(self, node: Node) -> ir.Stmt:
        assigns: list[Node] = []
        words: list[Node] = []
        redirs: list[ir.Redirect] = []
        for part in node.parts:
            if part.kind == "redirect":
                redirs.append(self.redirect(part))
            elif part.kind in ("assignment", "word") and not words and _ASSIGN_RE.match(self.raw(part)):
                assigns.append(part)  # bashlex misses some, e.g. ``X[0]=a``
            elif part.kind in ("word", "assignment"):
                words.append(part)
        # tree-sitter counts a here-string as part of the command, other redirections not
        keep = {id(p) for p in assigns + words}
        spans = sorted(self.span(p) for p in node.parts
                       if id(p) in keep or (p.kind == "redirect" and getattr(p, "type", "") == "<<<"))
        pos = self.loc.pos(spans[0][0], spans[-1][1]) if spans else self.pos(node)
        stmt: ir.Stmt
        head = self.raw(words[0]) if words else ""
        if head in _DECL and not assigns:  # ``X=1 export Y`` stays a Command, as in parse.py
            stmt = self.decl(head, words[1:], pos)
        elif head == "[" and not assigns and len(words) >= 2 and self.raw(words[-1]) == "]":
            stmt = ir.Test(self.test_expr(words[1:-1]), pos)
        else:
            return ir.Command(tuple(self.word(w) for w in words), tuple(self.assign(a) for a in assigns),
                              tuple(redirs), pos)
        if redirs:
            return ir.Group((stmt,), False, tuple(redirs), self.pos(node))
        return stmt

    def decl(self, kind: str, words: list[Node], pos: ir.Pos) -> ir.Decl:
        assigns: list[ir.Assign] = []
        flags: list[str] = []
        for w in words:
            raw = self.raw(w)
            if _ASSIGN_RE.match(raw):
                assigns.append(self.assign(w))
            elif _NAME_RE.fullmatch(raw):
                assigns.append(ir.Assign(raw, None, self.pos(w)))
            elif raw.startswith(("-", "+")):
                flags.append(raw)
        return ir.Decl(kind, tuple(assigns), tuple(flags), pos)

    def assign(self, node: Node) -> ir.Assign:
        start, end = self.span(node)
        raw = self.text[start:end]
        m = _ASSIGN_RE.match(raw)
        if m is None:
            raise _ConvertError(f"not an assignment: {raw!r}", start)
        name = m.group(1) + ("[]" if m.group(2) else "")
        vstart = start + m.end()
        if vstart >= end:
            value = ir.Word((ir.Lit(""),), self.loc.pos(start, end))
        else:
            value = self.word_span(vstart, end, _subs(node))
        return ir.Assign(name, value, self.loc.pos(start, end), m.group(3) == "+")

    def redirect(self, node: Node) -> ir.Redirect:
        start, end = self.span(node)
        raw = self.text[start:end]
        m = _REDIR_RE.match(raw)
        if m is None:
            raise _ConvertError(f"unknown redirection {raw!r}", start)
        fd = int(m.group(1)) if m.group(1) else None
        op = m.group(2)
        out = getattr(node, "output", None)
        target: ir.Word | None
        if out is not None and not isinstance(out, (int, str)):
            if op in ("<<", "<<-"):
                target = ir.Word((ir.Lit(self.raw(out)),), self.pos(out))
            else:
                target = self.word(out)
        else:
            rest = raw[m.end():]
            tstart = start + m.end() + (len(rest) - len(rest.lstrip()))
            rest = rest.strip()
            if rest == "-":
                op += "-"
                target = None
            elif rest:
                target = ir.Word((ir.Lit(rest),), self.loc.pos(tstart, tstart + len(rest)))
            else:
                target = None
        return ir.Redirect(op, fd, target)

    # ------------------------------------------------------------ [ ... ]
    def test_expr(self, words: list[Node]) -> ir.TestExpr | None:
        if not words:
            return None
        return _TestParser(self, words).parse()

    # ----------------------------------------------------------------- words
    def word(self, node: Node, pattern: bool = False) -> ir.Word:
        start, end = self.span(node)
        return self.word_span(start, end, _subs(node), pattern)

    def word_span(self, start: int, end: int, subs: dict[int, Node], pattern: bool = False) -> ir.Word:
        lexer = _WordLexer(self, subs)
        parts = lexer.lex(start, end, quoted=False, pattern=pattern)
        return ir.Word(tuple(_merge(parts)), self.loc.pos(start, end))

    def substitution_body(self, node: Node | None, start: int, end: int, backtick: bool) -> tuple[ir.Stmt, ...]:
        """The statements of ``$(...)``/`...`: ``node`` is bashlex's own parse when it made one."""
        if node is not None:
            cmd = getattr(node, "command", None)
            return tuple(self.stmts(cmd)) if cmd is not None else ()
        body = self.text[start:end]
        if backtick:
            body = re.sub(r"\\([\\`$])", r"\1", body)
            if len(body) != end - start:  # offsets no longer line up; report the substitution's position
                start = start - 1
        if not body.strip():
            return ()
        try:
            trees = bashlex.parse(body)
        except Exception as exc:
            offset = getattr(exc, "position", None)
            raise _ConvertError(str(exc) or type(exc).__name__,
                                start + offset if isinstance(offset, int) else start) from exc
        conv = _Converter(self.text, self.loc, start)
        return tuple(s for tree in trees for s in conv.stmts(tree))


def _subs(node: Node) -> dict[int, Node]:
    """bashlex's command/process substitution nodes inside a word, by start offset (relative)."""
    out: dict[int, Node] = {}
    for part in getattr(node, "parts", None) or ():
        if part.kind in ("commandsubstitution", "processsubstitution"):
            out[part.pos[0]] = part
    return out


class _WordLexer:
    """Splits the source text of one word into IR parts, the way parse.py would."""

    def __init__(self, conv: _Converter, subs: dict[int, Node]) -> None:
        self.conv = conv
        self.t = conv.text
        # bashlex offsets are relative to conv.base
        self.subs = {k + conv.base: v for k, v in subs.items()}

    def lex(self, start: int, end: int, quoted: bool, pattern: bool, dq_rules: bool = False) -> list[ir.Part]:
        """Parts of ``text[start:end]`` read as an unquoted word.

        Inside an expansion's argument: ``quoted`` marks the literal parts (and
        expansions) as quoted; ``dq_rules`` (the ``${X:-...}`` argument inside
        double quotes) makes ``'`` literal and backslash escape only ``$``, backquote, ``"``
        and backslash;
        ``pattern`` keeps backslashes (tree-sitter keeps the text of patterns).
        """
        t = self.t
        out: list[ir.Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                raw = "".join(buf)
                if dq_rules:
                    text = _unescape_dq(raw)
                else:
                    text = raw if pattern else _unescape_unquoted(raw)
                out.append(ir.Lit(text, quoted))
                buf.clear()

        i = start
        while i < end:
            c = t[i]
            if c == "\\":
                buf.append(t[i : min(i + 2, end)])
                i += 2
            elif c == "'" and not dq_rules:
                j = t.find("'", i + 1, end)
                j = end if j < 0 else j
                flush()
                out.append(ir.Lit(t[i + 1 : j], True))
                i = j + 1
            elif c == '"':
                j = self.dq_end(i + 1, end)
                flush()
                self.dq(i + 1, j, out)
                i = j + 1
            elif c == "$" and i + 1 < end and t[i + 1] == "'" and not dq_rules:
                j = i + 2
                while j < end and t[j] != "'":
                    j += 2 if t[j] == "\\" else 1
                flush()
                out.append(ir.Lit(_ansi_c(t[i + 2 : min(j, end)]), True))
                i = j + 1
            elif c == "$" and i + 1 < end and t[i + 1] == '"':
                j = self.dq_end(i + 2, end)
                flush()
                self.dq(i + 2, j, out)
                i = j + 1
            elif c in "$`":
                got = self.expansion_at(i, end, quoted)
                if got is None:
                    buf.append(c)
                    i += 1
                else:
                    flush()
                    out.append(got[0])
                    i = got[1]
            elif c in "<>" and i in self.subs and self.subs[i].kind == "processsubstitution":
                flush()
                out.append(ir.Lit("/dev/fd/63", True))
                i = self.subs[i].pos[1] + self.conv.base
            else:
                buf.append(c)
                i += 1
        flush()
        return out

    def sub_close(self, sub: Node, end: int) -> int:
        """Offset of the ``)`` or backquote closing bashlex's substitution node ``sub``.

        bashlex ends the node before any here-document body inside it; the closing
        character then follows the body.
        """
        close = self.conv.span(sub)[1] - 1
        finder_class = getattr(bashlex.parser, "_endfinder", None)
        if finder_class is None:
            return close
        finder = finder_class()
        finder.visit(sub)
        if finder.end < 0 or finder.end + self.conv.base <= close:
            return close
        j: int = finder.end + self.conv.base
        while j < end and self.t[j] in " \t\n":
            j += 1
        return j

    def dq(self, start: int, end: int, out: list[ir.Part]) -> None:
        """The parts of a double-quoted string whose contents are ``text[start:end]``."""
        t = self.t
        seg = start
        i = start
        while i < end:
            c = t[i]
            if c == "\\":
                i += 2
                continue
            if c in "$`":
                got = self.expansion_at(i, end, True)
                if got is not None:
                    if i > seg:
                        out.append(ir.Lit(_unescape_dq(t[seg:i]), True))
                    out.append(got[0])
                    i = seg = got[1]
                    continue
            i += 1
        if end > seg:
            out.append(ir.Lit(_unescape_dq(t[seg:end]), True))

    def expansion_at(self, i: int, end: int, quoted: bool) -> tuple[ir.Part, int] | None:
        """The expansion starting at ``text[i]`` (a ``$`` or backtick) and the offset after it."""
        t = self.t
        if t[i] == "`":
            sub = self.subs.get(i)
            j = self.sub_close(sub, end) if sub is not None else _find_backtick(t, i + 1, end)
            body = self.conv.substitution_body(sub, i + 1, j, backtick=True)
            return ir.CmdSub(body, quoted), j + 1
        if i + 1 >= end:
            return None
        n = t[i + 1]
        if n == "(":
            if t.startswith("((", i + 1):
                j = _find_close(t, i + 3, end, "(", ")")
                if j + 1 < end and t[j + 1] == ")":
                    return ir.Arith(t[i + 3 : j]), j + 2
            sub = self.subs.get(i)
            j = self.sub_close(sub, end) if sub is not None else _find_close(t, i + 2, end, "(", ")")
            body = self.conv.substitution_body(sub, i + 2, j, backtick=False)
            return ir.CmdSub(body, quoted), j + 1
        if n == "{":
            j = _find_brace(t, i + 2, end, quoted)
            return self.braced(i + 2, j, quoted), j + 1
        if n.isdigit():
            return ir.Param(n, "", None, None, quoted), i + 2
        if n in _SPECIAL:
            return ir.Param(n, "", None, None, quoted), i + 2
        m = _NAME_RE.match(t, i + 1, end)
        if m is not None:
            return ir.Param(m.group(0), "", None, None, quoted), m.end()
        return None

    def braced(self, start: int, end: int, quoted: bool) -> ir.Param:
        """``${...}`` whose contents are ``text[start:end]``."""
        t = self.t
        k = start
        prefix = ""
        if end - k >= 2 and t[k] in "#!" and (t[k + 1].isalnum() or t[k + 1] in "_@*#?-$!"):
            prefix = t[k]
            k += 1
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!0-]").match(t, k, end)
        if m is None:
            name = ""
        else:
            name = m.group(0)
            k = m.end()
        op = ""
        if k < end and t[k] == "[":
            close = t.find("]", k, end)
            close = end - 1 if close < 0 else close
            index = t[k + 1 : close]
            k = close + 1
            if index not in ("@", "*"):
                op = "["
        if k >= end:
            if op == "[":
                return ir.Param(name, "[", None, None, quoted)
            if prefix:
                return ir.Param(name, "len" if prefix == "#" else "!", None, None, quoted)
            return ir.Param(name, "", None, None, quoted)
        found = next((o for o in _PARAM_OPS if t.startswith(o, k)), None)
        if op == "[":  # parse.py keeps "[" and whatever follows the operator as the argument
            k += len(found) if found else 0
            return ir.Param(name, "[", self.arg(k, end, quoted, False, quoted), None, quoted)
        if found is None:
            return ir.Param(name, t[k], self.arg(k + 1, end, quoted, False, quoted), None, quoted)
        op = found
        k += len(op)
        if op in _PATTERN_OPS:
            # The pattern is a pattern even inside double quotes (unquoted parts); quotes inside
            # it and inside the replacement are quote characters there too.
            sep = _find_top(t, k, end, "/", False) if op in _SLASH_OPS else None
            if sep is None:
                return ir.Param(name, op, self.arg(k, end, False, True, False), None, quoted)
            return ir.Param(name, op, self.arg(k, sep, False, True, False),
                            self.arg(sep + 1, end, quoted, False, False), quoted)
        if op == ":":
            sep = _find_top(t, k, end, ":", quoted)
            if sep is None:
                return ir.Param(name, op, self.arg(k, end, quoted, False, quoted, strip=True), None, quoted)
            return ir.Param(name, op, self.arg(k, sep, quoted, False, quoted, strip=True),
                            self.arg(sep + 1, end, quoted, False, quoted, strip=True), quoted)
        return ir.Param(name, op, self.arg(k, end, quoted, False, quoted), None, quoted)

    def arg(self, start: int, end: int, quoted: bool, pattern: bool, dq_rules: bool,
            strip: bool = False) -> ir.Word:
        if strip:
            while start < end and self.t[start] in " \t\n":
                start += 1
            while end > start and self.t[end - 1] in " \t\n":
                end -= 1
        if start >= end:
            return ir.Word((ir.Lit(""),))
        parts = self.lex(start, end, quoted, pattern, dq_rules)
        return ir.Word(tuple(_merge(parts)), self.conv.loc.pos(start, end))

    def dq_end(self, i: int, end: int) -> int:
        """Index of the ``"`` closing a string whose contents start at ``i``."""
        t = self.t
        while i < end:
            c = t[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i
            elif c == "$" and i + 1 < end and t[i + 1] == "(":
                sub = self.subs.get(i)
                i = (self.sub_close(sub, end) if sub is not None else _find_close(t, i + 2, end, "(", ")")) + 1
            elif c == "$" and i + 1 < end and t[i + 1] == "{":
                i = _find_brace(t, i + 2, end, True) + 1
            elif c == "`":
                sub = self.subs.get(i)
                i = (self.sub_close(sub, end) if sub is not None else _find_backtick(t, i + 1, end)) + 1
            else:
                i += 1
        return end


# ------------------------------------------------------------ text scanning


def _skip_quoted(t: str, i: int, end: int) -> int:
    """``t[i]`` opens a quote; the offset after the closing one."""
    q = t[i]
    i += 1
    while i < end and t[i] != q:
        i += 2 if (t[i] == "\\" and q == '"') else 1
    return i + 1


def _find_close(t: str, i: int, end: int, open_: str, close: str) -> int:
    """Offset of the ``close`` matching an already-open ``open_`` (``end`` when unbalanced)."""
    depth = 1
    while i < end:
        c = t[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            i = _skip_quoted(t, i, end)
            continue
        if c == "`":
            i = _find_backtick(t, i + 1, end) + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return end


def _find_brace(t: str, i: int, end: int, quoted: bool) -> int:
    """Offset of the ``}`` closing a ``${`` whose contents start at ``i``."""
    depth = 1
    while i < end:
        c = t[i]
        if c == "\\":
            i += 2
            continue
        if c == '"' or (c == "'" and not quoted):
            i = _skip_quoted(t, i, end)
            continue
        if c == "`":
            i = _find_backtick(t, i + 1, end) + 1
            continue
        if c == "$" and i + 1 < end and t[i + 1] == "(":
            i = _find_close(t, i + 2, end, "(", ")") + 1
            continue
        if c == "$" and i + 1 < end and t[i + 1] == "{":
            depth += 1
            i += 2
            continue
        if c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return end


def _find_backtick(t: str, i: int, end: int) -> int:
    while i < end:
        if t[i] == "\\":
            i += 2
            continue
        if t[i] == "`":
            return i
        i += 1
    return end


def _find_top(t: str, i: int, end: int, ch: str, quoted: bool) -> int | None:
    """First unescaped, unquoted ``ch`` in ``t[i:end]`` outside nested expansions."""
    while i < end:
        c = t[i]
        if c == "\\":
            i += 2
            continue
        if c == '"' or (c == "'" and not quoted):
            i = _skip_quoted(t, i, end)
            continue
        if c == "`":
            i = _find_backtick(t, i + 1, end) + 1
            continue
        if c == "$" and i + 1 < end and t[i + 1] == "(":
            i = _find_close(t, i + 2, end, "(", ")") + 1
            continue
        if c == "$" and i + 1 < end and t[i + 1] == "{":
            i = _find_brace(t, i + 2, end, quoted) + 1
            continue
        if c == ch:
            return i
        i += 1
    return None


# ----------------------------------------------------------- [ ... ] parser


class _TestParser:
    """``test`` expression grammar: -o below -a below ! below primaries and ( )."""

    def __init__(self, conv: _Converter, words: list[Node]) -> None:
        self.conv = conv
        self.words = words
        self.raws = [conv.raw(w) for w in words]
        self.i = 0

    def parse(self) -> ir.TestExpr:
        expr = self.or_()
        while self.i < len(self.words):  # junk after a full expression: keep the words visible
            expr = ir.TAnd(expr, ir.TWord(self.conv.word(self.words[self.i])))
            self.i += 1
        return expr

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.raws[j] if j < len(self.raws) else None

    def or_(self) -> ir.TestExpr:
        left = self.and_()
        while self.peek() == "-o" and self.peek(1) is not None:
            self.i += 1
            left = ir.TOr(left, self.and_())
        return left

    def and_(self) -> ir.TestExpr:
        left = self.not_()
        while self.peek() == "-a" and self.peek(1) is not None:
            self.i += 1
            left = ir.TAnd(left, self.not_())
        return left

    def not_(self) -> ir.TestExpr:
        if self.peek() == "!" and self.peek(1) is not None:
            self.i += 1
            return ir.TNot(self.not_())
        return self.primary()

    def primary(self) -> ir.TestExpr:
        tok = self.peek()
        if tok in ("(", "\\(", "'('", '"("') and self.peek(1) is not None:
            self.i += 1
            expr = self.or_()
            if self.peek() in (")", "\\)", "')'", '")"'):
                self.i += 1
            return expr
        nxt = self.peek(1)
        if nxt is not None and nxt in _TEST_BINARY and self.peek(2) is not None:
            left = self.conv.word(self.words[self.i])
            right = self.conv.word(self.words[self.i + 2], pattern=nxt in _TEST_PATTERN)
            self.i += 3
            return ir.TBinary(nxt.lstrip("\\"), left, right)
        if tok is not None and tok in _TEST_UNARY and nxt is not None:
            arg = self.conv.word(self.words[self.i + 1])
            self.i += 2
            return ir.TUnary(tok, arg)
        word = self.conv.word(self.words[self.i])
        self.i += 1
        return ir.TWord(word)


# ----------------------------------------------------- helpers (as parse.py)
