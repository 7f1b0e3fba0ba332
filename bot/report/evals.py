"""Accuracy evidence: lm_eval results of a base run against candidate runs, and its reports.

Rows pair on (task, filter, metric), and on n-shot when both sides say it. For each pair the
difference ``d = candidate - base`` is set against the combined standard error
``se = sqrt(se_base**2 + se_candidate**2)``: ``|d| <= 2 se`` is within noise, else a drop or a
gain (for a metric where lower is better, a rise is the drop). Without both stderrs nothing is
guessed: the verdict says it cannot tell. Pure: no I/O; :func:`as_text`, :func:`as_json` and
:func:`as_markdown` render (markdown escapes every name through :mod:`bot.report.markdown`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.external.lmeval import Results, Row
from bot.report import markdown as md

JSON_VERSION = 1
WITHIN, DROP, GAIN, NO_STDERR = "within-noise", "drop", "gain", "no-stderr"
VERDICT_TEXT = {WITHIN: "within noise", DROP: "drop", GAIN: "gain", NO_STDERR: "no stderr: cannot tell"}
# lm_eval metrics where lower is better, when neither an arrow nor higher_is_better says so
LOWER_IS_BETTER = frozenset({"perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte"})
WARN = "\u26a0\ufe0f"
_EPS = 1e-12  # |d| == 2 se exactly (0.0171 vs 0.01710000001) is within noise


@dataclass(frozen=True)
class Pair:
    task: str
    filter: str
    metric: str
    n_shot: int | None
    lower_is_better: bool
    base: Row
    cand: Row
    diff: float
    se: float | None  # the combined standard error; None: a side has no stderr
    verdict: str


@dataclass(frozen=True)
class Side:
    """One candidate against the base: its pairs and the rows either side could not pair."""

    label: str
    results: Results
    pairs: tuple[Pair, ...]
    base_only: tuple[Row, ...]
    cand_only: tuple[Row, ...]


@dataclass(frozen=True)
class Comparison:
    base_label: str
    base: Results
    sides: tuple[Side, ...]

    @property
    def drops(self) -> list[tuple[Side, Pair]]:
        return [(s, p) for s in self.sides for p in s.pairs if p.verdict == DROP]


def compare(base: Results, candidates: Sequence[Results], labels: Sequence[str] | None = None,
            base_label: str = "base") -> Comparison:
    names = list(labels) if labels is not None else [f"candidate {i + 1}" for i in range(len(candidates))]
    return Comparison(base_label, base, tuple(_side(name, base, c) for name, c in zip(names, candidates)))


def _side(label: str, base: Results, cand: Results) -> Side:
    pool: dict[tuple[str, str, str], list[Row]] = {}
    for r in base.rows:
        pool.setdefault(r.key, []).append(r)
    used: set[int] = set()
    pairs: list[Pair] = []
    cand_only: list[Row] = []
    for c in cand.rows:
        match = next((b for b in pool.get(c.key, []) if id(b) not in used
                      and (b.n_shot is None or c.n_shot is None or b.n_shot == c.n_shot)), None)
        if match is None:
            cand_only.append(c)
            continue
        used.add(id(match))
        pairs.append(pair(match, c))
    base_only = tuple(b for b in base.rows if id(b) not in used)
    return Side(label, cand, tuple(pairs), base_only, tuple(cand_only))


def lower_is_better(base: Row, cand: Row) -> bool:
    """The table's arrow (or the JSON's higher_is_better) of either side, else the metric's name."""
    for said in (base.lower_is_better, cand.lower_is_better):
        if said is not None:
            return said
    return base.metric.lower() in LOWER_IS_BETTER


def pair(base: Row, cand: Row) -> Pair:
    diff = cand.value - base.value
    lower = lower_is_better(base, cand)
    se = math.sqrt(base.stderr ** 2 + cand.stderr ** 2) if base.stderr is not None and cand.stderr is not None \
        else None
    if se is None:
        verdict = NO_STDERR
    elif abs(diff) <= 2 * se + _EPS:
        verdict = WITHIN
    else:
        verdict = DROP if (diff > 0) == lower else GAIN
    n_shot = base.n_shot if base.n_shot is not None else cand.n_shot
    return Pair(base.task, base.filter, base.metric, n_shot, lower, base, cand, diff, se, verdict)


# ------------------------------------------------------------------ renderers

def _num(x: float) -> str:
    return f"{x:.4f}"


def _signed(x: float) -> str:
    return f"{x:+.4f}"


def _value(r: Row) -> str:
    return _num(r.value) + (f" \u00b1 {_num(r.stderr)}" if r.stderr is not None else " (no stderr)")


def _shot(n: int | None) -> str:
    return f"{n}-shot" if n is not None else "n-shot ?"


def _what(task: str, filt: str, metric: str, n_shot: int | None) -> str:
    return f"{task} {filt} {_shot(n_shot)} {metric}"


def summary(c: Comparison) -> str:
    """One line: pairs, drops, gains, and what could not be told."""
    pairs = [p for s in c.sides for p in s.pairs]
    count = {v: sum(1 for p in pairs if p.verdict == v) for v in VERDICT_TEXT}
    unpaired = sum(len(s.base_only) + len(s.cand_only) for s in c.sides)
    parts = [f"{len(pairs)} compared", f"{count[DROP]} drop{'s' if count[DROP] != 1 else ''} beyond 2 se",
             f"{count[GAIN]} gain{'s' if count[GAIN] != 1 else ''}", f"{count[WITHIN]} within noise"]
    if count[NO_STDERR]:
        parts.append(f"{count[NO_STDERR]} without stderr")
    if unpaired:
        parts.append(f"{unpaired} unpaired")
    return ", ".join(parts)


def as_text(c: Comparison) -> str:
    out = [f"{c.base_label}: {c.base.source} ({len(c.base.rows)} rows)"]
    for s in c.sides:
        out += ["", f"{s.label}: {s.results.source} ({len(s.results.rows)} rows) vs {c.base_label}"]
        for p in s.pairs:
            arrow = "\u2193" if p.lower_is_better else "\u2191"
            noise = f"2 se = {_num(2 * p.se)}" if p.se is not None else "2 se = ?"
            mark = "! " if p.verdict == DROP else "  "
            out.append(f"{mark}{_what(p.task, p.filter, p.metric, p.n_shot)} {arrow}: {_value(p.base)} -> "
                       f"{_value(p.cand)}: d = {_signed(p.diff)} ({noise}): {VERDICT_TEXT[p.verdict]}")
        for side, rows in ((c.base_label, s.base_only), (s.label, s.cand_only)):
            for r in rows:
                out.append(f"  unpaired (only in {side}, line {r.line}): {_what(r.task, r.filter, r.metric, r.n_shot)}")
    out += ["", summary(c)]
    return "\n".join(out) + "\n"


def _row_json(r: Row) -> dict[str, Any]:
    return {"task": r.task, "filter": r.filter, "metric": r.metric, "n_shot": r.n_shot, "line": r.line}


def as_json(c: Comparison) -> dict[str, Any]:
    return {
        "version": JSON_VERSION,
        "base": {"label": c.base_label, "source": c.base.source, "form": c.base.form, "rows": len(c.base.rows)},
        "candidates": [{
            "label": s.label, "source": s.results.source, "form": s.results.form, "rows": len(s.results.rows),
            "pairs": [{"task": p.task, "filter": p.filter, "metric": p.metric, "n_shot": p.n_shot,
                       "higher_is_better": not p.lower_is_better,
                       "base": {"value": p.base.value, "stderr": p.base.stderr, "line": p.base.line},
                       "candidate": {"value": p.cand.value, "stderr": p.cand.stderr, "line": p.cand.line},
                       "diff": p.diff, "stderr": p.se, "verdict": p.verdict} for p in s.pairs],
            "unpaired": {"base": [_row_json(r) for r in s.base_only],
                         "candidate": [_row_json(r) for r in s.cand_only]},
        } for s in c.sides],
        "drops": len(c.drops),
    }


def as_markdown(c: Comparison, *, max_rows: int = 200) -> str:
    """A table (one row per candidate and pair; a drop flagged), then the unpaired rows. Every
    name goes through :mod:`bot.report.markdown`'s escaping: the input may be untrusted."""
    out = ["| candidate | task | filter | n-shot | metric | base | candidate value | d | 2 se | verdict |",
           "|---|---|---|---:|---|---:|---:|---:|---:|---|"]
    shown = 0
    total = sum(len(s.pairs) for s in c.sides)
    for s in c.sides:
        for p in s.pairs:
            if shown >= max_rows:
                break
            shown += 1
            verdict = VERDICT_TEXT[p.verdict]
            verdict = f"{WARN} **{verdict}**" if p.verdict == DROP else verdict
            arrow = " \u2193" if p.lower_is_better else ""
            cells = [md.escape(s.label), md.code(p.task), md.code(p.filter),
                     str(p.n_shot) if p.n_shot is not None else "", md.code(p.metric) + arrow,
                     _value(p.base), _value(p.cand), _signed(p.diff),
                     _num(2 * p.se) if p.se is not None else "?", verdict]
            out.append("| " + " | ".join(md.cell(x) for x in cells) + " |")
    if total == 0:
        out = ["No row of the base pairs with a row of a candidate (task, filter, metric and n-shot must match)."]
    elif shown < total:
        out.append(f"\n\u2026 and {total - shown} more pairs")
    unpaired = [(label, r) for s in c.sides for label, rows in ((c.base_label, s.base_only), (s.label, s.cand_only))
                for r in rows]
    if unpaired:
        out += ["", "Unpaired rows: " + "; ".join(
            f"{md.code(_what(r.task, r.filter, r.metric, r.n_shot))} only in {md.escape(label)}"
            for label, r in unpaired[:20]) + (f"; and {len(unpaired) - 20} more" if len(unpaired) > 20 else "")]
    return "\n".join(out) + "\n"
