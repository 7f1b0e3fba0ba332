"""Simple commands, assignments and redirections for the tree-sitter front-end (``parse.py``),
here-documents with their text (``ir.Redirect.body``)."""

from __future__ import annotations

from typing import Any

from bot.shell.front.parse_tree import pos as _pos
from bot.shell.front.parse_words import WordConverter
from bot.shell.ir import nodes as ir

Node = Any  # tree_sitter.Node (the stubs are incomplete)

_SKIP = {"comment", "heredoc_body", "heredoc_end", "heredoc_start", ";", ";;", "&", "\n"}


class CommandConverter(WordConverter):
    def command(self, n: Node) -> ir.Command:
        words: list[ir.Word] = []
        assigns: list[ir.Assign] = []
        redirs: list[ir.Redirect] = []
        for c in n.children:
            if c.type == "variable_assignment":
                assigns.append(self.assign(c))
            elif c.type == "command_name":
                words.append(self.word(c.named_children[0] if c.named_children else c))
            elif c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                redirs.extend(self.redirects(c, words))
            elif c.is_named and c.type not in _SKIP:
                words.append(self.word(c))
        return ir.Command(tuple(words), tuple(assigns), tuple(redirs), _pos(n))

    def assign(self, n: Node) -> ir.Assign:
        name_node = n.child_by_field_name("name")
        value_node = n.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else "_"
        if name_node is not None and name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            name = (self.text(inner) if inner is not None else name) + "[]"
        append = any(c.type == "+=" for c in n.children)
        if value_node is not None and value_node.type == "array":
            elems = tuple(self.word(c) for c in value_node.named_children if c.type != "comment")
            return ir.Assign(name, None, _pos(n), append, elems)
        value = self.word(value_node) if value_node is not None else ir.Word((ir.Lit(""),), _pos(n))
        return ir.Assign(name, value, _pos(n), append)

    def redirects(self, n: Node, extra: list[ir.Word] | None = None) -> list[ir.Redirect]:
        """A redirection, and the file redirections tree-sitter nests in a here-document's
        (``cat <<EOF > f``)."""
        nested = [c for c in n.children if c.type == "file_redirect"] if n.type == "heredoc_redirect" else []
        return [self.redirect(n, extra), *(self.redirect(c, extra) for c in nested)]

    def redirect(self, n: Node, extra: list[ir.Word] | None = None) -> ir.Redirect:
        """A redirection; words tree-sitter hangs after its target (``grep 2>/dev/null -q x``,
        tree-sitter-bash#233) are command arguments and go to ``extra``."""
        op = ""
        fd: int | None = None
        target: ir.Word | None = None
        body: ir.Word | None = None
        for c in n.children:
            if c.type == "heredoc_body":
                start = next((x for x in n.children if x.type == "heredoc_start"), None)
                delim = self.text(start) if start is not None else ""
                body = self.heredoc(c, literal=any(q in delim for q in "'\"\\"))
                continue
            if c.type == "file_redirect":
                continue  # nested in a here-document's: its own redirection (``redirects``)
            if target is not None and c.is_named and c.type not in _SKIP and c.type != "heredoc_start" \
                    and extra is not None:
                extra.append(self.word(c))
                continue
            if c.type in ("file_descriptor",):
                try:
                    fd = int(self.text(c))
                except ValueError:
                    fd = None
            elif not c.is_named:
                op = op or c.type
            elif c.type in ("heredoc_start",):
                target = ir.Word((ir.Lit(self.text(c)),), _pos(c))
            elif c.type not in _SKIP and target is None:
                target = self.word(c)
        return ir.Redirect(op, fd, target, body)
