"""tree-sitter-bash front-end: source bytes -> ``ir.Script``.

tree-sitter recovers from syntax errors; every ERROR or MISSING node becomes a
``ParseError`` with its position, and callers decide what to trust. Constructs nested
deeper than ``nesting.MAX_NESTING`` become unknowns with a ``ParseError`` (see
``nesting.py``); every walk over the tree-sitter tree is iterative.

This module converts statements; ``parse_tree.py`` holds the parser and the walks over
its tree (syntax errors, nesting), ``parse_words.py`` the words, ``parse_cmds.py`` simple
commands, assignments and redirections (here-documents) and ``parse_cond.py`` the
``[ ... ]`` grammar.
"""

from __future__ import annotations

from typing import Any

from bot.shell.front.parse_cmds import _SKIP, CommandConverter
from bot.shell.front.parse_cond import BINARY as _BINARY
from bot.shell.front.parse_cond import test_words as _test_words
from bot.shell.front.parse_tree import NESTING as _NESTING
from bot.shell.front.parse_tree import TEST_NESTING as _TEST_NESTING
from bot.shell.front.parse_tree import collect_errors as _collect_errors
from bot.shell.front.parse_tree import parser as _parser
from bot.shell.front.parse_tree import pos as _pos
from bot.shell.front.parse_tree import swallowed_newline as _swallowed_newline
from bot.shell.front.parse_tree import syntax_errors as syntax_errors
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir

Node = Any  # tree_sitter.Node (the stubs are incomplete)


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
    try:
        body = conv.stmts(tree.root_node.children)
    except RecursionError:  # only when called from deep in a stack: the nesting limit keeps it shallow
        text = source.decode("utf-8", "replace")
        depth, offset = nesting.deepest(text)
        line = text.count("\n", 0, offset) + 1
        message = f"nesting too deep to convert from here ({depth} levels at the deepest point, Python stack)"
        return ir.Script(path, (), (ir.ParseError(message, ir.Pos(line, 1)),), original)
    errors: list[ir.ParseError] = []
    if tree.root_node.has_error:
        _collect_errors(tree.root_node, errors)
    errors += conv.errors
    return ir.Script(path=path, body=tuple(body), errors=tuple(errors), source=original)


_DECL = {"export", "local", "readonly", "declare", "typeset"}
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")


class _Converter(CommandConverter):
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
        if n.type not in _NESTING:
            return self._stmt(n)
        if not self.enter(n):
            return nesting.unknown_stmt(_pos(n))
        try:
            return self._stmt(n)
        finally:
            self.depth -= 1

    def _stmt(self, n: Node) -> ir.Stmt | None:
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
            return self.function(n, ())
        if t == "redirected_statement":
            body = n.child_by_field_name("body")
            extra: list[ir.Word] = []
            first_redirect = next(iter(n.children_by_field_name("redirect")), None)
            if body is not None and first_redirect is not None:
                # plain words tree-sitter drops between a command and its here-document (`python - <<EOF`)
                gap = self.text_between(body.end_byte, first_redirect.start_byte)
                gap = gap.replace("\\\r\n", " ").replace("\\\n", " ")  # line continuations are blanks
                extra += [ir.Word((ir.Lit(w),), _pos(body)) for w in gap.split()]
            redirs = tuple(r for c in n.children_by_field_name("redirect") for r in self.redirects(c, extra))
            if body is not None and body.type == "function_definition":
                return self.function(body, redirs)  # ``f() { ...; } > a 2>&1``: tree-sitter puts ``2>&1`` here
            inner_stmt = self.stmt(body) if body is not None else None
            if inner_stmt is None:
                return None
            return _attach(inner_stmt, redirs, tuple(extra), pos)
        if t == "c_style_for_statement":
            # ``for ((i = 0; i < N; i++))``: the initializer, then a loop on the condition whose
            # body ends with the update (all arithmetic; a part we cannot read is opaque)
            body = n.child_by_field_name("body")
            parts = {f: [self.text(c) for c in n.children_by_field_name(f)] for f in ("initializer", "condition",
                                                                                         "update")}
            init = [ir.ArithCmd(f"(({x}))", pos) for x in parts["initializer"]]
            test: ir.Stmt = (ir.ArithCmd(f"(({parts['condition'][0]}))", pos) if len(parts["condition"]) == 1
                             else ir.Opaque(t, pos))
            update = [ir.ArithCmd(f"(({x}))", pos) for x in parts["update"]]
            loop = ir.While((test,), (*self.block(body), *update), False, pos)
            return ir.Group((*init, loop), False, (), pos) if init else loop
        if t == "select_statement":
            body = n.child_by_field_name("body")
            return ir.While((ir.Opaque(t, pos),), tuple(self.block(body)), False, pos)
        if t == "ERROR":
            return None
        return ir.Opaque(t, pos)

    def function(self, n: Node, more: tuple[ir.Redirect, ...]) -> ir.FuncDef:
        """``f() { ...; } > log``: redirections after the body apply to every call of it
        (tree-sitter gives the first to the definition, ``more`` to a statement around it)."""
        name = n.child_by_field_name("name")
        body = n.child_by_field_name("body")
        stmts = tuple(self.block(body))
        redirs = tuple(r for c in n.named_children if c.type in _REDIRECTS for r in self.redirects(c)) + more
        if redirs:
            stmts = (ir.Group(stmts, False, redirs, _pos(body) if body is not None else _pos(n)),)
        return ir.FuncDef(self.text(name) if name else "_", stmts, _pos(n))

    def block(self, n: Node | None) -> list[ir.Stmt]:
        if n is None:
            return []
        if n.type in ("do_group", "compound_statement"):
            return self.stmts(n.children)
        s = self.stmt(n)
        return [s] if s is not None else []

    def andor(self, n: Node) -> ir.Stmt:
        # tree-sitter nests lists left-associatively: ((a && b) || c); walked with a stack
        # (3,000 ``&&`` are 3,000 nested lists) into one flat AndOr
        items: list[tuple[str, ir.Stmt]] = []
        todo: list[tuple[Node, str]] = [(n, "")]
        while todo:
            node, op = todo.pop()
            if node.type == "list":
                cur = op
                kids: list[tuple[Node, str]] = []
                for c in node.children:
                    if c.type in ("&&", "||"):
                        cur = c.type
                    elif c.is_named and c.type not in _SKIP:
                        kids.append((c, cur))
                        cur = ""
                todo.extend(reversed(kids))
            else:
                s = self.stmt(node)
                if s is not None:
                    items.append((op, s))
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
        conv.depth = self.depth
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

        def too_deep(k: int) -> ir.TestExpr:
            pos = _rebase(_pos(nodes[min(k, len(nodes) - 1)]), line_off, col_off, byte_off)
            if not self.errors:
                self.errors.append(nesting.too_deep(pos, "test operator"))
            return nesting.unknown_test(pos)

        expr, _ = _test_words([conv.text(c) if c.type in ("word", "test_operator") or not c.is_named else None
                               for c in nodes],
                              word, 0, nesting.MAX_NESTING - self.depth, too_deep)
        if conv.errors and not self.errors:
            self.errors.append(_rebase(conv.errors[0], line_off, col_off, byte_off))
        return expr
    def test_expr(self, n: Node) -> ir.TestExpr:
        if n.type not in _TEST_NESTING:
            return self._test_expr(n)
        if not self.enter(n):
            return nesting.unknown_test(_pos(n))
        try:
            return self._test_expr(n)
        finally:
            self.depth -= 1

    def _test_expr(self, n: Node) -> ir.TestExpr:
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


_rebase = nesting.rebase  # positions of a sub-parse moved back into the file


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
