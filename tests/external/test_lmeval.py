"""bot.external.lmeval: lm_eval's results JSON, its markdown table and the tab-separated copy,
read into the same rows; bad input is an EvalError naming the source and the line."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.external import lmeval
from tests.conftest import FIXTURES

EVALS = FIXTURES / "evals"


def _rows(name: str) -> list[lmeval.Row]:
    res = lmeval.parse((EVALS / name).read_text(encoding="utf-8"), name)
    return sorted((replace(r, line=0) for r in res.rows), key=lambda r: r.key)


@pytest.mark.parametrize("run", ["base", "mtp"])
def test_the_three_forms_give_the_same_rows(run: str) -> None:
    as_json, as_md, as_tsv = (_rows(f"{run}.{ext}") for ext in ("json", "md", "tsv"))
    assert as_json == as_md == as_tsv
    gsm = {r.filter: r for r in as_json if r.task == "gsm8k"}
    assert set(gsm) == {"flexible-extract", "strict-match"}
    assert all(r.n_shot == 5 and r.metric == "exact_match" and r.lower_is_better is False for r in gsm.values())


def test_golden_base_values_and_the_forms() -> None:
    res = lmeval.parse((EVALS / "base.md").read_text(encoding="utf-8"), "base.md")
    assert res.form == "markdown" and res.line == 2
    first = res.rows[0]
    assert (first.task, first.filter, first.metric, first.value, first.stderr, first.line) == \
        ("gsm8k", "flexible-extract", "exact_match", 0.953, 0.0058, 4)
    # the continuation row (empty Tasks cell) belongs to gsm8k; N/A is no stderr; the arrow says lower is better
    assert (res.rows[1].task, res.rows[1].filter) == ("gsm8k", "strict-match")
    ppl = next(r for r in res.rows if r.metric == "word_perplexity")
    assert ppl.stderr is None and ppl.lower_is_better is True and ppl.n_shot == 0
    assert lmeval.parse((EVALS / "mtp-no-async.tsv").read_text(encoding="utf-8"), "x").form == "tsv"
    assert lmeval.parse((EVALS / "base.json").read_text(encoding="utf-8"), "x").form == "json"


def test_json_stderr_na_filterless_keys_and_aliases() -> None:
    text = ('{"results": {"mmlu_humanities": {"alias": " - humanities", "acc,none": 0.5, "acc_stderr,none": "N/A"},\n'
            ' "old": {"acc": 0.25, "acc_stderr": 0.01, "name": "old"}},\n "n-shot": {"old": 0}}')
    rows = {r.task: r for r in lmeval.parse_json(text, "r.json").rows}
    assert rows["humanities"].stderr is None and rows["humanities"].n_shot is None
    assert (rows["old"].filter, rows["old"].stderr, rows["old"].n_shot, rows["old"].line) == ("none", 0.01, 0, 2)


def test_groups_table_joins_the_tasks_table_and_subtasks_lose_their_indent() -> None:
    text = ("|Tasks|Version|Filter|n-shot|Metric| |Value| |Stderr|\n|---|---:|---|---:|---|---|---:|---|---:|\n"
            "| - formal_logic|1|none|0|acc|↑|0.2778|±|0.0401|\n\n"
            "|Groups|Version|Filter|n-shot|Metric| |Value| |Stderr|\n|---|---:|---|---:|---|---|---:|---|---:|\n"
            "|mmlu|2|none| |acc|↑|0.2294|±|0.0036|\n")
    [table] = lmeval.tables(text, "t.md")
    assert [(r.task, r.n_shot) for r in table.rows] == [("formal_logic", 0), ("mmlu", None)]


def test_an_older_table_without_arrows_and_with_numpy_stderr() -> None:
    text = ("|Task|Version|Filter|Metric|Value| |Stderr|\n|---|---|---|---|---|---|---|\n"
            "|mmlu|N/A|none|acc|0.5178|±|np.float64(0.11469802593837213)|\n| | | |alias|mmlu| | |\n")
    [row] = lmeval.parse(text, "old.md").rows
    assert row.stderr == pytest.approx(0.114698) and row.lower_is_better is None and row.n_shot is None


def test_tables_in_a_description_keep_the_line_before_them() -> None:
    body = ("Without MTP:\n\n```\n|Tasks|Filter|n-shot|Metric| |Value| |Stderr|\n|---|---|---|---|---|---|---|---|\n"
            "|gsm8k|flexible-extract|5|exact_match|↑|0.9530|±|0.0058|\n```\n"
            "With MTP, --no-async-scheduling:\n"
            "Tasks\tFilter\tn-shot\tMetric\t\tValue\t\tStderr\ngsm8k\tflexible-extract\t5\texact_match\t↑\t0.9522\t±\t0.0059\n")
    base, cand = lmeval.tables(body, "description")
    assert (base.form, base.before, base.no_async) == ("markdown", "Without MTP:", False)
    assert (cand.form, cand.no_async, cand.line) == ("tsv", True, 9)
    assert cand.rows[0].value == 0.9522


@pytest.mark.parametrize(("text", "line", "words"), [
    ('{"results": {"gsm8k": {"acc,none": 0.5,}}}', 1, "not JSON"),
    ('{\n  "results": [1, 2]\n}', 1, 'no top-level "results" object'),
    ('{"results": {\n"gsm8k": 3}}', 2, "is not an object of metrics"),
    ("|Tasks|Metric|Value|Stderr|\n|---|---|---|---|\n|gsm8k|acc|high|0.01|\n", 3, "is not a number"),
    ("|Tasks|Metric|Value|Stderr|\n|---|---|---|---|\n|gsm8k|acc|0.5|wide|\n", 3, "stderr 'wide'"),
    ("|Tasks|Metric|Value|Stderr|\n|---|---|---|---|\n| |acc|0.5|0.01|\n", 3, "no task"),
    ("just some words\n", 1, "no lm_eval results"),
    ("[" * 100_000 + "]" * 100_000, 1, "no lm_eval results"),
    ('{"results":' + "[" * 100_000 + "]" * 100_000 + "}", 1, "JSON"),
], ids=["json-syntax", "json-shape", "json-task", "value", "stderr", "continuation", "nothing", "brackets", "deep"])
def test_bad_input_names_the_source_and_line(text: str, line: int, words: str) -> None:
    with pytest.raises(lmeval.EvalError) as err:
        lmeval.parse(text, "in.txt")
    assert (err.value.source, err.value.line) == ("in.txt", line) and words in err.value.message
    assert str(err.value).startswith(f"in.txt:{line}: ")


def test_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmeval, "MAX_ROWS", 3)
    rows = "".join(f"|t{i}|acc|0.5|0.01|\n" for i in range(5))
    with pytest.raises(lmeval.EvalError, match="more than 3 result rows"):
        lmeval.parse("|Tasks|Metric|Value|Stderr|\n" + rows, "big.md")
    monkeypatch.setattr(lmeval, "MAX_BYTES", 10)
    with pytest.raises(lmeval.EvalError, match="budget"):
        lmeval.parse("|Tasks|Metric|Value|Stderr|\n", "big.md")
