"""lm-evaluation-harness (EleutherAI ``lm_eval``) results, read in the three forms people share.

1. Its results JSON (``results.json``, ``results_<date>.json``): a top-level ``"results"``
   (and ``"groups"``) object, ``{task: {"alias": ..., "<metric>,<filter>": value,
   "<metric>_stderr,<filter>": stderr}}``, beside ``"n-shot"`` ``{task: n}``,
   ``"higher_is_better"`` ``{task: {metric: bool}}``, ``"versions"`` and ``"configs"``. Results
   of lm_eval before 0.4 have no ``,<filter>``; their filter is ``none``. A stderr of ``"N/A"``
   is no stderr.
2. The markdown table it prints: ``|Tasks|Version|Filter|n-shot|Metric| |Value| |Stderr|``
   with ``↑``/``↓`` in the column after Metric (older versions have none) and ``±`` before the
   stderr; a row with an empty Tasks cell continues the task above; subtasks are indented
   ``" - name"``; a ``|Groups|...`` table after it adds the groups.
3. The same table copied from a rendered page: tab-separated cells, the same columns.

Everything is data: nothing in the input is evaluated or executed (``json.loads`` and string
splitting only). Budgets: :data:`MAX_BYTES` of text and :data:`MAX_ROWS` result rows; a problem
is an :class:`EvalError` naming the source and the line.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 8 * 1024 * 1024
MAX_ROWS = 10_000
_NO_STDERR = frozenset({"", "n/a", "na", "none", "nan", "-"})
_NP_FLOAT = re.compile(r"^np\.float(?:32|64)\(([^()]{1,40})\)$")  # what some lm_eval versions printed
_SEPARATOR = re.compile(r"^:?-+:?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_NO_ASYNC = re.compile(r"(?i)no[-_ ]async|async[-_ ]scheduling[^\n]{0,20}\b(?:off|disabled)\b|"
                       r"without\s+async[-_ ]scheduling")
ARROWS = {"\u2191": False, "\u2193": True}  # ↑ higher is better, ↓ lower is better


class EvalError(ValueError):
    """Input that is not lm_eval results (or is over a budget): where, and what."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source, self.line, self.message = source, line, message


@dataclass(frozen=True)
class Row:
    """One (task, filter, metric) result."""

    task: str
    filter: str
    metric: str
    n_shot: int | None
    value: float
    stderr: float | None  # None: not given (blank, "N/A")
    lower_is_better: bool | None  # from the table's arrow or the JSON's higher_is_better; None: not said
    line: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task, self.filter, self.metric)


@dataclass(frozen=True)
class Results:
    """The rows of one source (a file, or one table of a pull request's description)."""

    source: str
    rows: tuple[Row, ...]
    form: str  # "json", "markdown" or "tsv"
    line: int = 1  # where the table starts
    before: str = ""  # the last non-blank line before the table (what it is, in a description)

    @property
    def no_async(self) -> bool:
        """Whether the line before the table says it was run with async scheduling off."""
        return bool(_NO_ASYNC.search(self.before))


def parse(text: str, source: str) -> Results:
    """The results in ``text``: a results JSON object, or every lm_eval table in it (merged)."""
    _budget(text, source)
    if text.lstrip().startswith("{"):
        return parse_json(text, source)
    found = tables(text, source)
    if not found:
        raise EvalError(source, 1, "no lm_eval results here: neither a results JSON object nor a table with "
                                   "Tasks, Metric and Value columns (markdown or tab-separated)")
    rows = tuple(r for t in found for r in t.rows)
    if len(rows) > MAX_ROWS:
        raise EvalError(source, found[-1].line, f"more than {MAX_ROWS} result rows (the budget)")
    return Results(source, rows, found[0].form, found[0].line, found[0].before)


def _budget(text: str, source: str) -> None:
    if len(text) > MAX_BYTES:
        raise EvalError(source, 1, f"larger than the {MAX_BYTES // (1024 * 1024)} MiB budget for results")


# ------------------------------------------------------------------ JSON

def parse_json(text: str, source: str) -> Results:
    _budget(text, source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalError(source, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a number too long for int(), nesting too deep
        raise EvalError(source, 1, f"not readable JSON: {str(exc)[:120]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise EvalError(source, 1, 'not an lm_eval results file: no top-level "results" object')
    shots_: Any = data.get("n-shot")
    better_: Any = data.get("higher_is_better")
    shots: dict[str, Any] = shots_ if isinstance(shots_, dict) else {}
    better: dict[str, Any] = better_ if isinstance(better_, dict) else {}
    rows: list[Row] = []
    seen: set[str] = set()
    for block in ("results", "groups"):
        tasks = data.get(block)
        if not isinstance(tasks, dict):
            continue
        for task, metrics in tasks.items():
            if task in seen:
                continue
            seen.add(task)
            line = _line_of(text, json.dumps(task))
            if not isinstance(metrics, dict):
                raise EvalError(source, line, f'"{block}" -> {task!r} is not an object of metrics')
            rows += _json_rows(str(task), metrics, shots.get(task), better.get(task), line)
            if len(rows) > MAX_ROWS:
                raise EvalError(source, line, f"more than {MAX_ROWS} result rows (the budget)")
    return Results(source, tuple(rows), "json")


def _json_rows(task: str, metrics: dict[str, Any], shots: Any, better: Any, line: int) -> list[Row]:
    alias = metrics.get("alias")
    name = _task_name(alias) if isinstance(alias, str) and alias.strip() else task
    n_shot = shots if isinstance(shots, int) and not isinstance(shots, bool) else None
    out: list[Row] = []
    for key, value in metrics.items():
        metric, _, filt = str(key).partition(",")
        if metric.endswith("_stderr") or not _number(value):
            continue
        if not math.isfinite(float(value)):
            continue  # a NaN result cannot be compared; it is left out, not guessed
        se_key = f"{metric}_stderr,{filt}" if filt else f"{metric}_stderr"
        se: Any = metrics.get(se_key)
        stderr = float(se) if _number(se) and math.isfinite(float(se)) else None
        hib = better.get(metric) if isinstance(better, dict) else None
        lower = (not hib) if isinstance(hib, bool) else None
        out.append(Row(name, filt.strip() or "none", metric.strip(), n_shot, float(value), stderr, lower, line))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _line_of(text: str, needle: str) -> int:
    """The line of the first occurrence of ``needle`` after ``"results"`` (1 when not found)."""
    start = max(text.find('"results"'), 0)
    at = text.find(needle, start)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


# ------------------------------------------------------------------ tables

@dataclass(frozen=True)
class _Columns:
    task: int
    filter: int | None
    n_shot: int | None
    metric: int
    arrow: int | None
    value: int
    stderr: int | None
    groups: bool


def _split(line: str, form: str) -> list[str] | None:
    """The cells of a table line of ``form``, or None when the line is not one."""
    if form == "markdown":
        s = line.strip()
        if not s.startswith("|"):
            return None
        s = s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]
        return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(s)]
    if "\t" not in line:
        return None
    return [c.strip() for c in line.rstrip("\r\n").split("\t")]


def _header(cells: list[str]) -> _Columns | None:
    names = [c.strip().lower() for c in cells]
    if not names or names[0] not in ("tasks", "task", "groups") or "metric" not in names or "value" not in names:
        return None

    def at(*want: str) -> int | None:
        return next((i for i, n in enumerate(names) if n in want), None)

    metric, value = names.index("metric"), names.index("value")
    arrow = metric + 1 if metric + 1 < value and names[metric + 1] == "" else None
    return _Columns(0, at("filter"), at("n-shot", "n_shot", "fewshot", "num_fewshot"), metric, arrow, value,
                    at("stderr"), names[0] == "groups")


def tables(text: str, source: str) -> list[Results]:
    """Every lm_eval table in ``text`` (a file, or a pull request's description), in order. A
    ``|Groups|`` table adds its rows to the table before it."""
    _budget(text, source)
    lines = text.splitlines()
    out: list[Results] = []
    total = 0
    i = 0
    while i < len(lines):
        form, cols = _table_start(lines[i])
        if cols is None:
            i += 1
            continue
        start = i
        rows, i = _table_rows(lines, i + 1, form, cols, source)
        total += len(rows)
        if total > MAX_ROWS:
            raise EvalError(source, start + 1, f"more than {MAX_ROWS} result rows (the budget)")
        if cols.groups and out:
            prev = out[-1]
            out[-1] = Results(prev.source, prev.rows + tuple(rows), prev.form, prev.line, prev.before)
            continue
        before = next((ln.strip() for ln in reversed(lines[max(0, start - 5):start])
                       if ln.strip() and not ln.strip().startswith("```")), "")
        out.append(Results(source, tuple(rows), form, start + 1, before))
    return out


def _table_start(line: str) -> tuple[str, _Columns | None]:
    for form in ("markdown", "tsv"):
        cells = _split(line, form)
        if cells is not None:
            cols = _header(cells)
            if cols is not None:
                return form, cols
    return "", None


def _table_rows(lines: list[str], i: int, form: str, cols: _Columns, source: str) -> tuple[list[Row], int]:
    rows: list[Row] = []
    task = filt = ""
    while i < len(lines):
        cells = _split(lines[i], form)
        if cells is None or not any(cells) or _table_start(lines[i])[1] is not None:
            break
        lineno = i + 1
        i += 1
        if all(_SEPARATOR.match(c) or not c for c in cells):
            continue
        cells = cells + [""] * max(0, 1 + max(cols.value, cols.stderr or 0) - len(cells))
        if cells[cols.task]:
            task = _task_name(cells[cols.task])
            filt = ""
        elif not task:
            raise EvalError(source, lineno, "a row with no task, and no task above it to continue")
        if cols.filter is not None and cells[cols.filter]:
            filt = cells[cols.filter]
        metric = cells[cols.metric]
        if not metric or metric.lower() == "alias":  # an older table's alias row: names, no numbers
            continue
        value = _float(cells[cols.value])
        if value is None:
            raise EvalError(source, lineno, f"the value {cells[cols.value][:40]!r} of {task} {metric} is not a number")
        stderr = _stderr(cells[cols.stderr] if cols.stderr is not None else "", source, lineno, task, metric)
        n_shot = _int(cells[cols.n_shot]) if cols.n_shot is not None else None
        arrow = ARROWS.get(cells[cols.arrow]) if cols.arrow is not None else None
        rows.append(Row(task, filt or "none", metric, n_shot, value, stderr, arrow, lineno))
    return rows, i


def _task_name(cell: str) -> str:
    """``" - humanities"`` (a subtask, indented) is ``humanities``."""
    name = cell.strip()
    while name.startswith("- "):
        name = name[2:].strip()
    return name


def _float(cell: str) -> float | None:
    text = cell.strip()
    m = _NP_FLOAT.match(text)
    if m:
        text = m.group(1)
    if len(text) > 40:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _stderr(cell: str, source: str, line: int, task: str, metric: str) -> float | None:
    if cell.strip().lower() in _NO_STDERR:
        return None
    value = _float(cell)
    if value is None:
        raise EvalError(source, line, f"the stderr {cell[:40]!r} of {task} {metric} is not a number (or N/A)")
    return value


def _int(cell: str) -> int | None:
    text = cell.strip()
    return int(text) if text.isdigit() and len(text) < 6 else None
