"""tree-sitter-bash front-end: source bytes -> ``ir.Script``.

tree-sitter recovers from syntax errors; every ERROR or MISSING node becomes a
``ParseError`` with its position, and callers decide what to trust.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import tree_sitter
import tree_sitter_bash

from bot.shell import ir
from bot.shell.words import ansi_c as _ansi_c
from bot.shell.words import merge as _merge
from bot.shell.words import unescape_dq as _unescape_dq
from bot.shell.words import unescape_unquoted as _unescape_unquoted

Node = Any  # tree_sitter.Node (the stubs are incomplete)


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(path: str, source: bytes) -> ir.Script:
    original = source
    tree = _parser().parse(source)
    for _ in range(64):
        cut = _swallowed_newline(tree.root_node, source)
        if cut is None:
            break
        # tree-sitter-bash#347: after some words (``head -30``) a newline does not end the
        # command and the next line becomes its arguments. End the line explicitly; byte
        # offsets after this point move by one, lines and columns do not.
        source = source[:cut] + b";" + source[cut:]
        tree = _parser().parse(source)
    conv = _Converter(source)
    body = conv.stmts(tree.root_node.children)
    errors: list[ir.ParseError] = []
    if tree.root_node.has_error:
        _collect_errors(tree.root_node, errors)
    return ir.Script(path=path, body=tuple(body), errors=tuple(errors), source=original)


def _swallowed_newline(root: Node, source: bytes) -> int | None:
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
            stack.extend(node.children)
    return None


def _collect_errors(node: Node, out: list[ir.ParseError]) -> None:
    if node.type == "ERROR" or node.is_missing:
        what = f"missing {node.type!r}" if node.is_missing else "syntax error"
        snippet = node.text.decode("utf-8", "replace").strip().splitlines()
        if snippet and not node.is_missing:
            what += f" near {snippet[0][:40]!r}"
        out.append(ir.ParseError(what, _pos(node)))
        return
    if node.has_error:
        for child in node.children:
            _collect_errors(child, out)


def _pos(node: Node) -> ir.Pos:
    (r, c), (er, ec) = node.start_point, node.end_point
    return ir.Pos(r + 1, c + 1, er + 1, ec + 1, node.start_byte, node.end_byte)


_DECL = {"export", "local", "readonly", "declare", "typeset"}
_SKIP = {"comment", "heredoc_body", "heredoc_end", "heredoc_start", ";", ";;", "&", "\n"}


class _Converter:
    def __init__(self, source: bytes) -> None:
        self.src = source

    def text_between(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8", "replace") if end > start else ""

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # ------------------------------------------------------------ statements
    def stmts(self, nodes: list[Node]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for n in nodes:
            if not n.is_named or n.type in _SKIP:
                continue
            s = self.stmt(n)
            if s is not None:
                out.append(s)
        return out

    def stmt(self, n: Node) -> ir.Stmt | None:
        t = n.type
        pos = _pos(n)
        if t == "command":
            return self.command(n)
        if t in ("variable_assignment", "variable_assignments"):
            assigns = [self.assign(c) for c in ([n] if t == "variable_assignment" else n.named_children)
                       if c.type == "variable_assignment"]
            return ir.Command((), tuple(assigns), (), pos)
        if t == "declaration_command":
            kind = self.text(n.children[0])
            decl_assigns: list[ir.Assign] = []
            flags: list[str] = []
            for c in n.children[1:]:
                if c.type == "variable_assignment":
                    decl_assigns.append(self.assign(c))
                elif c.type == "variable_name":
                    decl_assigns.append(ir.Assign(self.text(c), None, _pos(c)))
                elif c.type == "word" and self.text(c).startswith(("-", "+")):
                    flags.append(self.text(c))
            return ir.Decl(kind, tuple(decl_assigns), tuple(flags), pos)
        if t == "unset_command":
            words = [ir.Word((ir.Lit("unset"),), _pos(n.children[0]))]
            words += [self.word(c) for c in n.named_children]
            return ir.Command(tuple(words), (), (), pos)
        if t == "test_command" and n.children and n.children[0].type == "[":
            return ir.Test(self.bracket_test(n), pos)
        if t == "test_command":
            inner = [c for c in n.named_children]
            expr = self.test_expr(inner[0]) if inner else None
            return ir.Test(expr, pos)
        if t == "list":
            return self.andor(n)
        if t == "pipeline":
            kids = [c for c in n.named_children if c.type not in _SKIP]
            negated = bool(kids) and kids[0].type == "negated_command"
            if negated:  # `! a | b` negates the whole pipeline
                kids = [c for c in kids[0].named_children] + kids[1:]
            cmds = [self.stmt(c) for c in kids]
            stmts = [c for c in cmds if c is not None]
            if negated:
                return ir.Pipeline(tuple(stmts), True, pos)
            if stmts and isinstance(stmts[-1], ir.AndOr):
                # tree-sitter nests `a | b || c` as `a | (b || c)`; bash reads `(a | b) || c`
                tail = stmts[-1]
                head = stmts[:-1] + (list(tail.first.cmds) if isinstance(tail.first, ir.Pipeline)
                                     and not tail.first.negated else [tail.first])
                return ir.AndOr(ir.Pipeline(tuple(head), False, pos), tail.rest, pos)
            return ir.Pipeline(tuple(stmts), False, pos)
        if t == "negated_command":
            inner_stmts = self.stmts(n.named_children)
            return ir.Pipeline(tuple(inner_stmts), True, pos)
        if t == "if_statement":
            return self.if_stmt(n)
        if t == "case_statement":
            return self.case_stmt(n)
        if t == "for_statement":
            var = n.child_by_field_name("variable")
            values = [self.word(c) for c in n.children_by_field_name("value")]
            body = n.child_by_field_name("body")
            has_in = any(c.type == "in" for c in n.children)
            return ir.For(self.text(var) if var else "_", tuple(values) if has_in else None,
                          tuple(self.block(body)), pos)
        if t in ("while_statement", "until_statement"):
            cond = self.stmts(n.children_by_field_name("condition"))
            body = n.child_by_field_name("body")
            until = n.children[0].type == "until"
            return ir.While(tuple(cond), tuple(self.block(body)), until, pos)
        if t == "compound_statement":
            inner = [c for c in n.named_children if c.type not in _SKIP]
            if inner and all(c.type not in _STATEMENT_TYPES for c in inner):
                return ir.ArithCmd(self.text(n), pos)  # (( ... ))
            return ir.Group(tuple(self.stmts(n.children)), False, (), pos)
        if t == "subshell":
            return ir.Group(tuple(self.stmts(n.children)), True, (), pos)
        if t == "function_definition":
            name = n.child_by_field_name("name")
            body = n.child_by_field_name("body")
            return ir.FuncDef(self.text(name) if name else "_", tuple(self.block(body)), pos)
        if t == "redirected_statement":
            body = n.child_by_field_name("body")
            extra: list[ir.Word] = []
            first_redirect = next(iter(n.children_by_field_name("redirect")), None)
            if body is not None and first_redirect is not None:
                # plain words tree-sitter drops between a command and its here-document (`python - <<EOF`)
                gap = self.text_between(body.end_byte, first_redirect.start_byte)
                gap = gap.replace("\\\r\n", " ").replace("\\\n", " ")  # line continuations are blanks
                extra += [ir.Word((ir.Lit(w),), _pos(body)) for w in gap.split()]
            redirs = tuple(self.redirect(c, extra) for c in n.children_by_field_name("redirect"))
            inner_stmt = self.stmt(body) if body is not None else None
            if inner_stmt is None:
                return None
            return _attach(inner_stmt, redirs, tuple(extra), pos)
        if t in ("c_style_for_statement", "select_statement"):
            body = n.child_by_field_name("body")
            return ir.While((ir.Opaque(t, pos),), tuple(self.block(body)), False, pos)
        if t == "ERROR":
            return None
        return ir.Opaque(t, pos)

    def block(self, n: Node | None) -> list[ir.Stmt]:
        if n is None:
            return []
        if n.type in ("do_group", "compound_statement"):
            return self.stmts(n.children)
        s = self.stmt(n)
        return [s] if s is not None else []

    def andor(self, n: Node) -> ir.Stmt:
        # tree-sitter nests lists left-associatively: ((a && b) || c)
        items: list[tuple[str, ir.Stmt]] = []

        def walk(node: Node, op: str) -> None:
            if node.type == "list":
                cur = op
                for c in node.children:
                    if c.type in ("&&", "||"):
                        cur = c.type
                    elif c.is_named and c.type not in _SKIP:
                        walk(c, cur)
                        cur = ""
            else:
                s = self.stmt(node)
                if s is not None:
                    items.append((op, s))

        walk(n, "")
        if not items:
            return ir.Opaque("list", _pos(n))
        first = items[0][1]
        rest = tuple((op or "&&", s) for op, s in items[1:])
        return ir.AndOr(first, rest, _pos(n))

    def if_stmt(self, n: Node) -> ir.If:
        clauses: list[tuple[tuple[ir.Stmt, ...], tuple[ir.Stmt, ...]]] = []
        else_body: tuple[ir.Stmt, ...] | None = None
        cond: list[ir.Stmt] = []
        body: list[ir.Stmt] = []
        mode = "cond"
        for c in n.children:
            if c.type in ("if", "elif"):
                mode = "cond"
            elif c.type == "then":
                mode = "body"
            elif c.type == "fi":
                break
            elif c.type == "elif_clause":
                clauses.append((tuple(cond), tuple(body)))
                cond, body = self._elif(c)
            elif c.type == "else_clause":
                else_body = tuple(self.stmts(c.children))
            elif c.is_named and c.type not in _SKIP:
                s = self.stmt(c)
                if s is not None:
                    (cond if mode == "cond" else body).append(s)
        clauses.append((tuple(cond), tuple(body)))
        return ir.If(tuple(clauses), else_body, _pos(n))

    def _elif(self, n: Node) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
        cond: list[ir.Stmt] = []
        body: list[ir.Stmt] = []
        mode = "cond"
        for c in n.children:
            if c.type == "then":
                mode = "body"
            elif c.is_named and c.type not in _SKIP:
                s = self.stmt(c)
                if s is not None:
                    (cond if mode == "cond" else body).append(s)
        return cond, body

    def case_stmt(self, n: Node) -> ir.Case:
        value = n.child_by_field_name("value")
        word = self.word(value) if value is not None else ir.Word((), _pos(n))
        items: list[tuple[tuple[ir.Word, ...], tuple[ir.Stmt, ...]]] = []
        for item in n.named_children:
            if item.type != "case_item":
                continue
            pats = tuple(self.word(p, pattern=True) for p in item.children_by_field_name("value"))
            seen_paren = False
            body_nodes = []
            for c in item.children:
                if c.type == ")":
                    seen_paren = True
                elif seen_paren:
                    body_nodes.append(c)
            items.append((pats, tuple(self.stmts(body_nodes))))
        return ir.Case(word, tuple(items), _pos(n))

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
                redirs.append(self.redirect(c, words))
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

    def redirect(self, n: Node, extra: list[ir.Word] | None = None) -> ir.Redirect:
        """A redirection; words tree-sitter hangs after its target (``grep 2>/dev/null -q x``,
        tree-sitter-bash#233) are command arguments and go to ``extra``."""
        op = ""
        fd: int | None = None
        target: ir.Word | None = None
        for c in n.children:
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
        return ir.Redirect(op, fd, target)

    # ----------------------------------------------------------------- tests
    def bracket_test(self, n: Node) -> ir.TestExpr | None:
        """``[ ... ]``: tree-sitter's expression tree misreads ``-a``/``-o``/``!`` there, so
        take the words as bash does and apply test(1)'s precedence."""
        first, last = n.children[0], n.children[-1]
        inner = self.src[first.end_byte : last.start_byte if last.type == "]" else n.end_byte]
        sub = _parser().parse(b": " + inner)
        cmd = sub.root_node.named_children[0] if sub.root_node.named_children else None
        if cmd is None or cmd.type != "command" or sub.root_node.has_error:
            inner_nodes = [c for c in n.named_children]
            return self.test_expr(inner_nodes[0]) if inner_nodes else None
        conv = _Converter(b": " + inner)
        nodes = [c for c in cmd.children if c.type != "command_name"
                 and (c.is_named or c.type in _BINARY or c.type in ("!", "(", ")"))]
        line_off = first.end_point[0]
        col_off = first.end_point[1] - 2
        byte_off = first.end_byte - 2

        def word(k: int, pattern: bool = False) -> ir.Word:
            if not nodes[k].is_named:
                return ir.Word((ir.Lit(conv.text(nodes[k])),), _rebase(_pos(nodes[k]), line_off, col_off, byte_off))
            w = conv.word(nodes[k], pattern=pattern)
            rebased: ir.Word = _rebase(w, line_off, col_off, byte_off)
            return rebased

        expr, _ = _test_words([conv.text(c) if c.type in ("word", "test_operator") or not c.is_named else None
                               for c in nodes],
                              word, 0)
        return expr
    def test_expr(self, n: Node) -> ir.TestExpr:
        t = n.type
        if t == "binary_expression":
            left = n.child_by_field_name("left")
            right = n.child_by_field_name("right")
            op_node = n.child_by_field_name("operator")
            op = self.text(op_node) if op_node is not None else "=="
            if op in ("&&", "-a") and left is not None and right is not None:
                return ir.TAnd(self.test_expr(left), self.test_expr(right))
            if op in ("||", "-o") and left is not None and right is not None:
                return ir.TOr(self.test_expr(left), self.test_expr(right))
            lw = self.word(left) if left is not None else ir.Word(())
            rw = self.word(right, pattern=op in ("==", "=", "!=", "=~")) if right is not None else ir.Word(())
            return ir.TBinary(op, lw, rw)
        if t == "unary_expression":
            op_node = n.child_by_field_name("operator")
            op = self.text(op_node) if op_node is not None else "!"
            operand = [c for c in n.named_children if c is not op_node and c.type != "test_operator"]
            if op == "!":
                return ir.TNot(self.test_expr(operand[0])) if operand else ir.TWord(ir.Word(()))
            return ir.TUnary(op, self.word(operand[0]) if operand else ir.Word(()))
        if t == "parenthesized_expression":
            inner = n.named_children
            return self.test_expr(inner[0]) if inner else ir.TWord(ir.Word(()))
        return ir.TWord(self.word(n))

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
        elif t == "expansion":
            out.append(self.expansion(n, quoted))
        elif t == "command_substitution":
            out.append(ir.CmdSub(tuple(self.stmts(n.children)), quoted))
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

    def expansion(self, n: Node, quoted: bool) -> ir.Param:
        children = [c for c in n.children if c.type not in ("${", "}")]
        name = ""
        op = ""
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
                index = self.text(idx) if idx is not None else ""
                if index not in ("@", "*"):
                    op = "["
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


_UNARY = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x", "-G",
          "-L", "-N", "-O", "-S", "-z", "-n", "-v", "-o"}
_BINARY = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "=~"}


def _rebase(obj: Any, line_off: int, col_off: int, byte_off: int) -> Any:
    """Move positions of a sub-parse back into the file (first line also shifts columns)."""
    import dataclasses

    if isinstance(obj, ir.Pos):
        if obj.line == 0:
            return obj
        return ir.Pos(obj.line + line_off, obj.col + (col_off if obj.line == 1 else 0), obj.end_line + line_off,
                      obj.end_col + (col_off if obj.end_line == 1 else 0), obj.start_byte + byte_off,
                      obj.end_byte + byte_off)
    if isinstance(obj, tuple):
        return tuple(_rebase(x, line_off, col_off, byte_off) for x in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: _rebase(getattr(obj, f.name), line_off, col_off, byte_off)
                                           for f in dataclasses.fields(obj)})
    return obj


def _test_words(texts: list[str | None], word: Any, i: int) -> tuple[ir.TestExpr | None, int]:
    """test(1) grammar: expr := and (-o and)*; and := not (-a not)*; not := ! not | primary.
    ``texts`` are the plain words (None for words with quotes or expansions); ``word(k,
    pattern)`` converts word k."""
    n = len(texts)

    def lit(k: int) -> str | None:
        return texts[k] if k < n else None

    def primary(k: int) -> tuple[ir.TestExpr, int]:
        if lit(k) == "(":
            e, k = expr(k + 1)
            return e or ir.TWord(ir.Word(())), k + 1 if lit(k) == ")" else k
        if k + 2 < n and lit(k + 1) in _BINARY:
            op = lit(k + 1) or ""
            return ir.TBinary(op, word(k), word(k + 2, op in ("=", "==", "!=", "=~"))), k + 3
        if lit(k) in _UNARY and k + 1 < n:
            return ir.TUnary(lit(k) or "", word(k + 1)), k + 2
        if k < n:
            return ir.TWord(word(k)), k + 1
        return ir.TWord(ir.Word(())), k

    def negation(k: int) -> tuple[ir.TestExpr, int]:
        if lit(k) == "!" and k + 1 < n:
            e, k = negation(k + 1)
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


def _attach(stmt: ir.Stmt, redirs: tuple[ir.Redirect, ...], extra: tuple[ir.Word, ...],
            pos: ir.Pos) -> ir.Stmt:
    """Put redirections (and stray argument words) on the statement bash gives them to:
    the last simple command of a list or pipeline (tree-sitter-bash#345 binds them to all)."""
    if isinstance(stmt, ir.Command):
        return ir.Command(stmt.words + extra, stmt.assigns, stmt.redirects + redirs, stmt.pos)
    if isinstance(stmt, ir.AndOr) and stmt.rest:
        op, last = stmt.rest[-1]
        return ir.AndOr(stmt.first, stmt.rest[:-1] + ((op, _attach(last, redirs, extra, pos)),), stmt.pos)
    if isinstance(stmt, ir.AndOr):
        return ir.AndOr(_attach(stmt.first, redirs, extra, pos), (), stmt.pos)
    if isinstance(stmt, ir.Pipeline) and stmt.cmds and not stmt.negated:
        return ir.Pipeline(stmt.cmds[:-1] + (_attach(stmt.cmds[-1], redirs, extra, pos),), False, stmt.pos)
    return ir.Group((stmt,), False, redirs, pos)


_STATEMENT_TYPES = {
    "command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command",
    "test_command", "list", "pipeline", "negated_command", "if_statement", "case_statement",
    "for_statement", "c_style_for_statement", "while_statement", "compound_statement", "subshell",
    "function_definition", "redirected_statement",
}










def syntax_errors(source: bytes) -> tuple[ir.ParseError, ...]:
    """Syntax errors only (no IR): a cheap check for files the analysis does not evaluate."""
    tree = _parser().parse(source)
    errors: list[ir.ParseError] = []
    if tree.root_node.has_error:
        _collect_errors(tree.root_node, errors)
    return tuple(errors)
