"""Statements for the bashlex front-end: bashlex's tree -> ``ir`` statements.

``Converter`` walks the lists, pipelines and compound commands bashlex gives (nodes
carry ``pos`` as character offsets); simple commands, words and positions are
``bashlex_cmds.CommandConverter``'s (``Locator`` turns offsets into ``ir.Pos``). Nesting
levels are counted as ``parse.py`` counts them (``nesting.MAX_NESTING``).
"""

from __future__ import annotations

from typing import Any

import bashlex  # type: ignore[import-untyped, unused-ignore]

from bot.shell.front.bashlex_cmds import CommandConverter, ConvertError, Locator
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir
from bot.shell.ir.words import unescape_backquoted

Node = Any  # bashlex.ast.node (untyped)

__all__ = ["CommandConverter", "ConvertError", "Converter", "Locator"]
# bashlex node kinds that are one nesting level each (parse.py counts the same constructs)
_NESTING = {"compound", "if", "for", "while", "until", "function"}


class Converter(CommandConverter):
    """Statements: lists, pipelines, compound commands, functions, and the bodies of
    command substitutions (commands and words: ``bashlex_cmds.CommandConverter``)."""

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
        if node.kind not in _NESTING or (node.kind == "compound" and not _braced(node)):
            return self._stmt(node)
        if not self.enter(self.span(node)[0], node.kind):
            return nesting.unknown_stmt(self.pos(node))
        try:
            return self._stmt(node)
        finally:
            self.depth -= 1

    def _stmt(self, node: Node) -> ir.Stmt | None:
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

    def substitution_body(self, node: Node | None, start: int, end: int, backtick: bool) -> tuple[ir.Stmt, ...]:
        """The statements of ``$(...)``/`...`: ``node`` is bashlex's own parse when it made one."""
        if node is not None:
            cmd = getattr(node, "command", None)
            return tuple(self.stmts(cmd)) if cmd is not None else ()
        body = self.text[start:end]
        if backtick:
            body = unescape_backquoted(body)
            if len(body) != end - start:  # offsets no longer line up; report the substitution's position
                start = start - 1
        if not body.strip():
            return ()
        try:
            trees = bashlex.parse(body)
        except RecursionError:
            raise
        except Exception as exc:
            offset = getattr(exc, "position", None)
            raise ConvertError(str(exc) or type(exc).__name__,
                                start + offset if isinstance(offset, int) else start) from exc
        conv = Converter(self.text, self.loc, start)
        conv.depth, conv.errors = self.depth, self.errors
        return tuple(s for tree in trees for s in conv.stmts(tree))


def _braced(node: Node) -> bool:
    """A ``{ }`` or ``( )`` compound (bashlex also wraps ``if`` and loops in bare compound nodes)."""
    parts: list[Node] = list(getattr(node, "list", None) or [])
    return bool(parts) and parts[0].kind == "reservedword" and parts[0].word in ("{", "(")
