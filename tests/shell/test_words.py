"""Backslash handling shared by both front-ends."""

from __future__ import annotations

from bot.shell.ir.words import ansi_c, unescape_dq, unescape_unquoted


def test_unquoted_backslash_escapes_anything_and_continues_lines() -> None:
    assert unescape_unquoted("a\\ b\\\nc\\*") == "a bc*"


def test_double_quotes_escape_only_their_specials() -> None:
    assert unescape_dq('a\\"b \\$c \\`d\\\\ \\x\\\ne') == 'a"b $c `d\\ \\xe'


def test_ansi_c() -> None:
    assert ansi_c("a\\nb\\tc\\q") == "a\nb\tc\\q"
