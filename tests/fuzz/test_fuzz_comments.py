"""Property: any comment body parses to at most MAX_COMMANDS well-formed commands, never raises.

Bodies are drawn from lines that look like commands (every trigger, near misses, flags, SHAs,
entry-like and hostile arguments, lookalike and invisible characters) mixed with markdown that
hides them (fences, quotes, indented code, HTML comments) and random text."""

from __future__ import annotations

import re

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from bot.github import commands
from bot.github.commands import Bench, Help, Invalid, Lint

_TARGET = re.compile(r"(cluster:)?[a-z0-9][a-z0-9._-]{0,63}")
_ENTRY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SHA = re.compile(r"[0-9a-f]{7,40}")

HEADS = st.sampled_from(["/bench", "/BENCH", "/lint", "/help", "/bnech", "/bench:", "/Bench\u200b", "/ｂench",
                         "/bench/", "/cc", "/usr/bin/x", "bench", "  /bench", "    /bench", "> /bench", "\t/bench"])
ARGS = st.sampled_from(["mi325x", "cluster:b200-dgxc", "MI325X", "kimik2.5-int4-mi325x-vllm-mtp", "--all",
                        "--force", "—force", "--forc", "-a", "@5ca31cc", "@5CA31CCdeadbeef", "@xyz", "@",
                        'x";id;"', "x$(id)", "`id`", "a|b", "--config-files", "/etc/passwd", "\u202e", "é",
                        "a" * 130, "\x1b[31m", "<!--", "-->", "```", "~~~", "'", "\\"])
LINE = st.one_of(
    st.tuples(st.sampled_from(["/bench"]), st.lists(st.sampled_from(["mi325x", "kimi-mtp", "--force", "@5ca31cc"]),
                                                     max_size=4), st.just(" ")).map(
        lambda t: t[0] + "".join(t[2] + a for a in t[1])),
    st.tuples(HEADS, st.lists(ARGS, max_size=6), st.sampled_from([" ", "\t", "  "])).map(
        lambda t: t[0] + "".join(t[2] + a for a in t[1])),
    st.sampled_from(["```", "~~~~", "```bash", "<!-- hidden", "-->", "> quoted", "", "text", "   ", "\r"]),
    st.text(max_size=40),
)
BODY = st.tuples(st.lists(LINE, max_size=25), st.sampled_from(["\n", "\r\n", "\r"])).map(lambda t: t[1].join(t[0]))


@settings(max_examples=600)
@given(BODY)
@example("/bench mi325x " + " ".join(f"e{i}" for i in range(40)))
@example("\n".join(["/bench mi325x"] * 50))
@example("<!--\n/bench mi325x\n-->\n/lint")
@example("/bench mi325x x\";id;\"")
def test_parse(body: str) -> None:
    found = commands.parse(body)
    assert len(found) <= commands.MAX_COMMANDS
    lines = body.count("\n") + body.count("\r") + 1
    for cmd in found:
        event(type(cmd).__name__)
        assert 1 <= cmd.line <= lines
        if isinstance(cmd, Bench):
            assert _TARGET.fullmatch(cmd.target), cmd
            assert len(cmd.entries) <= commands.MAX_ENTRIES
            assert all(_ENTRY.fullmatch(e) for e in cmd.entries), cmd
            assert not (cmd.entries and cmd.all)
            assert cmd.sha is None or _SHA.fullmatch(cmd.sha), cmd
        elif isinstance(cmd, Invalid):
            assert len(cmd.text) <= commands.TEXT_LIMIT + 1
            assert all(ch.isprintable() for ch in cmd.text), cmd.text
            assert "\n" not in cmd.reason and "\r" not in cmd.reason
        else:
            assert isinstance(cmd, (Lint, Help))


@settings(max_examples=300)
@given(st.text(max_size=2000))
def test_any_text(body: str) -> None:
    assert len(commands.parse(body)) <= commands.MAX_COMMANDS
