"""Evaluation budgets (bot/shell/evaluator/budget.py) and the cost of keeping many paths, through
the real tree-sitter front-end and the real evaluator. Counts, never times."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_config
from bot.repo.env.profile import Variant, profile_from_config
from bot.repo.files.tree import WorkTree
from bot.repo.load.configs import Entry, Point
from bot.rules._variants import MAX_CANDIDATES, candidates
from bot.shell.evaluator import arith
from bot.shell.evaluator.budget import HARD_MAX_STEPS, Budget, BudgetExceeded, Limits
from bot.shell.evaluator.evaluate import Evaluator, FileSystem, Options, Result
from bot.shell.front.parse import parse
from bot.shell.ir.nodes import Script
from bot.shell.ir.values import Unk, known, lit, match, pat_from_val


class NoFS(FileSystem):
    def is_file(self, path: str) -> bool:
        return False

    def is_dir(self, path: str) -> bool:
        return False

    def script(self, path: str) -> Script | None:
        return None


def evaluate(src: str, env: dict[str, str] | None = None, **limits: object) -> tuple[Evaluator, Result]:
    ev = Evaluator(NoFS(), Options(parse=parse, limits=Limits(**limits)))  # type: ignore[arg-type]
    return ev, ev.run(parse("runners/launch_x.sh", src.encode()), {k: lit(v) for k, v in (env or {}).items()})


def dispatched(result: Result) -> list[str]:
    return sorted(known(d.target) or "?" for d in result.dispatches())


def test_step_budget_stops_a_recursive_function_in_its_steps() -> None:
    ev, r = evaluate("f() { f; f; f; f; f; f; }\nf\nbash b/x.sh\n", max_steps=5000, max_seconds=60)
    assert r.paths == [] and r.dispatches() == []
    assert r.stopped is not None and r.stopped.what == "step budget (5,000 steps)"
    assert (r.stopped.path, r.stopped.line, r.stopped.detail) == ("runners/launch_x.sh", 1, "f")
    assert 5000 < ev.budget.steps <= 5000 + 256  # the clock and the count are looked at every 256 steps


def test_deadline_stops_the_evaluation() -> None:
    ticks = iter(range(1_000_000))
    budget = Budget(Limits(max_steps=10**7, max_seconds=5), clock=lambda: float(next(ticks)))
    with pytest.raises(BudgetExceeded) as e:
        for _ in range(10_000):
            budget.step("x.sh", 3, "loop")
    assert e.value.hit.what == "deadline (5 s)" and e.value.hit.fatal and budget.steps == 6 * 256


def test_nested_loops_are_counted() -> None:
    loops = "".join(f"for v{i} in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do " for i in range(7))
    # (Y decides the script: loops that set only what nothing reads are skipped, bot/shell/evaluator/slicing.py)
    _, r = evaluate(loops + "Y=$v6; " + "done; " * 7 + '\nbash "b/$Y.sh"\n', max_steps=20_000, max_seconds=60)
    assert r.stopped is not None and r.stopped.what.startswith("step budget")


def test_doubling_value_becomes_unknown_at_the_byte_limit() -> None:
    src = "X=x\n" + "X=$X$X\n" * 32 + 'bash "b/${X}.sh"\n'
    _, r = evaluate(src, max_value=1024)
    assert [h.what for h in r.budget_hits] == ["value over 1 KB"]
    assert r.budget_hits[0].line == 12  # 2**11 = 2048 > 1024: the 11th doubling, line 12
    (d,) = r.dispatches()
    assert any(isinstance(p, Unk) and p.why == "value over 1 KB" for p in d.target)


def test_replace_that_would_blow_up_is_unknown() -> None:
    src = "A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nB=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\nC=${A//a/$B}\n"
    _, r = evaluate(src + 'bash "b/$C.sh"\n', max_value=1000)
    assert [h.what for h in r.budget_hits] == ["value over 1000 bytes"]


@pytest.mark.parametrize(("expr", "want"), [("2**62", 2**62), ("7/-2", -3), ("-7%3", -1), ("010+1", 9),
                                            ("(1+2)*3", 9), ("2**3**2", 512)])
def test_arithmetic_within_64_bits(expr: str, want: int) -> None:
    assert arith.evaluate(expr) == want


@pytest.mark.parametrize("expr", ["9**9**9", "2**64", "99999999999999999999", "4611686018427387904*2",
                                  pytest.param("(" * 200 + "1" + ")" * 200, id="200-parens")])
def test_arithmetic_beyond_the_caps_is_unknown(expr: str) -> None:
    with pytest.raises(arith.Capped):
        arith.evaluate(expr)
    _, r = evaluate(f"X=$(({expr}))\nbash b/$X.sh\n")
    assert [h.what for h in r.budget_hits] == ["arithmetic beyond 64 bits"]
    assert dispatched(r) == ["?"]


@pytest.mark.parametrize("expr", ["1/0", "2**-1", "08", "X+1", "1 +"])
def test_arithmetic_we_do_not_model_is_unknown_without_a_hit(expr: str) -> None:
    assert arith.evaluate(expr) is None


def test_printf_width_and_char() -> None:
    _, r = evaluate("A=$(printf '%2000000000s' x)\nB=$(printf '%c' 9999999)\nbash b/$B.sh\n")
    assert [h.what for h in r.budget_hits] == ["printf width"]
    assert dispatched(r) == ["b/9.sh"]  # %c prints the first character of its argument


def test_regex_runs_in_linear_time_and_backreferences_are_unknown() -> None:
    x = "a" * 5000 + "!"
    _, r = evaluate(f'X={x}\nif [[ $X =~ ^(a+)+$ ]]; then bash b/yes.sh; else bash b/no.sh; fi\n')
    assert dispatched(r) == ["b/no.sh"] and r.budget_hits == ()
    _, r = evaluate('X=aa\nif [[ $X =~ (a)\\1 ]]; then bash b/yes.sh; else bash b/no.sh; fi\n')
    assert dispatched(r) == ["b/no.sh", "b/yes.sh"]  # re2 rejects \1: both branches


def test_glob_match_is_linear() -> None:
    steps: list[int] = []
    subject = lit("a" * 20_000)
    assert match(subject, pat_from_val(lit("*a*a*a*a*a*a*a*b"), True), steps.append) is False
    assert sum(steps) == 20_000 // 256 + 1  # one pass over the text


def test_paths_are_keyed_in_linear_work() -> None:
    """With many paths alive, keying them after each statement costs the same per
    statement however many variables the script has set (no re-sorting of every path)."""

    def script(blocks: int) -> str:
        lines = []
        for i in range(blocks):
            lines += [f'V_{i}="value-{i}"', f'if [[ "$HOSTNAME" == *-{i % 7} ]]; then', f"    E_{i}=1", "fi",
                      f'echo "{i}"']
        return "\n".join(lines) + "\nbash b/x.sh\n"

    work = []
    for n in (100, 200, 400):
        # the merge machinery itself: no slicing (it would skip what sets variables nothing reads)
        ev = Evaluator(NoFS(), Options(parse=parse, max_paths=16, unknown_names=lambda name: name == "HOSTNAME",
                                       slice=False))
        r = ev.run(parse("runners/launch_x.sh", script(n).encode()), {})
        assert r.bound_hit and dispatched(r) == ["b/x.sh"]
        work.append(ev.key_work)
    assert work[1] <= 2.5 * work[0] and work[2] <= 2.5 * work[1], work


def test_budget_settings_from_the_profile(tmp_path: Path) -> None:
    p = profile_from_config({"max-steps": 10**12, "max-seconds": 0.5, "max-value-bytes": 4096})
    assert (p.max_steps, p.max_seconds, p.max_value_bytes) == (HARD_MAX_STEPS, 0.5, 4096)
    (tmp_path / ".benchbot.yml").write_text("profile:\n  max-seconds: 600\n")
    with pytest.raises(ConfigError, match="max-seconds"):
        load_config(WorkTree(tmp_path))


def test_variant_candidates_are_bounded() -> None:
    variants = tuple(Variant(f"v{i}", suffix=f"_v{i}") for i in range(24))
    entry = Entry("e", "c.yaml", None, {}, ())  # type: ignore[arg-type]
    point = Point({}, None, "fixed-seq-len", {})  # type: ignore[arg-type]
    out = candidates("benchmarks/x.sh", entry, point, variants)
    assert len(out) == MAX_CANDIDATES
    assert out[0][0] == "benchmarks/x" + "".join(f"_v{i}" for i in range(24)) + ".sh"
