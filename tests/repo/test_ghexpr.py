"""GitHub Actions expressions: parsing, substitution, GitHub's evaluation rules, budgets."""

from __future__ import annotations

import copy
import pickle
import time
from collections.abc import Mapping

import pytest
import yaml

from bot.repo.workflows import ghexpr as gx
from bot.repo.workflows.ghexpr import UNKNOWN, Bin, Call, Lit, Not, Ref


def one(text: str) -> gx.Node:
    t = gx.parse_template("${{ " + text + " }}")
    assert len(t) == 1 and not isinstance(t[0], str), t
    assert gx.parse_errors("${{ " + text + " }}") == []
    return t[0]


def ev(text: str, env: Mapping[tuple[str, ...], object] | None = None) -> object:
    values = env or {}
    return gx.evaluate(one(text), lambda p: values.get(p, UNKNOWN))


# Real YAML values (loaded with PyYAML), shaped like the benchmark workflows.
WORKFLOW = """
env:
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}
  RESULT_FILENAME_BASE: ${{ env.EXP_NAME }}_${{ env.PRECISION }}_tp${{ env.TP }}
  TP: ${{ matrix.config.tp }}
  QUEUE: ${{ matrix.config['queue-token'] }}
  ROUTER: ${{ matrix.config.router && toJson(matrix.config.router) || '' }}
  REQUIRE_POWER: ${{ inputs.require-power && '1' || '0' }}
  MOE_DEBUG_LOG: ${{ (inputs.moe-debug) && '/x' || '' }}
"""


@pytest.fixture()
def env() -> dict[str, gx.Template]:
    block = yaml.safe_load(WORKFLOW)["env"]
    return {k: gx.parse_template(v) for k, v in block.items()}


def test_examples_parse_to_the_expected_trees(env: dict[str, gx.Template]) -> None:
    assert env["SCENARIO_SUBDIR"] == (
        Bin("||", Bin("&&", Bin("==", Ref(("inputs", "scenario-type")), Lit("agentic-coding")), Lit("agentic/")),
            Lit("fixed_seq_len/")),)
    assert env["RESULT_FILENAME_BASE"] == (Ref(("env", "EXP_NAME")), "_", Ref(("env", "PRECISION")), "_tp",
                                           Ref(("env", "TP")))
    assert env["QUEUE"] == (Ref(("matrix", "config", "queue-token")),)
    assert env["ROUTER"] == (Bin("||", Bin("&&", Ref(("matrix", "config", "router")),
                                           Call("tojson", (Ref(("matrix", "config", "router")),))), Lit("")),)
    assert env["MOE_DEBUG_LOG"] == (Bin("||", Bin("&&", Ref(("inputs", "moe-debug")), Lit("/x")), Lit("")),)
    assert gx.refs(env["RESULT_FILENAME_BASE"]) == {("env", "EXP_NAME"), ("env", "PRECISION"), ("env", "TP")}


def test_index_and_property_give_the_same_path() -> None:
    assert one("matrix.config['queue-token']") == one("matrix.config.queue-token") == Ref(
        ("matrix", "config", "queue-token"))
    assert one("a[0].b") == Ref(("a", "0", "b"))
    assert one("a.*.b") == Ref(("a", "*", "b"))
    assert one("a[inputs.k]") == Call("?", (Ref(("a",)), Ref(("inputs", "k"))))
    assert one("fromJSON(x).y") == Call("?", (Call("fromjson", (Ref(("x",)),)), Lit("y")))
    assert ev("a.*.b", {("a", "*", "b"): "x"}) is UNKNOWN


def test_literals() -> None:
    assert one("'it''s'") == Lit("it's")
    assert [ev(x) for x in ("711", "-9.2", "0xff", "-2.99e-2", "true", "false", "null", "0o17")] == [
        711.0, -9.2, 255.0, -0.0299, True, False, None, 15.0]


def test_precedence() -> None:
    assert one("!a == b") == Bin("==", Not(Ref(("a",))), Ref(("b",)))
    assert one("a < b == c < d") == Bin("==", Bin("<", Ref(("a",)), Ref(("b",))), Bin("<", Ref(("c",)), Ref(("d",))))
    assert one("a || b && c") == Bin("||", Ref(("a",)), Bin("&&", Ref(("b",)), Ref(("c",))))
    assert one("(a || b) && c") == Bin("&&", Bin("||", Ref(("a",)), Ref(("b",))), Ref(("c",)))


def test_and_or_return_an_operand() -> None:
    assert ev("'a' && 'b'") == "b"
    assert ev("'' && 'b'") == ""
    assert ev("0 || 'x'") == "x"
    assert ev("null || false") is False
    assert ev("'a' || 'b'") == "a"
    assert ev("!'a'") is False and ev("!0") is True and ev("!''") is True


def test_loose_equality_as_github() -> None:
    assert ev("'ABC' == 'abc'") is True
    assert ev("'1' == 1") is True
    assert ev("null == ''") is True  # both coerce to 0
    assert ev("null == 0") is True
    assert ev("false == ''") is True
    assert ev("true == 'true'") is False  # 'true' is NaN as a number
    assert ev("NaN == NaN") is False and ev("NaN != NaN") is True
    assert ev("' 0x10 ' == 16") is True
    assert ev("'a' < 'B'") is True and ev("2 > '10'") is False
    assert ev("null <= null") is True and ev("null < null") is False
    assert ev("false < true") is True


def test_functions() -> None:
    assert ev("format('{0}-{1}', 'a', 2)") == "a-2"
    assert ev("format('{{0}} {0}}}', 'x')") == "{0} x}"
    assert ev("format('{1}', 'x')") is UNKNOWN  # GitHub: error
    assert ev("format('{0', 'x')") is UNKNOWN
    assert ev("contains('Hello', 'LL')") is True
    assert ev("startsWith('Hello', 'he')") is True and ev("endsWith('Hello', 'LO')") is True
    assert ev("contains(fromJSON('[\"a\", 1]'), 'A')") is True
    assert ev("contains(fromJSON('[\"a\", 1]'), '1')") is True
    assert ev("fromJSON('{\"k\": 3}').K") == 3.0
    assert ev("toJSON('x')") == '"x"' and ev("toJSON(1)") == "1"
    assert ev("fromJSON('{bad')") is UNKNOWN
    for f in ("join(a, ',')", "success()", "always()", "failure()", "cancelled()", "hashFiles('x')", "nope(1)"):
        assert ev(f, {("a",): "x"}) is UNKNOWN


def test_unknown_spreads_only_where_the_result_depends_on_it() -> None:
    assert ev("false && x") is False
    assert ev("'x' || y") == "x"
    assert ev("x && false") is UNKNOWN
    assert ev("'' || y") is UNKNOWN
    assert ev("x == 'a'") is UNKNOWN and ev("!x") is UNKNOWN
    assert ev("format('{0}', 'a', x)") == "a"  # an unused argument does not matter
    assert ev("format('{1}', 'a', x)") is UNKNOWN
    t = gx.parse_template("pre-${{ x }}-${{ 'k' }}")
    assert gx.parts_of(t, lambda p: UNKNOWN) == ["pre-", UNKNOWN, "-", "k"]
    assert gx.evaluate_template(t, lambda p: UNKNOWN) is UNKNOWN


def test_evaluating_the_examples(env: dict[str, gx.Template]) -> None:
    values: dict[tuple[str, ...], object] = {
        ("inputs", "scenario-type"): "Agentic-Coding", ("inputs", "require-power"): False,
        ("inputs", "moe-debug"): True, ("matrix", "config", "tp"): 8.0, ("matrix", "config", "queue-token"): None,
        ("matrix", "config", "router"): None}

    def text(name: str) -> object:
        return gx.evaluate_template(env[name], lambda p: values.get(p, UNKNOWN))

    assert text("SCENARIO_SUBDIR") == "agentic/"
    assert text("REQUIRE_POWER") == "0"
    assert text("MOE_DEBUG_LOG") == "/x"
    assert text("TP") == "8"
    assert text("QUEUE") == ""
    assert text("ROUTER") == ""
    assert text("RESULT_FILENAME_BASE") is UNKNOWN


def test_to_string() -> None:
    assert [gx.to_string(v) for v in (True, False, None, 1.0, 0.8, -2.0, 1e21, 0.1 + 0.2, "s")] == [
        "true", "false", "", "1", "0.8", "-2", "1E+21", "0.3", "s"]
    assert gx.to_string(UNKNOWN) is UNKNOWN and gx.to_string([1]) is UNKNOWN


def test_substitute_through_a_two_level_call_chain() -> None:
    callee = gx.parse_template("--tp ${{ inputs.tp }} ${{ inputs.spec && '--spec' || '' }}")
    # the middle workflow passes  with: tp: ${{ inputs.tp }}  spec: ${{ inputs.spec-decoding == 'mtp' }}
    middle = {"tp": one("inputs.tp"), "spec": one("inputs.spec-decoding == 'mtp'")}
    # the outer caller passes  with: tp: ${{ matrix.config.tp }}  spec-decoding: ${{ matrix.config.spec }}
    outer = {"tp": one("matrix.config.tp"), "spec-decoding": one("matrix.config.spec")}

    def through(layer: dict[str, gx.Node]) -> gx.Template:
        return gx.substitute(step, lambda p: layer.get(p[1]) if p[0] == "inputs" else None)

    step = callee
    step = through(middle)
    assert gx.refs(step) == {("inputs", "tp"), ("inputs", "spec-decoding")}  # not re-resolved
    step = through(outer)
    assert gx.refs(step) == {("matrix", "config", "tp"), ("matrix", "config", "spec")}
    assert gx.unparse(step) == ("--tp ${{ matrix.config.tp }} "
                                "${{ matrix.config.spec == 'mtp' && '--spec' || '' }}")
    cfg = {("matrix", "config", "tp"): 4.0, ("matrix", "config", "spec"): "MTP"}
    assert gx.evaluate_template(step, lambda p: cfg.get(p, UNKNOWN)) == "--tp 4 --spec"
    assert gx.parts_of(step, lambda p: UNKNOWN if p[-1] == "spec" else cfg[p]) == ["--tp ", "4", " ", UNKNOWN]
    node = one("inputs.a && inputs.b")
    assert gx.substitute(node, lambda p: Lit("x") if p[1] == "a" else None) == Bin("&&", Lit("x"), Ref(("inputs", "b")))
    assert gx.substitute(one("m[inputs.k]"), lambda p: Lit("tp") if p[0] == "inputs" else None) == Ref(("m", "tp"))


def test_unparse_is_canonical_and_reparses() -> None:
    for text in ("inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/'",
                 "!(a || b) && c[d]", "format('{0}', 'it''s', 1.5)", "(a == b) == c", "a || b || c || d",
                 "matrix.config['queue token']", "!!x", "fromJSON(x).y"):
        assert gx.parse_template("${{ " + gx.unparse(one(text)) + " }}") == (one(text),)
    assert gx.unparse(one("matrix.config['queue-token']")) == "matrix.config.queue-token"
    assert gx.unparse(one("a || (b || c)")) == "a || b || c"
    assert gx.unparse(one("toJson(x)")) == "toJSON(x)"


@pytest.mark.parametrize("text", ["${{ inputs.x", "${{ ) }}", "${{ 'unterminated }}", "a ${{ }} b", "${{ a b }}",
                                  "${{ a # b }}", "${{ f(a, }}", "${{ a. }}", "${{ 1x }}", "${{ a[1 }}"])
def test_malformed_expressions_are_unknown_with_a_message(text: str) -> None:
    t = gx.parse_template(text)
    assert gx.BAD in t
    errors = gx.parse_errors(text)
    assert len(errors) == 1 and "expression at character" in errors[0]
    assert gx.evaluate_template(t, lambda p: "v") is UNKNOWN


def test_a_bad_expression_does_not_hide_the_rest() -> None:
    t = gx.parse_template("a${{ ) }}b${{ x }}")
    assert t == ("a", gx.BAD, "b", Ref(("x",)))
    assert gx.parts_of(t, lambda p: "X") == ["a", UNKNOWN, "b", "X"]
    assert gx.parse_template("plain ${ x } }} text") == ("plain ${ x } }} text",)
    assert gx.parse_template("${{ '}}' }}") == (Lit("}}"),)


def test_budgets_hold_fast_and_without_exceptions() -> None:
    cases = {
        "${{ " + " || ".join(["a"] * 30_000) + " }}": "longer than",
        "${{ " + "(" * 4_000 + "a" + ")" * 4_000 + " }}": "nested deeper",
        "${{ " + "!" * 4_000 + "a }}": "nested deeper",
        "${{ " + "f(" * 4_000 + " }}": "nested deeper",
        "${{ " + "a[" * 4_000 + " }}": "nested deeper",
        "${{ " + " == ".join(["a"] * 1_000) + " }}": "nested deeper",
        "${{ '" + "x" * 100_000: "no closing quote",
        "${{ " + "1" * 100_000 + "x }}": "unexpected",
    }
    for text, message in cases.items():
        start = time.perf_counter()
        t = gx.parse_template(text)
        errors = gx.parse_errors(text)
        assert time.perf_counter() - start < 2.0, message
        assert gx.BAD in t and len(errors) == 1 and message in errors[0], (message, errors)
    ok = "${{ " + " || ".join(["a"] * 1_500) + " }}"  # under the length budget: a shallow tree
    node = gx.parse_template(ok)[0]
    assert not isinstance(node, str) and gx.evaluate(node, lambda p: "") == ""
    assert gx.unparse(node) == ok[4:-3]


def test_substitution_cannot_blow_up() -> None:
    node: gx.Node = Ref(("env", "A"))
    doubling = one("env.A && env.A")
    for _ in range(40):  # 2**40 leaves if expanded; shared subtrees are walked once
        node = gx.substitute(doubling, lambda p, prev=node: prev)  # type: ignore[misc]
    assert node == gx.BAD
    deep: gx.Node = Ref(("x",))
    for _ in range(300):
        deep = gx.substitute(Not(Ref(("x",))), lambda p, prev=deep: prev)  # type: ignore[misc]
    assert deep == gx.BAD
    assert gx.evaluate(deep, lambda p: True) is UNKNOWN


def test_unknown_is_one_object() -> None:
    assert repr(UNKNOWN) == "UNKNOWN"
    assert copy.deepcopy(UNKNOWN) is UNKNOWN
    assert pickle.loads(pickle.dumps(UNKNOWN)) is UNKNOWN
