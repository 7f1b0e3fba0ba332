"""``python -m bot recipes`` and ``lint --recipes`` through ``bot.cli.main``: the formats, the
JSON contract of docs/recipes.md, sources that cannot be read, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import FIXTURES, ROOT

REPO = FIXTURES / "recipe-parity"
RECIPES = str(REPO / "recipes")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_names_the_recipe_and_the_differences(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "recipes", str(REPO), "--source", RECIPES)
    assert code == 0
    assert "widget3-fp8-b200-sglang-mtp [tp=4 spec=mtp] (sglang):" in out
    assert "MAJOR-spec value-differs      speculative_num_steps: script 2, recipe 3" in out
    assert "widget3-fp8-b200-sglang [tp=4 spec=none] (sglang):" in out and "matches the recipe" in out


def test_json_follows_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "recipes", str(REPO), "--source", RECIPES, "--format", "json", "--entry", "widget3*")
    assert code == 0
    doc = json.loads(out)
    assert doc["version"] == 1 and doc["notes"] == []
    assert [c["entry"] for c in doc["comparisons"]] == ["widget3-fp8-b200-sglang-mtp", "widget3-fp8-b200-sglang"]
    mtp = doc["comparisons"][0]
    assert mtp["engine"] == "sglang" and mtp["point"]["spec-decoding"] == "mtp" and mtp["point"]["tp"] == 4
    assert mtp["recipe"]["path"] == "docs_new/src/snippets/configs/acme/widget3.jsx"
    assert mtp["recipe"]["selection"] == {"hw": "b200", "variant": "100b", "quant": "fp8", "strategy": "low-latency",
                                          "nodes": "single"}
    assert mtp["recipe"]["fallback"] is None and mtp["recipe"]["revision"].startswith("local:")
    assert {"key": "speculative_num_steps", "class": "MAJOR-spec", "status": "value-differs", "recipe": 3,
            "script": 2, "where": "benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh:5", "notes": [],
            "judged": True} in mtp["differences"]


def _keys(doc: object, skip: frozenset[str] = frozenset({"point", "selection"})) -> set[str]:
    """Every key of the document, not descending into the entry's own point fields or the selection."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            if k not in skip:
                out |= _keys(v, skip)
    elif isinstance(doc, list):
        for v in doc:
            out |= _keys(v, skip)
    return out


def test_the_doc_lists_every_key_emitted(capsys: pytest.CaptureFixture[str]) -> None:
    doc = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8")
    table = doc[doc.index("| key | meaning |"):]
    listed = {k for row in table.splitlines() if row.startswith("| `")
              for k in (part.strip("` ") for part in row.split("|")[1].split(","))}
    _, out, _ = run(capsys, "recipes", str(REPO), "--source", RECIPES, "--format", "json")
    emitted = _keys(json.loads(out))
    assert emitted == listed, f"documented {sorted(listed - emitted)}, undocumented {sorted(emitted - listed)}"


def test_markdown_is_the_pull_request_section(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "recipes", str(REPO), "--source", RECIPES, "--format", "markdown")
    assert code == 0 and out.startswith("### Recipe parity")
    assert "| `kv_cache_dtype` | MAJOR | missing-in-script |  | `fp8_e4m3` |  |" in out
    assert "the serve command matches the recipe" in out


def test_offline_without_a_cached_copy_is_a_note_and_exit_zero(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    code, out, err = run(capsys, "recipes", str(REPO), "--source", "github", "--offline", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert any("vLLM recipes not compared" in n and "offline" in n for n in doc["notes"])
    assert all(c["recipe"] is None for c in doc["comparisons"])
    assert "offline" in err


def test_a_folder_of_no_known_layout_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "recipes", str(REPO), "--source", str(tmp_path))
    assert code == 2 and "no recipe collection found" in err
    code, _, err = run(capsys, "lint", str(FIXTURES / "spec-layers"), "--recipes", str(tmp_path))
    assert code == 2 and "no recipe collection found" in err


def test_lint_recipes_reports_the_mismatch_and_says_when_nothing_could_be_read(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # the fixture's own configuration names its in-repo collection; --recipes overrides it
    code, out, _ = run(capsys, "lint", str(REPO), "--recipes", RECIPES, "--format", "json")
    found = json.loads(out)["findings"]
    assert code == 1 and sorted(f["entries"][0] for f in found if f["rule"] == "recipe-mismatch") == [
        "coder9b-fp8-h200-vllm", "widget3-fp8-b200-sglang-mtp"]
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    monkeypatch.setenv("BENCHBOT_RECIPES_API_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("BENCHBOT_GITHUB_RETRIES", "0")
    code, out, _ = run(capsys, "lint", str(REPO), "--recipes", "github", "--format", "json")
    [note] = [f for f in json.loads(out)["findings"] if f["rule"] == "recipe-mismatch"]
    assert note["severity"] == "info" and note["message"].startswith("recipe parity not checked")
    assert code == 0
