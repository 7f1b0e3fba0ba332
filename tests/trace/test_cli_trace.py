"""``python -m bot trace`` through ``bot.cli.main``: the text and JSON it prints (docs/trace.md),
``--compare``'s exit code, and what happens without a sandbox."""

from __future__ import annotations

import json

import pytest

from bot import cache
from bot.cli import main
from bot.shell.evaluator import expand
from bot.shell.evaluator.state import State
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val
from bot.trace import sandbox
from tests.conftest import FIXTURES, ROOT

REPO = FIXTURES / "recipe-parity"
MTP = "widget3-fp8-b200-sglang-mtp"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_shows_what_ran(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", str(REPO), "--entry", MTP, "--compare")
    assert code == 0
    assert f"{MTP}  [tp=4, spec-decoding=mtp, conc=4]  on b200-nv_0" in out
    assert "runners/launch_b200-nv.sh -> benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh" in out
    assert "server: sglang --model-path Acme/Widget3-100B-FP8 --tp 4 --speculative-algorithm EAGLE" in out
    assert "[container] docker run --rm --gpus all" in out and "[server] python3 -m sglang.launch_server" in out
    assert "trace: runners/launch_b200-nv.sh exited 0" in out
    assert "agrees with the static answer" in out


def _table_keys(doc: str) -> set[str]:
    table = doc[doc.index("| key | meaning |"):]
    return {k for row in table.splitlines() if row.startswith("| `")
            for k in (part.strip("` ") for part in row.split("|")[1].split(","))}


def test_json_keys_are_serves_or_documented(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", str(REPO), "--entry", "*", "--format", "json", "--compare")
    assert code == 0
    doc = json.loads(out)
    assert doc["version"] == 1 and len(doc["traces"]) == 3
    t = next(x for x in doc["traces"] if x["entry"] == MTP)
    assert t["script"] == "benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh"
    assert t["engine"] == "sglang" and t["args"]["speculative_num_steps"] == 2
    assert t["exit"] == {"code": 0, "ended": "exit", "message": "trace: runners/launch_b200-nv.sh exited 0"}
    assert t["workflow_env"]["SPEC_DECODING"] == "mtp" and t["disagreements"] == []
    assert {c["role"] for c in t["calls"]} >= {"script", "container", "server", "client"}
    serve_keys = _table_keys((ROOT / "docs" / "serve.md").read_text(encoding="utf-8"))
    trace_keys = _table_keys((ROOT / "docs" / "trace.md").read_text(encoding="utf-8"))
    undocumented = set(t) - serve_keys - trace_keys
    assert not undocumented, undocumented


def test_compare_exits_1_on_a_disagreement(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The static evaluator planted with a bug (``${X:-d}`` always the default): trace says so."""
    real = expand.Expand.param

    def planted(self: expand.Expand, p: ir.Param, st: State) -> Val:
        return self.expand(p.arg, st) if p.op == ":-" and p.arg is not None else real(self, p, st)

    monkeypatch.setattr(expand.Expand, "param", planted)
    cache.disable()
    try:
        code, out, _ = run(capsys, "trace", str(FIXTURES / "agentic-clean"), "--entry", "*", "--compare")
    finally:
        cache.disable(False)
    assert code == 1
    assert "disagreement" in out and "server present: static False, traced True" in out


def test_without_a_sandbox_trace_says_so_and_exits_2(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "available", lambda: "bwrap not found (install bubblewrap)")
    code, out, err = run(capsys, "trace", str(REPO), "--entry", MTP)
    assert code == 2 and out == ""
    assert "trace needs a sandbox and there is none here: bwrap not found (install bubblewrap)" in err


def test_an_entry_glob_that_matches_nothing_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "trace", str(REPO), "--entry", "nope-*")
    assert code == 2 and "no entry matches nope-*" in err


def test_values_the_workflow_model_cannot_know_get_placeholders() -> None:
    """A count or a size becomes a number (launchers check GPU_COUNT and TOTAL_CPU_DRAM_GB are);
    anything else names the variable, so that the trace shows where it went."""
    from bot.shell.ir.values import Unk, lit
    from bot.trace.run import concrete, placeholder

    assert placeholder("GPU_COUNT") == "8" and placeholder("TOTAL_CPU_DRAM_GB") == "8"
    assert placeholder("HF_TOKEN") == "benchbot-unknown-hf_token"
    assert concrete({"A": lit("x"), "RESULT_FILENAME": (Unk("?"),), "P": ("pre-", Unk("?"))}) == {
        "A": "x", "RESULT_FILENAME": "benchbot-unknown-result_filename", "P": "pre-benchbot-unknown-p"}
