"""Words for the tree-sitter front-end: tree-sitter word nodes -> IR parts.

``WordConverter`` is the base of ``parse._Converter``: it holds the source, counts
nesting levels (``nesting.MAX_NESTING``) and converts words, strings and ``${...}``
expansions; the statements of a ``$( )`` come from the subclass's ``stmts``.
"""

from __future__ import annotations

from typing import Any

from bot.shell.front.parse_tree import parser as _parser
from bot.shell.front.parse_tree import pos as _pos
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir
from bot.shell.ir.words import ansi_c as _ansi_c
from bot.shell.ir.words import merge as _merge
from bot.shell.ir.words import unescape_backquoted as _unescape_backquoted
from bot.shell.ir.words import unescape_dq as _unescape_dq
from bot.shell.ir.words import unescape_heredoc as _unescape_heredoc
from bot.shell.ir.words import unescape_unquoted as _unescape_unquoted

Node = Any  # tree_sitter.Node (the stubs are incomplete)

MAX_REPARSED = 64  # `...` bodies in expansion arguments parsed on their own, per file
_WORD_OPS = ("-", ":-", "=", ":=", "+", ":+", "?", ":?")  # an argument that is a word, not a pattern


class WordConverter:
    def __init__(self, source: bytes) -> None:
        self.src = source
        self.depth = 0  # nesting levels entered (``parse_tree.NESTING``, test operators)
        self.errors: list[ir.ParseError] = []  # constructs cut at the nesting limit
        self.reparsed = 0  # `...` bodies parsed on their own (``_substitution``)

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
        elif t == "command_substitution" and _arith_text(self.text(n)):
            # ``${X:-$(( a > b ? a : b ))}``: inside an expansion tree-sitter-bash reads ``$((`` as
            # ``$( (`` (a subshell); bash reads arithmetic (the trace oracle found it)
            out.append(ir.Arith(self.text(n)[3:-2]))
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
            # tree-sitter-bash puts blanks right after the opening quote into the ``$`` token
            # of an expansion that follows them (``" $F"``): they are text
            head = self.src[c.start_byte:c.end_byte]
            blanks = len(head) - len(head.lstrip(b" \t"))
            if blanks and head[blanks:blanks + 1] == b"$":
                out.append(ir.Lit(head[:blanks].decode(), True))
            self._parts(c, out, quoted=True)
            start = c.end_byte
        if end > start:
            out.append(ir.Lit(_unescape_dq(self.src[start:end].decode("utf-8", "replace")), True))

    def _backquoted(self, n: Node, out: list[ir.Part], quoted: bool, pattern: bool) -> None:
        """A word of an expansion's argument with `` `...` `` in it (``${X:-`cmd`}``), which
        tree-sitter leaves as text: the text between substitutions as ``_parts`` would read it,
        each substitution's body parsed on its own at its place in the file."""
        text = self.src[n.start_byte:n.end_byte]
        i = start = 0
        while i < len(text):
            if text[i:i + 1] == b"\\":
                i += 2
                continue
            if text[i:i + 1] != b"`":
                i += 1
                continue
            close = i + 1
            while close < len(text) and text[close:close + 1] != b"`":
                close += 2 if text[close:close + 1] == b"\\" else 1
            if close >= len(text):
                break  # unclosed: text, as before
            if i > start:
                lit = text[start:i].decode("utf-8", "replace")
                out.append(ir.Lit(lit if pattern else _unescape_unquoted(lit), quoted))
            out.append(self._substitution(n.start_byte + i + 1, n.start_byte + close, quoted))
            i = start = close + 1
        if start < len(text):
            lit = text[start:].decode("utf-8", "replace")
            out.append(ir.Lit(lit if pattern else _unescape_unquoted(lit), quoted))

    def _substitution(self, start: int, end: int, quoted: bool) -> ir.Part:
        """`` `...` `` at ``src[start:end]``, parsed on its own and moved to its place in the
        file (``nesting.rebase``). A body that does not parse, or one past ``MAX_REPARSED`` in
        a file, is an unknown output."""
        line_start = self.src.rfind(b"\n", 0, start) + 1
        here = ir.Pos(self.src.count(b"\n", 0, start) + 1, start - line_start + 1)
        self.reparsed += 1
        if self.reparsed > MAX_REPARSED:
            return ir.CmdSub((ir.Opaque("substitution-not-parsed", here),), quoted)
        body = _unescape_backquoted(self.src[start:end].decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")
        tree = _parser().parse(body)
        if tree.root_node.has_error:
            return ir.CmdSub((ir.Opaque("substitution-not-parsed", here),), quoted)
        conv = type(self)(body)
        conv.depth = self.depth
        stmts = tuple(conv.stmts(tree.root_node.children))
        self.errors += conv.errors[:1] if not self.errors else []
        return ir.CmdSub(nesting.rebase(stmts, here.line - 1, here.col - 1, start), quoted)

    def _escaped_slash(self, start: int, end: int, quoted: bool,
                       pos: ir.Pos) -> tuple[ir.Word, ir.Word | None] | None:
        """``${X//\\//_}``: tree-sitter ends the pattern at an escaped ``/`` (and then reads the
        separator as the replacement's first character). For a plain pattern and replacement
        (no expansion, quote or substitution in them), split the text at the first ``/``
        that no backslash escapes, as bash does; None otherwise (tree-sitter's reading stands)."""
        data = self.src[start:end]
        if b"\\" not in data or any(ch in data for ch in b"$`'\""):
            return None
        raw = data.decode("utf-8", "replace")
        i = 0
        while i < len(raw) and raw[i] != "/":
            i += 2 if raw[i] == "\\" else 1
        pattern = ir.Word((ir.Lit(raw[:i], False),) if raw[:i] else (), pos)  # a pattern keeps its escapes
        if i >= len(raw):
            return pattern, None
        rest = _unescape_unquoted(raw[i + 1:])
        return pattern, ir.Word((ir.Lit(rest, quoted),) if rest else (ir.Lit(""),), pos)

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
                if node.type == "raw_string" and quoted and op in _WORD_OPS:
                    parts.append(ir.Lit(self.text(node), True))  # "${X:-'a'}": the quotes are characters
                elif node.type == "word" and b"`" in self.src[node.start_byte:node.end_byte]:
                    self._backquoted(node, parts, quoted and not is_pattern, is_pattern)
                else:
                    # The pattern of ${X%%pat} is a pattern even inside double quotes.
                    self._parts(node, parts, quoted and not is_pattern, pattern=is_pattern)
                cursor = node.end_byte
            return ir.Word(tuple(_merge(parts)), _pos(nodes[0]))

        split = self._escaped_slash(starts[0], n.children[-1].start_byte, quoted, _pos(args[0][0])) \
            if op in ("/", "//", "/#", "/%") and args and args[0] else None
        arg: ir.Word | None
        arg2: ir.Word | None
        if split is not None:
            arg, arg2 = split
        else:
            arg = to_word(args[0], starts[0]) if args else None
            arg2 = to_word(args[1], starts[1]) if len(args) > 1 else None
        if op == "/" and arg is not None and arg.parts and isinstance(arg.parts[0], ir.Lit):
            first = arg.parts[0].text
            if first[:1] in ("/", "#", "%"):
                op = "/" + first[0] if first[0] != "/" else "//"
                arg = ir.Word((ir.Lit(first[1:], arg.parts[0].quoted),) + arg.parts[1:], arg.pos)
        return ir.Param(name, op, arg, arg2, quoted)


def _arith_text(text: str) -> bool:
    """``$(( ... ))`` written as one token: arithmetic, however the grammar grouped it."""
    return text.startswith("$((") and text.endswith("))")
