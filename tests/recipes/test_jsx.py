"""bot.recipes.jsx: pure data literals read with tree-sitter-javascript, nothing evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.recipes import jsx
from bot.recipes.jsx import JsxError, parse_export

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "recipes" / "sglang" / "docs_new" / "src" / "snippets" / \
    "configs"


def export(body: str) -> object:
    return parse_export(f"export const config = {body};\n")


def error_of(text: str) -> JsxError:
    with pytest.raises(JsxError) as info:
        parse_export(text)
    return info.value


def test_nested_objects_and_arrays() -> None:
    assert export('{a: {b: [1, [2, {c: "d"}]], e: {}}, f: []}') == {"a": {"b": [1, [2, {"c": "d"}]], "e": {}}, "f": []}


def test_quoted_unquoted_and_number_keys() -> None:
    assert export("""{plain: 1, "double": 2, 'single': 3, 10: 4, 1.5: 5, 1e3: 6, "a|b|c": 7}""") == {
        "plain": 1, "double": 2, "single": 3, "10": 4, "1.5": 5, "1000": 6, "a|b|c": 7}


def test_trailing_commas_and_comments() -> None:
    text = """// leading comment
/* block */ export const config = {
  a: [1, 2, /* inside */ 3,],   // trailing
  b: { c: true, },
};
"""
    assert parse_export(text) == {"a": [1, 2, 3], "b": {"c": True}}


def test_repeated_key_keeps_the_last_value() -> None:
    assert export("{a: 1, a: 2}") == {"a": 2}


def test_numbers() -> None:
    assert export("{a: 0, b: -3, c: +4, d: 2.5, e: -2.5e3, f: .5, g: 0x1F, h: 0o17, i: 0b101, j: 1_000, k: 10n, "
                  "l: -(7)}") == {"a": 0, "b": -3, "c": 4, "d": 2.5, "e": -2500.0, "f": 0.5, "g": 31, "h": 15,
                                  "i": 5, "j": 1000, "k": 10, "l": -7}
    assert isinstance(export("{a: 1}"), dict) and type(export("{a: 1}")["a"]) is int  # type: ignore[index]


def test_true_false_null_and_parentheses() -> None:
    assert export("{a: true, b: false, c: null, d: (\"x\"), e: ((1))}") == {
        "a": True, "b": False, "c": None, "d": "x", "e": 1}


def test_string_escapes() -> None:
    value = export(r"""{a: "tab\there", b: 'it\'s', c: "q\"q", d: "\\back", e: "\x41\u0042\u{43}", f: "\uD83D\uDE00",
      g: "line\
cont", h: "\$"}""")
    assert value == {"a": "tab\there", "b": "it's", "c": 'q"q', "d": "\\back", "e": "ABC", "f": "\U0001F600",
                     "g": "linecont", "h": "$"}


def test_template_strings_without_substitutions() -> None:
    text = "export const config = {cmd: `python3 -m x \\\\\n  --port {{PORT}} \\${NOT_A_SUBST}`, e: ``};"
    assert parse_export(text) == {"cmd": "python3 -m x \\\n  --port {{PORT}} ${NOT_A_SUBST}", "e": ""}


def test_template_string_line_ends_are_normalized() -> None:
    assert parse_export("export const config = {a: `x\r\ny`};") == {"a": "x\ny"}


def test_flags_with_embedded_json_keep_their_quotes() -> None:
    value = export(r"""{flags: ["--deepep-config '{\"normal_dispatch\":{\"num_sms\":96}}'"]}""")
    assert value == {"flags": ["--deepep-config '{\"normal_dispatch\":{\"num_sms\":96}}'"]}


@pytest.mark.parametrize(("body", "line", "col", "words"), [
    ("{a: f(1)}", 1, 27, "function call"),
    ("{...base}", 1, 24, "spread"),
    ("{[key]: 1}", 1, 24, "computed key"),
    ("{a: `x${y}`}", 1, 29, "template substitution"),
    ("{a: b}", 1, 27, "identifier"),
    ("{a: undefined}", 1, 27, "undefined"),
    ("{short}", 1, 24, "shorthand property"),
    ("{m() {}}", 1, 24, "method"),
    ("{a: 1 + 2}", 1, 27, "operator"),
    ("{a: -x}", 1, 27, "non-number"),
    ("{a: [1,,2]}", 1, 30, "array hole"),
    ("{a: <div/>}", 1, 27, "jsx"),
    ("{a: () => 1}", 1, 27, "function"),
    ("{a: 08}", 1, 27, "octal"),
], ids=lambda v: str(v)[:20])
def test_non_literals_are_refused_with_a_position(body: str, line: int, col: int, words: str) -> None:
    err = error_of(f"export const config = {body};")
    assert (err.line, err.col) == (line, col)
    assert words in err.message
    assert str(err).startswith(f"{line}:{col}: ")


def test_position_is_on_the_right_line_and_counts_characters() -> None:
    err = error_of('export const config = {\n  "é": 1,\n  ok: "ü", bad: call(),\n};')
    assert (err.line, err.col) == (3, 17)  # "ü" is one character (two bytes)


def test_iife_is_refused() -> None:
    err = error_of("export const config = (() => ({a: 1}))();")
    assert err.line == 1 and "function call" in err.message


def test_missing_export_is_none_and_other_exports_are_ignored() -> None:
    assert parse_export("export const benchmarks = {a: 1};") is None
    assert parse_export("const config = {a: 1};") is None
    assert parse_export("export const other = f(); export const config = {a: 1};") == {"a": 1}
    assert parse_export("export const srtSlurmConfig = {x: 1};", "srtSlurmConfig") == {"x": 1}


def test_syntax_errors() -> None:
    assert "syntax error" in error_of('export const config = {a: 1 b: 2};').message
    err = error_of("export const config = {\n  a: [1, 2,\n")
    assert "end of input" in err.message and err.line == 2


def test_depth_budget() -> None:
    ok = "[" * (jsx.MAX_DEPTH - 1) + "]" * (jsx.MAX_DEPTH - 1)
    assert export(f"{{a: {ok}}}") is not None
    deep = "[" * (jsx.MAX_DEPTH + 5) + "]" * (jsx.MAX_DEPTH + 5)
    err = error_of(f"export const config = {{a: {deep}}};")
    assert "deeper than" in err.message


def test_node_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsx, "MAX_NODES", 10)
    assert export("[1, 2, 3]") == [1, 2, 3]
    assert "syntax nodes" in error_of("export const config = [" + ", ".join(["1"] * 20) + "];").message


def test_byte_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsx, "MAX_BYTES", 100)
    err = error_of("export const config = {a: \"" + "x" * 200 + "\"};")
    assert "budget" in err.message and (err.line, err.col) == (1, 1)


def test_fixture_configs_parse() -> None:
    value = parse_export((CONFIGS / "acme" / "widget3.jsx").read_text())
    assert isinstance(value, dict)
    assert value["modelNames"]["b200|100b|fp4"] == "vendor/Widget3-100B-NVFP4"
    assert value["playgroundFeatures"]["attention"]["knobs"][1]["labels"] == {"auto": "Auto", "false": "Off"}
    assert value["curl"].startswith("curl http://localhost:{{CURL_PORT}}/v1/chat/completions \\\n-d '")


def test_malformed_fixture_names_the_call() -> None:
    err = error_of((CONFIGS / "broken" / "broken-1.jsx").read_text())
    assert (err.line, err.col) == (11, 14)
    assert "function call" in err.message and "makeFlags" in err.message
