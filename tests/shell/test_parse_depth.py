"""Hostile nesting and size: both front-ends, the evaluator and ``python -m bot lint`` give a
result or a parse error with a line for every construct, never an exception or a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import pytest

from bot.repo.env.profile import Profile
from bot.repo.facts import Facts, _RepoFS
from bot.repo.files.tree import WorkTree
from bot.shell.evaluator.evaluate import Evaluator, Options
from bot.shell.front import bashlex_front
from bot.shell.front.parse import parse as ts_parse
from bot.shell.front.parse import syntax_errors
from bot.shell.ir import nesting
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import describe, lit
from tests.conftest import EXAMPLE, ROOT, copy_repo

LIMIT = nesting.MAX_NESTING


def _n(open_: str, inner: str, close: str, n: int) -> str:
    return open_ * n + inner + close * n


# name -> (script, line of the first error tree-sitter reports, or None for none)
CONSTRUCTS: dict[str, tuple[str, int | None]] = {
    "150 $( )": ("echo " + _n("$(echo ", "x", ")", 150) + "\n", 1),
    "200 \"$( )\"": ("echo " + _n('"$(echo ', "x", ')"', 200) + "\n", 1),
    "500 if": (_n("if true; then\n", ":\n", "fi\n", 500), LIMIT + 1),
    "3000 &&": (" && ".join(["true"] * 3001) + "\n", None),
    "3000 ||": (" || ".join(["true"] * 3001) + "\n", None),
    "3000 |": (" | ".join(["cat"] * 3001) + "\n", None),
    "2000 ( ) spaced": (_n("( ", ":", " )", 2000) + "\n", 1),
    "2000 (( ))": (_n("(", ":", ")", 2000) + "\n", 1),  # tree-sitter reads (( as arithmetic: a syntax error
    "1000 { }": (_n("{ ", ":; ", "}; ", 1000) + "\n", 1),
    "1000 { } no ;": (_n("{ ", ":; ", "} ", 1000) + "\n", 1),  # bash accepts, tree-sitter does not
    "500 for": (_n("for a in 1; do\n", ":\n", "done\n", 500), LIMIT + 1),
    "500 while": (_n("while true; do\n", ":\n", "done\n", 500), LIMIT + 1),
    "500 until": (_n("until false; do\n", ":\n", "done\n", 500), LIMIT + 1),
    "500 case": (_n("case x in x)\n", ":\n", ";; esac\n", 500), LIMIT + 1),
    "500 functions": (_n("f() {\n", ":\n", "}\n", 500), LIMIT + 1),
    "1000 ${a:-": ("echo " + _n("${a:-", "x", "}", 1000) + "\n", 1),
    "1000 $(( ( ))": ("echo $(( " + _n("(", "1", ")", 1000) + " ))\n", None),
    "3000 [[ && ]]": ("[[ " + " && ".join(["a"] * 3000) + " ]]\n", 1),
    "3000 [ ! ]": ("[ " + "! " * 3000 + "a ]\n", 1),
    "3000 !": ("! " * 3000 + "true\n", None),
    "100k array": ("a=(" + " ".join(f"x{i}" for i in range(100_000)) + ")\necho \"${a[@]}\"\n", None),
    "1 MB line": ("echo " + "x" * (1 << 20) + "\n", None),
    "20k lines of :": (":\n" * 20_000, None),
}
FRONTS: dict[str, Callable[[str, bytes], ir.Script]] = {"tree-sitter": ts_parse, "bashlex": bashlex_front.parse}


@lru_cache(maxsize=None)
def _parsed(front: str, name: str) -> ir.Script:
    """Each construct parsed once per front-end (the 100k-line ones take seconds)."""
    return FRONTS[front]("x.sh", CONSTRUCTS[name][0].encode())


def _deep(errors: tuple[ir.ParseError, ...]) -> list[tuple[int, int]]:
    return [(e.pos.line, e.pos.col) for e in errors if nesting.is_too_deep(e)]


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_front_end_gives_ir_or_a_parse_error_with_a_line(name: str, front: str) -> None:
    line = CONSTRUCTS[name][1]
    script = _parsed(front, name)
    assert all(e.pos.line >= 1 for e in script.errors), script.errors
    assert nesting.ir_depth(script.body) <= nesting.IR_DEPTH_BOUND
    if front == "tree-sitter":
        first = script.errors[0].pos.line if script.errors else None
        assert first == line, script.errors[:1]
    elif line is not None and _deep(_parsed("tree-sitter", name).errors):
        assert script.errors and script.errors[0].pos.line == line, script.errors[:1]


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_syntax_errors_report_the_construct_parse_cuts(name: str) -> None:
    source = CONSTRUCTS[name][0].encode()
    assert _deep(syntax_errors(source)) == _deep(_parsed("tree-sitter", name).errors)


# Forms nested n deep with a dispatch at the bottom: (script, line of the level past the limit).
FORMS: dict[str, Callable[[int], str]] = {
    "if": lambda n: _n("if true; then\n", "bash x.sh\n", "fi\n", n),
    "for": lambda n: _n("for a in 1; do\n", "bash x.sh\n", "done\n", n),
    "while": lambda n: _n("while true; do\n", "bash x.sh\n", "break\ndone\n", n),
    "$( )": lambda n: "echo " + _n("$(echo ", "$(bash x.sh)", ")", n - 1) + "\n",
    '"$( )"': lambda n: "echo " + _n('"$(echo ', "$(bash x.sh)", ')"', n - 1) + "\n",
    "( )": lambda n: _n("( ", "bash x.sh", " )", n) + "\n",
    "{ }": lambda n: _n("{ ", "bash x.sh; ", "}; ", n) + "\n",
    "( | )": lambda n: _n("( true | ", "bash x.sh", " )", n) + "\n",
    "if &&": lambda n: _n("if true; then true && ", "bash x.sh", "; fi", n) + "\n",
    "${a:-": lambda n: "echo " + _n("${a:-", "$(bash x.sh)", "}", n - 1) + "\n",
}


@contextmanager
def _stack_budget(frames: int) -> Iterator[None]:
    """Allow only ``frames`` Python frames above the caller's: parsing and evaluating at the
    limit must fit in this, so Python's default limit (1000) is never near."""
    depth, f = 0, sys._getframe()
    while f is not None:
        depth, f = depth + 1, f.f_back
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _dispatches(tmp_path: Path, script: ir.Script, front: Callable[[str, bytes], ir.Script]) -> list[str]:
    (tmp_path / "x.sh").write_text(":\n")
    facts = Facts(WorkTree(str(tmp_path)), Profile(), front)
    result = Evaluator(_RepoFS(facts), Options(parse=front)).run(script, {"A": lit("1")}, argv0="l.sh")
    return [describe(d.target) for d in result.dispatches()]


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("form", FORMS)
def test_at_the_limit_everything_is_analysed_within_700_frames(tmp_path: Path, form: str, front: str) -> None:
    parse = FRONTS[front]
    with _stack_budget(700):
        script = parse("l.sh", FORMS[form](LIMIT).encode())
        assert not script.errors, script.errors
        dispatched = _dispatches(tmp_path, script, parse)
    assert dispatched == ["x.sh"]


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("form", FORMS)
def test_one_level_past_the_limit_is_unknown_and_reported(tmp_path: Path, form: str, front: str) -> None:
    parse = FRONTS[front]
    source = FORMS[form](LIMIT + 1)
    script = parse("l.sh", source.encode())
    deep = _deep(script.errors)
    assert len(deep) == 1, script.errors
    expected_line = LIMIT + 1 if form in ("if", "for", "while") else 1
    assert deep[0][0] == expected_line
    assert nesting.ir_depth(script.body) <= nesting.IR_DEPTH_BOUND
    if front == "tree-sitter":  # the cut part is unknown; bashlex rejects the whole text
        assert nesting.TOO_DEEP in repr(script.body)
        assert _dispatches(tmp_path, script, parse) == []


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_evaluating_every_construct_returns(tmp_path: Path, name: str, front: str) -> None:
    assert _dispatches(tmp_path, _parsed(front, name), FRONTS[front]) == []


def test_bashlex_out_of_stack_is_a_parse_error_at_the_deepest_line() -> None:
    source = "echo ok\n" + "echo " + _n("$(echo ", "x", ")", 40) + "\n"
    with _stack_budget(120):  # bashlex needs about ten frames per $( ) level
        script = bashlex_front.parse("x.sh", source.encode())
    assert script.body == ()
    assert [(e.message, e.pos.line) for e in script.errors] == [
        ("bashlex: nesting too deep for bashlex (40 levels at the deepest point)", 2)]


def test_tree_sitter_out_of_stack_is_a_parse_error() -> None:
    source = "echo ok\n" + "echo " + _n("$(echo ", "x", ")", 40) + "\n"
    with _stack_budget(60):
        script = ts_parse("x.sh", source.encode())
    assert script.body == ()
    assert [e.pos.line for e in script.errors] == [2]
    assert "nesting too deep to convert" in script.errors[0].message


def test_pre_check_skips_quotes_comments_and_here_documents() -> None:
    deep_if = "if true; then\n" * (LIMIT + 1)
    text = (f"echo '{deep_if}'\n# {'( ' * 100}\ncat <<'EOF'\n{deep_if}EOF\n"
            f"cat <<-X\n\t{'$( ' * 100}\n\tX\necho \"{'{ ' * 100}\" done fi esac\n")
    assert nesting.too_deep_offset(text) is None
    assert nesting.deepest(text)[0] == 0
    assert nesting.too_deep_offset(text + deep_if) == len(text) + len("if true; then\n") * LIMIT


LAUNCHERS = ["runners/launch_mi300x-amds.sh", "runners/launch_mi325x-amds.sh", "runners/launch_mi355x-amds.sh"]
STRAY = "benchmarks/single_node/fixed_seq_len/stray_{}.sh"
_NAMES = list(CONSTRUCTS)
CHUNKS = [_NAMES[i : i + len(LAUNCHERS)] for i in range(0, len(_NAMES), len(LAUNCHERS))]


@pytest.mark.parametrize("chunk", CHUNKS, ids=[" + ".join(c) for c in CHUNKS])
def test_lint_pipeline_reports_shell_syntax_never_a_traceback(tmp_path: Path, chunk: list[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    expected: dict[str, int] = {}
    for k, name in enumerate(chunk):
        source, line = CONSTRUCTS[name]
        deep = bool(_deep(syntax_errors(source.encode())))
        for path in (LAUNCHERS[k], STRAY.format(k)):
            (repo / path).write_text("#!/usr/bin/env bash\n" + source)
            if deep:
                assert line is not None
                expected[path] = line + 1
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    deep_found = {f["path"]: f["line"] for f in findings
                  if f["code"] == "BB001" and f["message"].startswith(f"nesting deeper than {LIMIT} levels")}
    assert deep_found == expected


def test_backquotes_in_expansion_arguments_are_parsed_a_bounded_number_of_times() -> None:
    """``${X:-`cmd`}``: tree-sitter leaves the substitution as text and parse.py parses its body
    on its own; past ``MAX_REPARSED`` per file the output is unknown (a file of thousands costs
    no more than one parse each of 64 bodies), and the lines stay right."""
    from bot.shell.front.parse_words import MAX_REPARSED

    n = MAX_REPARSED + 40
    script = ts_parse("x.sh", "".join(f'X{i}="${{U:-`echo v{i}`}}"\n' for i in range(n)).encode())
    assert script.errors == ()
    subs = [a.value.parts[0].arg.parts[0] for a in (s.assigns[0] for s in script.body)]  # type: ignore[attr-defined]
    parsed = [s for s in subs if not isinstance(s.body[0], ir.Opaque)]
    assert len(parsed) == MAX_REPARSED and all(isinstance(s, ir.CmdSub) for s in subs)
    assert [s.body[0].kind for s in subs[MAX_REPARSED:]] == ["substitution-not-parsed"] * (n - MAX_REPARSED)
    assert [s.body[0].pos.line for s in subs[:3]] == [1, 2, 3]
    first = script.body[0].assigns[0].value.parts[0].arg.parts[0].body[0]  # type: ignore[attr-defined]
    assert describe(lit(first.words[1].parts[0].text)) == "v0"


def test_a_backquoted_default_far_down_keeps_its_line() -> None:
    """The body is parsed on its own (not behind the file's lines, which made 64 of them at
    the end of a 4-million-line file cost 64 parses of the file) and moved to its place."""
    source = b"\n" * 10_000 + b'X="${U:-`echo v\n  w`}"\n'
    script = ts_parse("x.sh", source)
    body = script.body[0].assigns[0].value.parts[0].arg.parts[0].body  # type: ignore[attr-defined]
    assert [(s.pos.line, s.pos.col) for s in body] == [(10_001, 10), (10_002, 3)]
    v = body[0].words[1].pos
    assert source[v.start_byte:v.end_byte] == b"v" and (v.line, v.col) == (10_001, 15)
