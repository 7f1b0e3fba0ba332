"""Words for the bashlex front-end: the source text of a word -> IR parts.

bashlex's words are already dequoted, so ``bashlex_convert.py`` hands the text at each
word's position to ``WordLexer``, which lexes quoting, ``${X op arg}`` expansions,
escapes and nested substitutions the way ``parse.py`` reads them; plus the text scans
(matching quotes, parentheses, braces) it needs.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import bashlex  # type: ignore[import-untyped, unused-ignore]
import bashlex.parser  # type: ignore[import-untyped, unused-ignore]

from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir
from bot.shell.ir.words import ansi_c as _ansi_c
from bot.shell.ir.words import merge as _merge
from bot.shell.ir.words import unescape_dq as _unescape_dq
from bot.shell.ir.words import unescape_unquoted as _unescape_unquoted

Node = Any  # bashlex.ast.node (untyped)


class Positions(Protocol):
    """Character offsets -> ``ir.Pos`` (``bashlex_cmds.Locator``)."""

    def pos(self, start: int, end: int) -> ir.Pos: ...


class Host(Protocol):
    """What the word lexer asks of the command converter (``bashlex_cmds.CommandConverter``)."""

    text: str
    base: int
    depth: int
    @property
    def loc(self) -> Positions: ...

    def enter(self, start: int, what: str) -> bool: ...
    def span(self, node: Node) -> tuple[int, int]: ...
    def substitution_body(self, node: Node | None, start: int, end: int, backtick: bool) -> tuple[ir.Stmt, ...]: ...

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = "@*#?-$!"
_PARAM_OPS = (":-", ":=", ":?", ":+", "##", "%%", "//", "/#", "/%", "^^", ",,",
              "-", "=", "?", "+", "#", "%", "/", "^", ",", ":", "@")
_PATTERN_OPS = {"#", "##", "%", "%%", "/", "//", "/#", "/%"}
_SLASH_OPS = {"/", "//", "/#", "/%"}


class WordLexer:
    """Splits the source text of one word into IR parts, the way parse.py would."""

    def __init__(self, conv: Host, subs: dict[int, Node]) -> None:
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
        if not self.t.startswith(("$(", "${", "`"), i) or self.t.startswith("$((", i):
            return self._expansion_at(i, end, quoted)
        conv = self.conv
        if not conv.enter(i, "substitution or expansion"):
            return self._expansion_at(i, end, quoted, skip=True)  # an unknown part, up to its end
        try:
            return self._expansion_at(i, end, quoted)
        finally:
            conv.depth -= 1

    def _expansion_at(self, i: int, end: int, quoted: bool, skip: bool = False) -> tuple[ir.Part, int] | None:
        t = self.t
        unknown = nesting.unknown_part(self.conv.loc.pos(i, i), quoted)
        if t[i] == "`":
            sub = self.subs.get(i)
            j = self.sub_close(sub, end) if sub is not None else _find_backtick(t, i + 1, end)
            if skip:
                return unknown, j + 1
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
            if skip:
                return unknown, j + 1
            body = self.conv.substitution_body(sub, i + 2, j, backtick=False)
            return ir.CmdSub(body, quoted), j + 1
        if n == "{":
            j = _find_brace(t, i + 2, end, quoted)
            return (unknown if skip else self.braced(i + 2, j, quoted)), j + 1
        if n.isdigit():
            return ir.Param(n, "", None, None, quoted), i + 2
        if n in _SPECIAL:
            return ir.Param(n, "", None, None, quoted), i + 2
        m = NAME_RE.match(t, i + 1, end)
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
        index = ""
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
            return ir.Param(name, "", None, None, quoted, index if index in ("@", "*") else "")
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

