"""Read a pure data literal out of a JavaScript/JSX module, without evaluating any JavaScript.

The SGLang cookbook keeps each model's deployment matrix as ``export const config = {...}``
in ``docs_new/src/snippets/configs/<org>/<model>.jsx``; its authoring guide requires that
literal to be plain data (no calls, spreads or IIFEs). This module parses the file with
tree-sitter-javascript and converts the value of one exported ``const`` to Python.

Only literals are converted:

- objects (``{a: 1, "b": 2, 'c': 3, 4: 5}``; keys are identifiers, strings or numbers,
  number keys become their JavaScript string form) -> ``dict[str, Any]``; a repeated key
  keeps its last value, as in JavaScript;
- arrays (trailing comma allowed, holes refused) -> ``list``;
- strings, and template strings without ``${...}`` substitutions (escapes decoded) -> ``str``;
- numbers (decimal, hex, octal, binary, ``_`` separators, exponents; a leading ``-`` or
  ``+``) -> ``int`` or ``float``;
- ``true`` / ``false`` / ``null`` -> ``True`` / ``False`` / ``None``;
- parentheses around any of these.

Anything else (identifiers, ``undefined``, calls, spreads, computed keys, methods, template
substitutions, JSX, operators) raises ``JsxError`` with the 1-based line and column of the
offending node. Comments are ignored.

API: ``parse_export(text, name="config")`` returns the converted value, or ``None`` when the
module exports no ``const``/``let``/``var`` of that name; it raises ``JsxError`` when the
export is not a pure literal, when the source has a syntax error that hides or touches the
export, or when a budget (input bytes, nesting depth, node count) is exceeded.
"""

from __future__ import annotations

import math
import re
from typing import Any

import tree_sitter
import tree_sitter_javascript

Node = Any  # tree_sitter.Node (kept loose, like bot.shell.front.parse_tree)

MAX_BYTES = 2 * 1024 * 1024  # a module larger than this is refused
MAX_DEPTH = 64  # nesting of objects, arrays and parentheses
MAX_NODES = 500_000  # syntax nodes visited while converting one export

_LANGUAGE = tree_sitter.Language(tree_sitter_javascript.language())
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_LINE_TERMINATORS = ("\r\n", "\n", "\r", "\u2028", "\u2029")
_DECIMAL = re.compile(r"^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


class JsxError(ValueError):
    """A module that is not the pure data literal expected: ``message`` at ``line``:``col``
    (both 1-based; the column counts characters)."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(f"{line}:{col}: {message}")
        self.message = message
        self.line = line
        self.col = col


def parse_export(text: str, name: str = "config") -> Any:
    """The Python value of ``export const <name> = <literal>`` in ``text``; ``None`` when the
    module has no such export. Raises ``JsxError`` (see the module docstring)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        raise JsxError(f"module is {len(data)} bytes, over the {MAX_BYTES}-byte budget", 1, 1)
    tree = tree_sitter.Parser(_LANGUAGE).parse(data)
    conv = _Converter(data)
    root = tree.root_node
    value_node = _find_export(root, name)
    if value_node is None:
        if root.has_error:
            bad = _first_error(root)
            if bad.end_byte >= len(data.rstrip()):
                raise conv.error_at(len(data.rstrip()), "unexpected end of input (an unclosed bracket or string?)")
            raise conv.error(bad, f"syntax error, and no `export const {name}` could be read")
        return None
    if value_node.has_error:
        raise conv.error(_first_error(value_node), "syntax error")
    return conv.value(value_node, 0)


def _find_export(root: Node, name: str) -> Node | None:
    """The value node of the top-level ``export const|let|var <name> = value``."""
    for stmt in root.named_children:
        if stmt.type != "export_statement":
            continue
        decl = stmt.child_by_field_name("declaration")
        if decl is None or decl.type not in ("lexical_declaration", "variable_declaration"):
            continue
        for d in decl.named_children:
            if d.type != "variable_declarator":
                continue
            ident = d.child_by_field_name("name")
            value = d.child_by_field_name("value")
            if ident is not None and ident.type == "identifier" and ident.text == name.encode() and value is not None:
                return value
    return None


def _first_error(node: Node) -> Node:
    """The first ERROR or MISSING node under ``node`` (``node`` itself when none is found)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n
        stack.extend(reversed([c for c in n.children if c.has_error or c.is_missing or c.type == "ERROR"]))
    return node


def _join_surrogates(s: str) -> str:
    """Combine ``\\uD83D\\uDE00``-style surrogate pairs into one character, as JavaScript
    strings (UTF-16) do; a lone surrogate becomes U+FFFD."""
    if not any("\ud800" <= c <= "\udfff" for c in s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class _Converter:
    """Walks one literal's syntax tree, converting it and counting nodes against the budget."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.nodes = 0

    def error(self, node: Node, message: str) -> JsxError:
        return self.error_at(node.start_byte, message)

    def error_at(self, offset: int, message: str) -> JsxError:
        line_start = self.data.rfind(b"\n", 0, offset) + 1
        line = self.data.count(b"\n", 0, offset) + 1
        col = len(self.data[line_start:offset].decode("utf-8", "replace")) + 1
        return JsxError(message, line, col)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def value(self, node: Node, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.error(node, f"literal has more than {MAX_NODES} syntax nodes")
        if depth > MAX_DEPTH:
            raise self.error(node, f"literal nests deeper than {MAX_DEPTH} levels")
        t = node.type
        if t == "object":
            return self.object(node, depth)
        if t == "array":
            return self.array(node, depth)
        if t == "string":
            return self.string(node)
        if t == "template_string":
            return self.template(node)
        if t == "number":
            return self.number(node)
        if t == "true":
            return True
        if t == "false":
            return False
        if t == "null":
            return None
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) != 1:
                raise self.error(node, "parenthesized expression is not a single literal")
            return self.value(inner[0], depth + 1)
        if t == "unary_expression":
            return self.signed(node)
        raise self.error(node, f"not a literal: {self.describe(node)}")

    def describe(self, node: Node) -> str:
        names = {
            "identifier": "identifier",
            "undefined": "`undefined`",
            "call_expression": "function call",
            "new_expression": "`new` expression",
            "spread_element": "spread `...`",
            "computed_property_name": "computed key",
            "shorthand_property_identifier": "shorthand property",
            "method_definition": "method",
            "template_substitution": "template substitution `${...}`",
            "arrow_function": "function",
            "function_expression": "function",
            "member_expression": "member access",
            "binary_expression": "operator expression",
        }
        kind = names.get(node.type, node.type.replace("_", " "))
        snippet = self.text(node).splitlines()[0] if self.text(node) else ""
        if len(snippet) > 40:
            snippet = snippet[:37] + "..."
        return f"{kind} `{snippet}`"

    def object(self, node: Node, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for child in node.named_children:
            if child.type == "comment":
                continue
            if child.type != "pair":
                raise self.error(child, f"not a literal: {self.describe(child)}")
            key_node = child.child_by_field_name("key")
            value_node = child.child_by_field_name("value")
            if key_node is None or value_node is None:
                raise self.error(child, "incomplete property")
            out[self.key(key_node)] = self.value(value_node, depth + 1)
        return out

    def key(self, node: Node) -> str:
        if node.type == "property_identifier":
            return self.text(node)
        if node.type == "string":
            return self.string(node)
        if node.type == "number":
            n = self.number(node)
            if isinstance(n, float) and n.is_integer() and abs(n) < 1e21:
                return str(int(n))
            return str(n)
        raise self.error(node, f"not a literal key: {self.describe(node)}")

    def array(self, node: Node, depth: int) -> list[Any]:
        out: list[Any] = []
        expect_value = True  # after "[" or ","
        for child in node.children:
            if child.type in ("[", "]", "comment"):
                continue
            if child.type == ",":
                if expect_value:
                    raise self.error(child, "array hole (an empty element)")
                expect_value = True
                continue
            out.append(self.value(child, depth + 1))
            expect_value = False
        return out

    def string(self, node: Node) -> str:
        parts: list[str] = []
        for child in node.named_children:
            if child.type == "string_fragment":
                parts.append(self.text(child))
            elif child.type == "escape_sequence":
                parts.append(self.escape(child))
            elif child.type != "comment":
                raise self.error(child, f"unexpected {child.type} in a string")
        return _join_surrogates("".join(parts))

    def template(self, node: Node) -> str:
        parts: list[str] = []
        for child in node.named_children:
            if child.type == "string_fragment":
                raw = self.text(child)
                parts.append(raw.replace("\r\n", "\n").replace("\r", "\n"))  # template literals normalize line ends
            elif child.type == "escape_sequence":
                parts.append(self.escape(child))
            else:
                raise self.error(child, f"not a literal: {self.describe(child)}")
        return _join_surrogates("".join(parts))

    def escape(self, node: Node) -> str:
        raw = self.text(node)
        body = raw[1:]
        if body in _LINE_TERMINATORS:
            return ""  # line continuation
        if body in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[body]
        try:
            if body.startswith("x") and len(body) == 3:
                return chr(int(body[1:], 16))
            if body.startswith("u{") and body.endswith("}"):
                return chr(int(body[2:-1], 16))
            if body.startswith("u") and len(body) == 5:
                return chr(int(body[1:], 16))
        except ValueError:
            raise self.error(node, f"bad escape `{raw}`") from None
        if len(body) == 1 and not body.isdigit():
            return body  # \' \" \\ \` \$ and other identity escapes
        raise self.error(node, f"unsupported escape `{raw}`")

    def number(self, node: Node) -> int | float:
        raw = self.text(node).replace("_", "")
        low = raw.lower()
        if len(low) > 1 and low.startswith("0") and low.isdigit():
            raise self.error(node, f"legacy octal number `{raw}`")
        value: int | float | None = None
        try:
            if low.endswith("n"):
                value = int(low[:-1], 0)  # BigInt: an integer all the same
            elif low.startswith(("0x", "0o", "0b")):
                value = int(low, 0)
            elif _DECIMAL.match(low):
                value = float(low) if ("." in low or "e" in low) else int(low)
        except ValueError:
            value = None
        if value is None:
            raise self.error(node, f"bad number `{raw}`")
        if isinstance(value, float) and math.isinf(value):
            raise self.error(node, f"number out of range `{raw}`")
        return value

    def signed(self, node: Node) -> int | float:
        op = node.child_by_field_name("operator")
        arg = node.child_by_field_name("argument")
        if op is None or arg is None or op.type not in ("-", "+"):
            raise self.error(node, f"not a literal: {self.describe(node)}")
        while arg.type == "parenthesized_expression":
            inner = [c for c in arg.named_children if c.type != "comment"]
            if len(inner) != 1:
                break
            arg = inner[0]
        if arg.type != "number":
            raise self.error(node, f"sign applied to a non-number: {self.describe(node)}")
        n = self.number(arg)
        return -n if op.type == "-" else n
