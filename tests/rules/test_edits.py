"""One-value YAML edits keep every other byte and the token's quote style."""

from __future__ import annotations

import yaml

from bot.repo.load.yamlfile import Mark
from bot.rules._edits import replace_scalars


def test_plain_single_and_double_quoted_tokens_keep_their_style() -> None:
    text = "a:\n  runner: h200-dgxc   # old label\nb:\n  runner: 'h200-dgxc'\nc:\n  runner: \"h200-dgxc\"\n"
    targets = [("a", "runner", Mark(2, 11)), ("b", "runner", Mark(4, 11)), ("c", "runner", Mark(6, 11))]
    new = replace_scalars(text, targets, "cluster:h200-dgxc", "h200-dgxc")
    assert new == ("a:\n  runner: cluster:h200-dgxc   # old label\nb:\n  runner: 'cluster:h200-dgxc'\n"
                   "c:\n  runner: \"cluster:h200-dgxc\"\n")
    assert {k: v["runner"] for k, v in yaml.safe_load(new).items()} == dict.fromkeys("abc", "cluster:h200-dgxc")


def test_flow_context_gets_a_quoted_value_and_crlf_is_kept() -> None:
    text = "a: { runner: h200, tp: 8 }\r\nb: 1\r\n"
    new = replace_scalars(text, [("a", "runner", Mark(1, 14))], "cluster:h200", "h200")
    assert new == 'a: { runner: "cluster:h200", tp: 8 }\r\nb: 1\r\n'
    assert yaml.safe_load(new) == {"a": {"runner": "cluster:h200", "tp": 8}, "b": 1}


def test_a_token_that_is_not_the_value_is_refused() -> None:
    text = "a:\n  runner: h200\n"
    assert replace_scalars(text, [("a", "runner", Mark(2, 11))], "x", "h100") is None  # wrong old value
    assert replace_scalars(text, [("a", "runner", Mark(9, 1))], "x", "h200") is None  # no such line
    assert replace_scalars("a: [1, 2]\n", [("a", "b", Mark(1, 4))], "x", None) is None  # not a scalar
