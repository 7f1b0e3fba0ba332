"""Dispatch slicing (bot/shell/evaluator/slicing.py): what is skipped, what is not, and the same
findings and serve commands with slicing on and off on every fixture repo and the example."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.repo.cache import evalcache
from bot.repo.files import parsed
from bot.shell.evaluator import core, options, slicing, wordops
from bot.shell.evaluator.evaluate import Evaluator, Options, Result
from bot.shell.front.parse import parse
from bot.shell.ir.values import describe, lit
from tests.conftest import FIXTURES, NOT_REPOS
from tests.shell.test_evaluate import DictFS

ROOT = Path(__file__).resolve().parents[2]
REPOS = sorted([p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_REPOS]
               + [p for p in (ROOT / "examples").iterdir() if p.is_dir()])


class Counted:
    """Counts the statements ``slicing.skip`` skipped (and those it ran after all)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.skipped = 0
        self.ran = 0
        real = slicing.skip

        def counting(ev: core.Core, q: slicing.Quiet, st: Any) -> bool:
            done = real(ev, q, st)
            if done:
                self.skipped += 1
            else:
                self.ran += 1
            return done

        monkeypatch.setattr(slicing, "skip", counting)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    yield Counted(monkeypatch)


def _fresh() -> None:
    """No result of one mode may reach the other: every in-process memo is emptied."""
    parsed.reset()
    evalcache.reset()
    slicing.reset()
    options._STRING_CACHE.clear()
    wordops._SHIFT_CACHE.clear()


def _strip(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _strip(v) for k, v in o.items() if k != "seconds"}
    if isinstance(o, list):
        return [_strip(x) for x in o]
    return o


def _cli(*args: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*args, "--no-cache"])
    assert code in (0, 1), f"{args}: exit {code}"
    return _strip(json.loads(out.getvalue()))


def _both(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Any, Any]:
    _fresh()
    on = _cli(*args)
    monkeypatch.setattr(slicing, "ENABLED", False)
    _fresh()
    off = _cli(*args)
    monkeypatch.setattr(slicing, "ENABLED", True)
    _fresh()
    return on, off


@pytest.mark.parametrize("repo", REPOS, ids=lambda p: p.name)
def test_same_findings_and_serve_commands_sliced_and_not(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on, off = _both(monkeypatch, "lint", str(repo), "--format", "json")
    assert on == off
    if (repo / "benchmarks").is_dir():
        on, off = _both(monkeypatch, "serve", str(repo), "--format", "json", "--all-points")
        assert on == off


def test_the_corpus_has_statements_to_skip(counted: Counted, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something: slicing skips statements in these repos."""
    for repo in REPOS:
        _fresh()
        _cli("lint", str(repo), "--format", "json")
    assert counted.skipped >= 50, (counted.skipped, counted.ran)


# ------------------------------------------------------------------ units

def run(src: str, env: dict[str, str] | None = None, files: dict[str, str] | None = None,
        **opts: Any) -> Result:
    ev = Evaluator(DictFS(files or {}), Options(parse=parse, record_reads=True, **opts))
    return ev.run(parse("runners/launch_x.sh", src.encode()), {k: lit(v) for k, v in (env or {}).items()})


def _paths(r: Result) -> list[tuple[tuple[str, ...], bool]]:
    """What the paths record (paths that differ only in variables nothing reads are one)."""
    return sorted({(tuple(f"{type(e).__name__}:{describe(e.target) if hasattr(e, 'target') else ''}"
                         for e in p.events), p.exited) for p in r.paths})


def _same(src: str, env: dict[str, str] | None = None, files: dict[str, str] | None = None) -> Result:
    on = run(src, env, files)
    off = run(src, env, files, slice=False)
    assert _paths(on) == _paths(off)
    assert on.reads() == off.reads()
    assert [(h.what, h.line) for h in on.budget_hits] == [(h.what, h.line) for h in off.budget_hits]
    return on


RETRY = """\
bash benchmarks/run.sh
for i in 1 2 3 4 5; do
    rm -rf outputs 2>/dev/null && break
    echo "Retry $i/5: waiting for NFS locks"
    sleep 10
done
find . -name '.nfs*' -delete 2>/dev/null || true
"""


def test_a_retry_loop_after_the_job_is_skipped(counted: Counted) -> None:
    r = _same(RETRY)
    assert [describe(d.target) for d in r.dispatches()] == ["benchmarks/run.sh"]
    assert counted.skipped >= 1
    assert len(r.paths) == 1  # the loop's forks are gone


def test_skipped_statements_cost_fewer_steps() -> None:
    body = "if grep -q ok logs/status; then echo has logs; ls logs | wc -l; fi\n" * 40 + "bash benchmarks/run.sh\n"
    on = Evaluator(DictFS({}), Options(parse=parse))
    on.run(parse("l.sh", body.encode()), {})
    off = Evaluator(DictFS({}), Options(parse=parse, slice=False))
    off.run(parse("l.sh", body.encode()), {})
    assert on.budget.steps * 3 < off.budget.steps


def test_an_unset_read_under_set_u_is_evaluated(counted: Counted) -> None:
    src = "set -u\nif grep -q ok status; then echo \"$LOGS\"; fi\necho done\nbash benchmarks/run.sh\n"
    r = _same(src)
    assert counted.ran >= 1  # LOGS is unset: the statement runs, and one path exits there
    assert any(p.exited for p in r.paths)
    assert [x.name for x in r.reads()] == ["LOGS"]
    counted.ran = counted.skipped = 0
    r = _same(src, {"LOGS": "/tmp/l"})
    assert counted.skipped >= 1
    assert not any(p.exited for p in r.paths)


@pytest.mark.parametrize("src", [
    # the variable the loop sets decides the script after it
    "for x in a b; do echo $x; done\nbash benchmarks/$x.sh\n",
    # an assignment read by a dispatched word
    "if [ -f a ]; then n=1; fi\nbash benchmarks/run$n.sh\n",
    # its status is looked at
    "grep -q x f\nif [ $? -eq 0 ]; then bash benchmarks/a.sh; fi\n",
    # the last statement of a function is its status
    "f() { echo hi; [ -d x ]; }\nif f; then bash benchmarks/a.sh; fi\n",
    # an expansion that assigns
    "echo ${WHICH:=b}\nbash benchmarks/$WHICH.sh\n",
    # a write to a file
    "echo x > benchmarks/gen.sh\nbash benchmarks/gen.sh\n",
    # a printf width or a power may run out a budget, which is reported
    "printf '%99999999d' 1\nbash benchmarks/a.sh\n",
    "echo $((2 ** 70))\nbash benchmarks/a.sh\n",
    # eval may read any variable
    "for s in a; do :; done\neval 'bash benchmarks/$s.sh'\n",
])
def test_what_may_decide_the_dispatch_is_not_skipped(src: str) -> None:
    tree = parse("l.sh", src.encode())
    slicing.register(tree.body, frozenset())
    skipped = {id(s) for s in tree.body} & set(slicing.table(frozenset()))
    first = tree.body[0]
    assert id(first) not in skipped, src
    _same(src)


def test_a_budget_hit_in_quiet_looking_code_is_still_reported() -> None:
    r = _same("x=$(printf '%99999999d' 1)\nbash benchmarks/a.sh\n")
    assert [h.what for h in r.budget_hits] == ["printf width"]


def test_an_exported_or_input_variable_is_not_made_unknown(counted: Counted) -> None:
    src = "for MODEL in a b; do :; done\nbash benchmarks/run.sh\n"
    r = _same(src, {"MODEL": "m"})
    assert counted.skipped == 0 and counted.ran == 1  # MODEL is the evaluation's own: run the loop
    assert [describe(d.target) for d in r.dispatches()] == ["benchmarks/run.sh"]


def test_a_variable_another_file_reads_is_not_skipped(counted: Counted) -> None:
    files = {"lib.sh": "go() { bash benchmarks/$pick.sh; }\n"}
    src = "source lib.sh\nfor pick in a; do :; done\ngo\n"
    r = _same(src, files=files)
    assert counted.skipped == 0
    assert [describe(d.target) for d in r.dispatches()] == ["benchmarks/a.sh"]


def test_a_capture_runs_what_it_captures(counted: Counted) -> None:
    src = "f() { printf a; echo b; }\nX=$(f)\nbash benchmarks/$X.sh\n"
    r = _same(src)
    assert counted.skipped == 0
    assert [describe(d.target) for d in r.dispatches()] == ["benchmarks/ab.sh"]


@pytest.mark.parametrize("src", [
    pytest.param("for a in 1 2 3; do hf download m && break\n if [ \"$a\" = 3 ]; then exit 1; fi; done\n"
                 "bash benchmarks/a.sh\n", id="and-break"),
    pytest.param("for a in 1 2; do if hf download m; then break; fi\n exit 1; done\nbash benchmarks/a.sh\n",
                 id="if-break"),
    pytest.param("while true; do hf download m && break; sleep 1; done\nbash benchmarks/a.sh\n", id="while"),
])
def test_a_break_is_never_skipped_without_its_loop(src: str) -> None:
    """``hf download X && break`` is quiet but for its ``break``: skipping it alone left every
    path of a retry loop at the ``exit`` after it."""
    r = _same(src)
    assert any(not p.exited and p.events for p in r.paths)
