"""``benchbot eval-compare``: golden reports for the three input forms, the exit codes, stdin,
and bad input as one line naming the file and the line (exit 2, never a traceback)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import FIXTURES, ROOT

EVALS = FIXTURES / "evals"
GOLDEN = ("base.json", "mtp.md", "mtp-no-async.tsv")  # the three forms: JSON, markdown, tab-separated


@pytest.mark.parametrize(("fmt", "expected"), [("text", "golden.txt"), ("markdown", "golden.md"),
                                               ("json", "golden.json")])
def test_golden(fmt: str, expected: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(EVALS)
    assert main(["eval-compare", *GOLDEN, "--format", fmt]) == 1  # candidate 1's strict-match is a drop
    assert capsys.readouterr().out == (EVALS / "expected" / expected).read_text(encoding="utf-8")


def test_golden_numbers_from_the_notes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(EVALS)
    main(["eval-compare", *GOLDEN])
    text = capsys.readouterr().out
    assert ("gsm8k flexible-extract 5-shot exact_match \u2191: 0.9530 \u00b1 0.0058 -> 0.9454 \u00b1 0.0063: "
            "d = -0.0076 (2 se = 0.0171): within noise") in text
    assert "0.9530 \u00b1 0.0058 -> 0.9522 \u00b1 0.0059: d = -0.0008 (2 se = 0.0165): within noise" in text
    assert "word_perplexity \u2193: 9.1234 (no stderr) -> 9.1502 (no stderr): d = +0.0268 (2 se = ?): " \
           "no stderr: cannot tell" in text
    assert "unpaired (only in candidate 2, line 4): arc_easy none 0-shot acc" in text
    data = json.loads((EVALS / "expected" / "golden.json").read_text(encoding="utf-8"))
    first = data["candidates"][0]["pairs"][0]
    assert (first["diff"], first["verdict"]) == (pytest.approx(-0.0076), "within-noise")
    assert 2 * first["stderr"] == pytest.approx(0.0171, abs=5e-5)
    assert [c["form"] for c in data["candidates"]] == ["markdown", "tsv"] and data["base"]["form"] == "json"


@pytest.mark.parametrize("ext", ["json", "md", "tsv"])
def test_each_form_against_itself_is_within_noise(ext: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-compare", str(EVALS / f"base.{ext}"), str(EVALS / "mtp-no-async.tsv")]) == 0
    out = capsys.readouterr().out
    assert "2 compared, 0 drops beyond 2 se, 0 gains, 2 within noise, 3 unpaired" in out


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((EVALS / "mtp.tsv").read_bytes())))
    assert main(["eval-compare", str(EVALS / "base.md"), "-", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["candidates"][0]["source"] == "<stdin>"
    assert main(["eval-compare", "-", "-"]) == 2
    assert "- (stdin) can be given only once" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "where"), [
    (b'{"results": {"gsm8k": {"acc,none": 0.5}},\n "x": }', ":2: not JSON"),
    (b"|Tasks|Metric|Value|Stderr|\n|---|---|---|---|\n|gsm8k|acc|0.5|0.01|\n|gsm8k|acc|__import__('os')|0.01|\n",
     ":4: the value \"__import__('os')\" of gsm8k acc is not a number"),
    (b"hello\n\xff\xfe\n", ":2: not UTF-8 text"),
    (b"nothing to see\n", ":1: no lm_eval results here"),
], ids=["json", "value", "utf8", "empty"])
def test_bad_input_is_exit_2_with_file_and_line(content: bytes, where: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    assert main(["eval-compare", str(EVALS / "base.json"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"benchbot: {bad}{where}") and err.count("\n") == 1, err


def test_a_missing_file_and_a_file_over_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-compare", str(tmp_path / "nope.json"), str(EVALS / "mtp.md")]) == 2
    assert "nope.json: cannot read: No such file or directory" in capsys.readouterr().err
    from bot.external import lmeval

    monkeypatch.setattr(lmeval, "MAX_BYTES", 100)
    assert main(["eval-compare", str(EVALS / "base.json"), str(EVALS / "mtp.md")]) == 2
    assert "base.json:1: larger than the" in capsys.readouterr().err


def test_as_a_process_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"results": ' + "[" * 200_000 + "]" * 200_000 + "}")
    proc = subprocess.run([sys.executable, "-m", "bot", "eval-compare", str(bad), str(EVALS / "mtp.md")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and f"{bad}:1:" in proc.stderr, proc.stderr


def test_docs_name_every_json_key() -> None:
    """docs/evals.md's contract table names every key the JSON output has."""
    doc = (ROOT / "docs" / "evals.md").read_text(encoding="utf-8")
    table = doc.split("## JSON", 1)[1].split("## On pull requests", 1)[0]
    data = json.loads((EVALS / "expected" / "golden.json").read_text(encoding="utf-8"))
    cand = data["candidates"][0]
    keys = {*data, *data["base"], *cand, *cand["pairs"][0], *cand["pairs"][0]["base"],
            *cand["unpaired"], *data["candidates"][1]["unpaired"]["candidate"][0]}
    cells = " ".join(re.findall(r"^\|.*\|$", table, re.M))  # the table's rows, not the example above it
    missing = sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", cells))
    assert missing == []
