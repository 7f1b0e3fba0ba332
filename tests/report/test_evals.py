"""bot.report.evals: the pairing, the verdicts (the numbers from the MTP notes) and the renderers."""

from __future__ import annotations

import math

import pytest

from bot.external.lmeval import Results, Row
from bot.report import evals


def _row(value: float, stderr: float | None, metric: str = "exact_match", n_shot: int | None = 5,
         lower: bool | None = None, task: str = "gsm8k", filt: str = "flexible-extract") -> Row:
    return Row(task, filt, metric, n_shot, value, stderr, lower, 1)


def _res(*rows: Row, source: str = "x") -> Results:
    return Results(source, rows, "markdown")


def test_the_notes_numbers_mtp_is_within_noise() -> None:
    p = evals.pair(_row(0.9530, 0.0058), _row(0.9454, 0.0063))
    assert p.diff == pytest.approx(-0.0076) and 2 * (p.se or 0) == pytest.approx(0.0171, abs=5e-5)
    assert p.se == pytest.approx(math.sqrt(0.0058 ** 2 + 0.0063 ** 2))
    assert p.verdict == evals.WITHIN
    q = evals.pair(_row(0.9530, 0.0058), _row(0.9522, 0.0059))  # MTP, async scheduling off
    assert q.diff == pytest.approx(-0.0008) and q.verdict == evals.WITHIN


@pytest.mark.parametrize(("base", "cand", "lower", "metric", "verdict"), [
    (0.95, 0.90, None, "exact_match", evals.DROP),
    (0.90, 0.95, None, "exact_match", evals.GAIN),
    (9.0, 10.0, None, "word_perplexity", evals.DROP),  # lower is better by name
    (0.50, 0.40, None, "bits_per_byte", evals.GAIN),
    (0.50, 0.40, True, "loss", evals.GAIN),  # the ↓ arrow: lower is better
    (0.50, 0.60, True, "loss", evals.DROP),
    (0.50, 0.52, None, "acc", evals.WITHIN),  # |d| = 2 se exactly: within noise
])
def test_verdicts(base: float, cand: float, lower: bool | None, metric: str, verdict: str) -> None:
    assert evals.pair(_row(base, 0.01 / math.sqrt(2), metric, lower=lower),
                      _row(cand, 0.01 / math.sqrt(2), metric, lower=lower)).verdict == verdict


def test_a_missing_stderr_is_said_not_guessed() -> None:
    p = evals.pair(_row(0.9, None), _row(0.1, 0.01))
    assert (p.se, p.verdict) == (None, evals.NO_STDERR)
    c = evals.compare(_res(_row(0.9, None)), [_res(_row(0.1, 0.01))])
    assert "no stderr: cannot tell" in evals.as_text(c) and "no stderr: cannot tell" in evals.as_markdown(c)
    assert c.drops == []


def test_pairing_by_task_filter_metric_and_n_shot_when_both_say_it() -> None:
    base = _res(_row(0.9, 0.01), _row(0.8, 0.01, filt="strict-match"), _row(0.7, 0.01, task="arc", n_shot=0))
    cand = _res(_row(0.9, 0.01, n_shot=None), _row(0.8, 0.01, filt="strict-match", n_shot=8),
                _row(0.7, 0.01, task="arc", n_shot=0), _row(0.1, 0.01, task="new"))
    [side] = evals.compare(base, [cand]).sides
    assert [(p.task, p.filter, p.n_shot) for p in side.pairs] == [("gsm8k", "flexible-extract", 5),
                                                                  ("arc", "flexible-extract", 0)]
    assert [(r.task, r.filter) for r in side.base_only] == [("gsm8k", "strict-match")]
    assert [(r.task, r.n_shot) for r in side.cand_only] == [("gsm8k", 8), ("new", 5)]
    data = evals.as_json(evals.compare(base, [cand]))
    assert data["candidates"][0]["unpaired"]["candidate"][0] == {"task": "gsm8k", "filter": "strict-match",
                                                                 "metric": "exact_match", "n_shot": 8, "line": 1}


def test_markdown_escapes_names_and_flags_drops() -> None:
    hostile = "<img src=x>|@alice`"
    c = evals.compare(_res(_row(0.9, 0.001, task=hostile)), [_res(_row(0.5, 0.001, task=hostile))],
                      ["candidate 1 | <b>"])
    out = evals.as_markdown(c)
    row = out.splitlines()[2]
    assert "<b>" not in out and "&lt;b&gt;" in row  # text: escaped
    assert "`` <img src=x>\\|@alice` ``" in row  # a name: a code span (literal), its | escaped for the table
    assert row.count(" | ") == 9  # ten cells: every | of the names escaped
    assert "\u26a0\ufe0f **drop**" in row
