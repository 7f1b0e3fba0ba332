"""Words for the tree-sitter front-end: tree-sitter word nodes -> IR parts.

``WordConverter`` is the base of ``parse._Converter``: it holds the source, counts
nesting levels (``nesting.MAX_NESTING``) and converts words, strings and ``${...}``
expansions; the statements of a ``$( )`` come from the subclass's ``stmts``.
"""

from __future__ import annotations

from typing import Any

from bot.shell import ir, nesting
from bot.shell.parse_tree import pos as _pos
from bot.shell.words import ansi_c as _ansi_c
from bot.shell.words import merge as _merge
from bot.shell.words import unescape_dq as _unescape_dq
from bot.shell.words import unescape_heredoc as _unescape_heredoc
from bot.shell.words import unescape_unquoted as _unescape_unquoted

Node = Any  # tree_sitter.Node (the stubs are incomplete)


class WordConverter:
    def __init__(self, source: bytes) -> None:
        self.src = source
        self.depth = 0  # nesting levels entered (``parse_tree.NESTING``, test operators)
        self.errors: list[ir.ParseError] = []  # constructs cut at the nesting limit

    def enter(self, n: Node) -> bool:
        """Count a nesting level; False (and an error) when ``n`` is one level too deep."""
        if self.depth >= nesting.MAX_NESTING:
            if not self.errors:  # the first cut says where; the rest is the same construct
                self.errors.append(nesting.too_deep(_pos(n), n.type.replace("_", " ")))
            return False
        self.depth += 1
        return True

    def text_between(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8", "replace") if end > start else ""

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def stmts(self, nodes: list[Node]) -> list[ir.Stmt]:
        raise NotImplementedError  # parse._Converter

    # ----------------------------------------------------------------- words
    def word(self, n: Node, pattern: bool = False) -> ir.Word:
        parts: list[ir.Part] = []
        self._parts(n, parts, quoted=False, pattern=pattern)
        return ir.Word(tuple(_merge(parts)), _pos(n))

    def _parts(self, n: Node, out: list[ir.Part], quoted: bool, pattern: bool = False) -> None:
        t = n.type
        if t == "concatenation":
            kids = list(n.children)
            i = 0
            while i < len(kids):
                c = kids[i]
                if not c.is_named and self.text(c) == "$$":
                    out.append(ir.Param("$", "", None, None, quoted))  # `$$` after text
                    i += 1
                    continue
                self._parts(c, out, quoted, pattern)
                i += 1
        elif t == "string":
            self._string(n, out)
        elif t == "raw_string":
            out.append(ir.Lit(self.text(n)[1:-1], True))
        elif t == "ansi_c_string":
            out.append(ir.Lit(_ansi_c(self.text(n)[2:-1]), True))
        elif t == "translated_string":
            inner = n.named_children
            if inner:
                self._string(inner[0], out)
        elif t == "simple_expansion":
            name_node = n.named_children[0] if n.named_children else None
            name = self.text(name_node) if name_node is not None else ""
            if len(name) > 1 and name[0].isdigit():
                # `$10` is `${1}0`, `$1_log` is `${1}_log`
                out.append(ir.Param(name[0], "", None, None, quoted))
                out.append(ir.Lit(name[1:], quoted))
            else:
                out.append(ir.Param(name, "", None, None, quoted))
        elif t in ("expansion", "command_substitution"):  # one nesting level (counted inline: fewer frames)
            if not self.enter(n):
                out.append(nesting.unknown_part(_pos(n), quoted))
                return
            try:
                out.append(self.expansion(n, quoted) if t == "expansion"
                           else ir.CmdSub(tuple(self.stmts(n.children)), quoted))
            finally:
                self.depth -= 1
        elif t == "arithmetic_expansion":
            out.append(ir.Arith(self.text(n)[3:-2]))
        elif t == "process_substitution":
            out.append(ir.Lit("/dev/fd/63", True))
        elif t in ("word", "number", "extglob_pattern", "regex", "special_variable_name", "variable_name",
                   "test_operator", "brace_expression", "command_name"):
            txt = self.text(n)
            if t == "word" and not pattern:
                txt = _unescape_unquoted(txt)
            out.append(ir.Lit(txt, quoted))
        else:
            out.append(ir.Lit(self.text(n), quoted))

    def _string(self, n: Node, out: list[ir.Part]) -> None:
        # Literal text is whatever lies between the named children (tree-sitter drops
        # some characters, e.g. newlines, from string_content nodes).
        start = n.start_byte + 1
        end = n.end_byte - 1
        for c in n.named_children:
            if c.type == "string_content":
                continue
            if c.start_byte > start:
                out.append(ir.Lit(_unescape_dq(self.src[start : c.start_byte].decode("utf-8", "replace")), True))
            self._parts(c, out, quoted=True)
            start = c.end_byte
        if end > start:
            out.append(ir.Lit(_unescape_dq(self.src[start:end].decode("utf-8", "replace")), True))

    def heredoc(self, n: Node, literal: bool) -> ir.Word:
        """A here-document's text: verbatim under a quoted delimiter (``<<'EOF'``), else
        with its expansions (the text between them keeps backslash escapes of ``$``, `` ` ``, ``\\``)."""
        if literal:
            return ir.Word((ir.Lit(self.text(n), True),), _pos(n))
        out: list[ir.Part] = []
        start = n.start_byte
        for c in n.named_children:
            if c.type == "heredoc_content":
                continue
            if c.start_byte > start:
                out.append(ir.Lit(_unescape_heredoc(self.text_between(start, c.start_byte)), True))
            self._parts(c, out, quoted=True)
            start = c.end_byte
        if n.end_byte > start:
            out.append(ir.Lit(_unescape_heredoc(self.text_between(start, n.end_byte)), True))
        return ir.Word(tuple(_merge(out)), _pos(n))

    def expansion(self, n: Node, quoted: bool) -> ir.Param:
        children = [c for c in n.children if c.type not in ("${", "}")]
        name = ""
        op = ""
        index = ""
        args: list[list[Node]] = []
        starts: list[int] = []  # where each argument's text begins (just after its operator)
        prefix_ops: list[str] = []
        for c in children:
            if c.type in ("variable_name", "special_variable_name") and not name and not op:
                name = self.text(c)
            elif c.type == "subscript" and not name:
                sub = c.child_by_field_name("name")
                idx = c.child_by_field_name("index")
                name = self.text(sub) if sub is not None else ""
                sub_index = self.text(idx) if idx is not None else ""
                if sub_index not in ("@", "*"):
                    op = "["
                else:
                    index = sub_index
            elif not c.is_named:
                tok = c.type
                if not name and tok in ("#", "!"):
                    prefix_ops.append(tok)
                elif not op:
                    op = tok
                    args.append([])
                    starts.append(c.end_byte)
                elif op in ("/", "//", "/#", "/%") and tok == "/" and len(args) == 1 \
                        and self.src[c.start_byte - 1 : c.start_byte] != b"\\":
                    args.append([])
                    starts.append(c.end_byte)
                elif op == ":" and tok == ":" and len(args) == 1:
                    args.append([])
                    starts.append(c.end_byte)
                elif args:
                    args[-1].append(c)
            else:
                if not args:
                    args.append([])
                    starts.append(c.start_byte)
                args[-1].append(c)
        if prefix_ops and not op and not name:
            return ir.Param(prefix_ops[0], "", None, None, quoted)  # `${#}` `${!}`
        if prefix_ops and not op:
            op = "len" if prefix_ops[0] == "#" else "!"
        if op == "[" and not args:
            return ir.Param(name, "[", None, None, quoted)
        if index and not op and not prefix_ops:
            return ir.Param(name, "", None, None, quoted, index)

        def to_word(nodes: list[Node], start: int) -> ir.Word | None:
            if not nodes:
                return ir.Word((ir.Lit(""),))
            parts: list[ir.Part] = []
            # Keep the raw text between nodes (tree-sitter may split a pattern or drop a
            # leading blank, as in ${X%% *}).
            blank_matters = op in ("#", "##", "%", "%%", "/", "//", "/#", "/%")
            cursor = min(start, nodes[0].start_byte) if blank_matters else nodes[0].start_byte
            for node in nodes:
                if node.start_byte > cursor:
                    parts.append(ir.Lit(self.src[cursor : node.start_byte].decode("utf-8", "replace"), quoted))
                is_pattern = op in ("#", "##", "%", "%%", "/", "//", "/#", "/%") and len(args) > 0 \
                    and nodes is args[0]
                # The pattern of ${X%%pat} is a pattern even inside double quotes.
                self._parts(node, parts, quoted and not is_pattern, pattern=is_pattern)
                cursor = node.end_byte
            return ir.Word(tuple(_merge(parts)), _pos(nodes[0]))

        arg = to_word(args[0], starts[0]) if args else None
        arg2 = to_word(args[1], starts[1]) if len(args) > 1 else None
        if op == "/" and arg is not None and arg.parts and isinstance(arg.parts[0], ir.Lit):
            first = arg.parts[0].text
            if first[:1] in ("/", "#", "%"):
                op = "/" + first[0] if first[0] != "/" else "//"
                arg = ir.Word((ir.Lit(first[1:], arg.parts[0].quoted),) + arg.parts[1:], arg.pos)
        return ir.Param(name, op, arg, arg2, quoted)
