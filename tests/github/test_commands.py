"""The grammar of PR comment commands: pure parsing, no GitHub."""

from __future__ import annotations

import random
import re

import pytest

from bot.github.commands import TRIGGERS, Bench, Command, Help, Invalid, Lint, Runs, help_text, parse

SKU = re.compile(r"(cluster:)?[a-z0-9][a-z0-9._-]{0,63}")
ENTRY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
MTP = "kimik2.5-int4-mi325x-vllm-mtp"


@pytest.mark.parametrize("body, expected", [
    ("/bench mi325x", [Bench("mi325x", line=1)]),
    ("/bench mi325x-disagg", [Bench("mi325x-disagg", line=1)]),
    ("/bench b200-nv --all", [Bench("b200-nv", all=True, line=1)]),
    (f"/bench mi325x {MTP} --force", [Bench("mi325x", (MTP,), force=True, line=1)]),
    (f"/bench --force mi325x {MTP} e2", [Bench("mi325x", (MTP, "e2"), force=True, line=1)]),
    ("/bench mi325x e1 e1 e2 e1", [Bench("mi325x", ("e1", "e2"), line=1)]),
    ("/bench cluster:mi355x", [Bench("cluster:mi355x", line=1)]),
    ("/bench\tmi325x\t\te1  ", [Bench("mi325x", ("e1",), line=1)]),
    ("/bench MI325X Kimi_K2.5-Entry", [Bench("mi325x", ("Kimi_K2.5-Entry",), line=1)]),
    ("/BENCH mi325x --all --all", [Bench("mi325x", all=True, line=1)]),
    ("/lint", [Lint(1)]),
    ("/Lint  ", [Lint(1)]),
    ("/help", [Help(1)]),
    ("   /bench mi325x", [Bench("mi325x", line=1)]),
    (" /lint", [Lint(1)]),
    ("please run\n\n/bench mi325x\nthanks", [Bench("mi325x", line=3)]),
    pytest.param("/bench x " + " ".join(f"e{i}" for i in range(32)), [Bench("x", tuple(f"e{i}" for i in range(32)),
                                                                           line=1)], id="32-entries"),
])
def test_plain_commands(body: str, expected: list[Command]) -> None:
    assert parse(body) == expected


def test_several_commands_in_order_with_lines() -> None:
    body = "/lint\nsome text\n/bench mi325x\n/bnech b200\n/help\n/bench b200-nv --all"
    kinds = [(type(c).__name__, c.line) for c in parse(body)]
    assert kinds == [("Lint", 1), ("Bench", 3), ("Invalid", 4), ("Help", 5), ("Bench", 6)]


def test_at_most_ten_commands() -> None:
    body = "\n".join(f"/bench sku{i}" for i in range(15))
    commands = parse(body)
    assert len(commands) == 10
    assert commands[-1] == Bench("sku9", line=10)
    assert len(parse("/bnech\n" * 12 + "/lint")) == 10  # Invalid ones count too


@pytest.mark.parametrize("body, expected", [
    # fenced code, with info strings and longer fences
    ("```\n/bench a\n```\n/bench b", [Bench("b", line=4)]),
    ("~~~\n/bench a\n~~~\n/bench b", [Bench("b", line=4)]),
    ("```sh\n/bench a\n```\n/bench b", [Bench("b", line=4)]),
    ("~~~ text {.x}\n/bench a\n~~~~~~\n/bench b", [Bench("b", line=4)]),
    ("````\n/bench a\n```\n/bench b\n````\n/bench c", [Bench("c", line=6)]),
    ("~~~\n/bench a\n```\n/bench b\n~~~\n/bench c", [Bench("c", line=6)]),
    ("```\n/bench a\n```  \n/bench b", [Bench("b", line=4)]),
    ("   ```\n/bench a\n   ```\n/bench b", [Bench("b", line=4)]),
    ("```\n/bench a\n``` x\n/bench b", []),  # a fence with text after it does not close
    ("```\n/bench a\n/lint", []),  # unclosed: the rest is code
    ("text\n```python\n/bench a\n", []),
    ("``` not`a fence\n/bench b", [Bench("b", line=2)]),  # a backtick info string with a backtick: no fence
    ("``\n/bench b\n``", [Bench("b", line=2)]),
    # indented code
    ("    /bench mi325x", []),
    ("\t/bench mi325x", []),
    ("  \t/bench mi325x", []),
    ("        /bench mi325x\n/lint", [Lint(2)]),
    # quoted replies, any depth
    ("> /bench mi325x", []),
    (">/bench mi325x", []),
    (">> /bench mi325x", []),
    ("> > /bench mi325x", []),
    ("   > /bench mi325x", []),
    ("> @bot said:\n> /bench mi325x\n\n/lint", [Lint(4)]),
    ("> ```\n> x\n/bench b", [Bench("b", line=3)]),  # a fence in a quote ends with the quote
    # HTML comments
    ("<!-- /bench mi325x -->", []),
    ("<!--\n/bench mi325x\n-->", []),
    ("<!-- template\n/bench a\n\n/lint\n-->\n/help", [Help(6)]),
    ("text <!-- hidden\n/bench a\n--> <!--\n/bench b\n-->\n/bench c", [Bench("c", line=6)]),
    ("<!-- a --> <!-- b\n/bench a\n-->", []),
    ("<!--\n/bench a", []),  # unclosed comment: the rest is hidden
    ("> <!--\n/bench a\n-->", []),  # conservative: ignoring more is safe
    ("```\n<!--\n```\n/bench b", [Bench("b", line=4)]),  # <!-- in code is literal
    ("<!--\n```\n-->\n/bench b", [Bench("b", line=4)]),  # a fence in a comment is not a fence
])
def test_code_quotes_and_comments_are_ignored(body: str, expected: list[Command]) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize("body, expected", [
    ("/bench a\r\n/lint\r\n", [Bench("a", line=1), Lint(2)]),
    ("/bench a\r/lint\r/help", [Bench("a", line=1), Lint(2), Help(3)]),
    ("```\r\n/bench a\r\n```\r\n/bench b\r\n", [Bench("b", line=4)]),
    ("<!--\r/bench a\r-->\r/bench b", [Bench("b", line=4)]),
    ("/bench a\r\r\n/lint", [Bench("a", line=1), Lint(3)]),
])
def test_line_endings(body: str, expected: list[Command]) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize("body, offending", [
    ("/bench mi325x; rm -rf /", "`mi325x;`"),
    ("/bench mi325x ; rm -rf /", "`;`"),
    ("/bench $(id)", "`$(id)`"),
    ("/bench `id`", "`id`"),
    ("/bench mi325x && curl x", "`&&`"),
    ("/bench mi325x | sh", "`|`"),
    ("/bench mi325x > /tmp/x", "`>`"),
    ("/bench mi325x e1 \"e2\"", '`"e2"`'),
    ("/bench mi325x 'e2'", "`'e2'`"),
    ("/bench mi325x e\\1", "`e\\1`"),
    ("/bench mi325x e*", "`e*`"),
    ("/bench mi325x e?", "`e?`"),
    ("/bench m\u0456325x", "U+0456"),  # Cyrillic i
    ("/bench mi325x\u00a0--force", "U+00A0"),
    ("/bench mi325x e1\u2028$(id)", "U+2028"),
    ("/bench mi325x\x00", "U+0000"),
    ("/bench mi325x e\x1b[31m", "U+001B"),
    ("/bench mi325x e\u202ex", "U+202E"),
    ("/bench mi325x\x0b$(id)", "U+000B"),
])
def test_metacharacters_make_the_whole_command_invalid(body: str, offending: str) -> None:
    commands = parse(body)
    assert len(commands) == 1 and isinstance(commands[0], Invalid), commands
    assert offending in commands[0].reason
    assert not any(isinstance(c, Bench | Lint | Help) for c in commands)
    assert all(ord(ch) >= 32 and ch not in "\u2028\u202e" for ch in commands[0].text + commands[0].reason)


@pytest.mark.parametrize("body", ["/bench mi325x\n$(id)", "/bench mi325x\n; rm -rf /", "/bench mi325x\r; rm -rf /",
                                  "/bench mi325x\r\n`id`", "/bench mi325x\n--force"])
def test_a_newline_ends_the_command(body: str) -> None:
    assert parse(body) == [Bench("mi325x", line=1)]


def test_no_continuation_lines() -> None:
    (command,) = parse("/bench mi325x \\\n--force")
    assert isinstance(command, Invalid) and "`\\`" in command.reason


def test_echoed_arguments_are_short_and_inert() -> None:
    long = "$" + "x" * 500 + "`@someone`<b>"
    (command,) = parse(f"/bench {long}")
    assert isinstance(command, Invalid)
    span = re.search(r"`[^`]*`", command.reason)
    assert span and len(span[0]) <= 42 and "@someone" not in command.reason
    assert len(command.text) <= 80 and command.text.endswith("…")
    (command,) = parse("/bench ``")
    assert isinstance(command, Invalid) and "(unprintable)" in command.reason


@pytest.mark.parametrize("body, suggestion", [
    ("/bnech mi325x", "`/bench`"),
    ("/benh mi325x", "`/bench`"),
    ("/Bench: mi325x", "`/bench`"),
    ("/bench, mi325x", "`/bench`"),
    ("/benches mi325x", "`/bench`"),
    ("/b\u0435nch mi325x", "`/bench`"),  # Cyrillic e in the trigger word
    ("/lnit", "`/lint`"),
    ("/lint.", "`/lint`"),
    ("/hepl", "`/help`"),
    ("/help!", "`/help`"),
    ("/bench mi325x --al", "`--all`"),
    ("/bench mi325x -f", "`--force`"),
    ("/bench mi325x --forse", "`--force`"),
    ("/bench mi325x --FORCE", "`--force`"),
    ("/bench mi325x \u2014force", "`--force`"),  # an em dash from a phone keyboard
])
def test_near_misses_suggest_the_right_spelling(body: str, suggestion: str) -> None:
    (command,) = parse(body)
    assert isinstance(command, Invalid)
    assert f"did you mean {suggestion}?" in command.reason


@pytest.mark.parametrize("body", [
    "/cc @someone", "/assign", "/usr/bin/env bash", "/bench/results are here", "/benchmark mi325x",
    "/bench-foo mi325x", "/hello", "/", "/ bench mi325x", "//bench", "text /bench mi325x", "`/bench mi325x`",
    "- /bench mi325x", "* /lint", "a/bench", "\\/bench mi325x", "\u00a0/bench mi325x", "",
])
def test_slash_lines_that_are_not_ours_are_ignored(body: str) -> None:
    assert parse(body) == []


@pytest.mark.parametrize("body, reason", [
    ("/bench", "`/bench` needs a GPU SKU or runner label, e.g. `/bench mi325x`"),
    ("/bench --force", "`/bench` needs a GPU SKU or runner label"),
    ("/bench mi325x e1 --all", "use either entry names or `--all`"),
    ("/bench mi325x --all e1", "use either entry names or `--all`"),
    pytest.param("/bench mi325x " + " ".join(f"e{i}" for i in range(33)), "at most 32 entry names", id="33-entries"),
    ("/bench -x mi325x", "the flags are `--all`, `--force` and `--yes`"),
    ("/bench cancel now", "`/bench cancel` takes no other arguments"),
    ("/bench status mi325x", "`/bench status` takes no other arguments"),
    ("/bench status --yes", "`/bench status` takes no other arguments"),
    ("/bench --yes status", "`status` must come right after `/bench`, alone"),
    ("/bench .mi325x", "is not a GPU SKU or runner label"),
    pytest.param("/bench " + "a" * 65, "is not a GPU SKU or runner label", id="sku-of-65"),
    ("/bench nodes:mi325x", "is not a GPU SKU or runner label"),
    ("/bench mi325x e:1", "is not a config entry name"),
    ("/bench mi325x _e1", "is not a config entry name"),
    pytest.param("/bench mi325x " + "e" * 129, "is not a config entry name", id="entry-of-129"),
    ("/lint now", "`/lint` takes no arguments"),
    ("/help bench", "`/help` takes no arguments"),
])
def test_invalid_bench_arguments(body: str, reason: str) -> None:
    (command,) = parse(body)
    assert isinstance(command, Invalid) and reason in command.reason and command.line == 1


def test_help_text_lists_every_command_with_an_example() -> None:
    text = help_text()
    for trigger in TRIGGERS:
        assert f"`{trigger}" in text
    assert "/bench mi325x" in text and "--all" in text and "--force" in text


HEADS = ["/bench ", "/BENCH ", "  /bench ", "/bench\t", "    /bench ", "> /bench ", "/lint", "/help", "/bnech ", "",
         "```", "~~~", "<!--", "-->", "text "]
GOOD = ["mi325x", "MI325X", "b200-nv", "e1", "kimi_k2.5", "cluster:mi355x", "--all", "--force"]
BAD = ["-", ".", "_", ":", ";", "$(", ")", "`", "```", ">", "<!--", "-->", "|", "&", "\"", "'", "\\", "*", "?", "\x00",
       "\u0456", "\u00a0", "\n", "\r", "\r\n", "a", "Z", "9"]


def _random_body(rng: random.Random) -> str:
    """Lines that mostly look like commands; arguments are mostly plausible, some glued with metacharacters."""
    lines = []
    for _ in range(rng.randint(1, 6)):
        args = ("".join(rng.choice(GOOD if rng.random() < 0.85 else BAD) for _ in range(rng.choice((1, 1, 2))))
                for _ in range(rng.randint(0, 4)))
        lines.append(rng.choice(HEADS) + rng.choice((" ", "  ", "\t")).join(args))
    return rng.choice(("\n", "\r\n", "\r")).join(lines)


def test_fuzz_only_strict_arguments_come_out() -> None:
    rng = random.Random(0)
    benches = 0
    for _ in range(2000):
        body = _random_body(rng)
        commands = parse(body)
        assert len(commands) <= 10
        lines = re.split(r"\r\n|\r|\n", body)
        for command in commands:
            assert 1 <= command.line <= len(lines)
            if isinstance(command, Invalid):
                assert len(command.text) <= 80 and "\x00" not in command.text + command.reason
            if isinstance(command, Bench):
                benches += 1
                assert SKU.fullmatch(command.target), body
                assert all(ENTRY.fullmatch(e) for e in command.entries) and len(command.entries) <= 32
                assert not (command.all and command.entries)
                line = lines[command.line - 1]
                assert line.lstrip(" ").lower().startswith("/bench") and not line.startswith(("    ", ">", "\t"))
                assert not re.search(r"[;$`|&<>\"'\\*?()\x00\u0456\u00a0]", line), body
    assert benches > 200  # the property was exercised


@pytest.mark.parametrize("body, expected", [
    ("/bench mi325x @5ca31cc", Bench("mi325x", line=1, sha="5ca31cc")),
    ("/bench mi325x e1 --force @5CA31CCAB", Bench("mi325x", ("e1",), force=True, line=1, sha="5ca31ccab")),
    ("/bench @" + "a" * 40 + " mi325x", Bench("mi325x", line=1, sha="a" * 40)),
])
def test_a_named_sha(body: str, expected: Command) -> None:
    assert parse(body) == [expected]


@pytest.mark.parametrize("body, reason", [
    ("/bench mi325x @5ca31c", "is not a commit"),  # 6 digits
    ("/bench mi325x @" + "a" * 41, "is not a commit"),
    ("/bench mi325x @main", "is not a commit"),
    ("/bench mi325x @5ca31cc;id", "is not a commit"),
    ("/bench mi325x @5ca31cc @5ca31cd", "at most one commit"),
    ("/bench mi325x @", "is not a commit"),
])
def test_a_bad_sha_makes_the_command_invalid(body: str, reason: str) -> None:
    [command] = parse(body)
    assert isinstance(command, Invalid) and reason in command.reason


@pytest.mark.parametrize("body, expected", [
    ("/bench mi325x --yes", [Bench("mi325x", line=1, yes=True)]),
    ("/bench mi325x --all --yes @5ca31cc", [Bench("mi325x", all=True, line=1, sha="5ca31cc", yes=True)]),
    ("/bench status", [Runs("status", 1)]),
    ("/bench CANCEL", [Runs("cancel", 1)]),
    ("/bench\tcancel  ", [Runs("cancel", 1)]),
    ("/bench mi325x cancel", [Bench("mi325x", ("cancel",), line=1)]),  # an entry named cancel
])
def test_yes_and_the_run_subcommands(body: str, expected: list[Command]) -> None:
    assert parse(body) == expected


def test_help_text_uses_the_repositorys_labels_and_lists_the_label_trigger() -> None:
    text = help_text(["h200-nb", "cluster:mi355x"], (("bench-h200", "h200"),), max_jobs=12)
    assert "Example: `/bench h200-nb --force @5ca31cc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6`" in text
    assert "`cluster:mi355x`" in text
    assert "`/bench status`" in text and "`/bench cancel`" in text and "--yes" in text and "more than 12" in text
    assert "`bench-h200` runs `/bench h200`" in text
    assert "mi325x" not in text
    generic = help_text()
    assert "Example: `/bench mi325x --force @5ca31cc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6`" in generic
    assert "Labels:" not in generic
