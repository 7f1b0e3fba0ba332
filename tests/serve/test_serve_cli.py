"""``python -m bot serve``: the JSON contract, the text form, options, and bad input that is
recorded in the facts (never a traceback)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

from bot.cli import main
from tests.conftest import FIXTURES

SCRIPTS = "benchmarks/single_node/fixed_seq_len"


def serve(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["serve", *args])
    return code, out.getvalue(), err.getvalue()


def copy_fixture(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "serve", repo)
    return repo


def commands(repo: Path, entry: str) -> list[dict[str, Any]]:
    code, out, err = serve(str(repo), "--format", "json", "--entry", entry)
    assert code == 0, err
    found: list[dict[str, Any]] = json.loads(out)["commands"]
    return found


def test_the_json_contract() -> None:
    code, out, _ = serve(str(FIXTURES / "serve"), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["version"] == 1 and set(doc) == {"version", "commands", "coverage"}
    keys = {"entry", "point", "launcher", "script", "engine", "model", "argv", "args", "env", "spec", "unknown",
            "sources", "client"}
    for c in doc["commands"]:
        assert keys <= set(c)
        assert {"isl", "osl", "conc", "spec-decoding"} <= set(c["point"])
    single = [c for c in doc["commands"] if not c["multinode"]]
    # a vLLM ``--config`` file is consumed (its keys are args), its source stays
    assert all(set(c["sources"]) <= set(c["args"]) | {"model", "config"} for c in single)
    assert set(doc["coverage"]) == {"single_node", "multi_node"}
    row = doc["coverage"]["single_node"]["sglang"]
    assert set(row) == {"resolved", "partial", "none", "short"} and row["resolved"] >= 2 and row["short"] == []


def test_text_shows_each_flag_with_its_line() -> None:
    code, out, _ = serve(str(FIXTURES / "serve"), "--entry", "kimik2.5-int4-h200-vllm-mtp")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("kimik2.5-int4-h200-vllm-mtp  [")
    tp = next(line for line in lines if line.strip().startswith("tensor_parallel_size"))
    assert tp.split()[1] == "8" and tp.endswith(f"{SCRIPTS}/kimik2.5_int4_h200_mtp.sh:14")
    assert any(line.strip().startswith("spec: method=eagle3") for line in lines)


def test_an_entry_pattern_that_matches_nothing_is_a_usage_error() -> None:
    code, _, err = serve(str(FIXTURES / "serve"), "--entry", "nope-*")
    assert code == 2 and "no entry matches nope-*" in err


def test_the_seed_example_serves_the_plain_script_for_an_mtp_entry() -> None:
    """The seed bug as facts: the MI300X MTP entry starts a server without speculative decoding."""
    seed = Path(__file__).resolve().parents[2] / "examples" / "seed"
    code, out, _ = serve(str(seed), "--format", "json", "--entry", "kimik2.5-int4-mi300x-vllm-mtp")
    assert code == 0
    for c in json.loads(out)["commands"]:
        assert c["point"]["spec-decoding"] == "mtp"
        assert c["script"].endswith("kimik2.5_int4_mi300x.sh") and c["spec"] is None
    code, out, _ = serve(str(seed), "--format", "json", "--entry", "kimik2.5-int4-mi355x-vllm-mtp")
    assert all(c["spec"]["kind"] == "eagle3" for c in json.loads(out)["commands"])


def test_an_unparseable_json_spec_config_is_a_reason(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    script = repo / SCRIPTS / "qwen3.5_fp8_b200_mtp.sh"
    text = script.read_text()
    start = text.index("SPEC_CONFIG=")
    end = text.index("\n", start)
    script.write_text(text[:start] + "SPEC_CONFIG='{\"method\": \"mtp\", num_speculative_tokens: }'" + text[end:])
    for c in commands(repo, "qwen3.5-fp8-b200-vllm-mtp"):
        assert isinstance(c["args"]["speculative_config"], str)
        assert any(u.startswith("speculative_config: not JSON") for u in c["unknown"])
        assert c["status"] == "partial"


def test_a_heredoc_that_never_ends_is_recorded(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    script = repo / SCRIPTS / "dsr1_fp4_b200_trt_mtp.sh"
    lines = script.read_text().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if line.strip() == "EOF"]
    script.write_text("".join(line for i, line in enumerate(lines) if i not in ends))
    found = commands(repo, "dsr1-fp4-b200-trt-mtp")
    assert found and all(c["engine"] is None and c["reasons"] for c in found)


def test_an_unknown_engine_flag_is_kept_and_reported(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    script = repo / SCRIPTS / "dsr1_fp8_b200.sh"
    script.write_text(script.read_text().replace("--trust-remote-code", "--trust-remote-code --no-such-flag 3"))
    for c in commands(repo, "dsr1-fp8-b200-sglang"):
        assert c["args"]["no_such_flag"] == 3
        assert any("no_such_flag" in u or "--no-such-flag" in u for u in c["unknown"])


def test_all_points_gives_more_commands() -> None:
    _, one, _ = serve(str(FIXTURES / "serve"), "--format", "json")
    _, every, _ = serve(str(FIXTURES / "serve"), "--format", "json", "--all-points")
    assert len(json.loads(every)["commands"]) > len(json.loads(one)["commands"])


def test_the_doc_lists_every_key_emitted() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")
    table = doc[doc.index("| key | meaning |"):]
    listed = {k for row in table.splitlines() if row.startswith("| `")
              for k in (part.strip("` ") for part in row.split("|")[1].split(","))}
    _, out, _ = serve(str(FIXTURES / "serve"), "--format", "json")
    doc_json = json.loads(out)
    emitted = {k for c in doc_json["commands"] for k in c} | {"coverage"}
    assert emitted == listed, f"documented {sorted(listed - emitted)}, undocumented {sorted(emitted - listed)}"
