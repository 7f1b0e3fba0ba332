"""spec-env-not-exported on copies of the spec-env fixture, through ``lint``: which variables
count (the engine's table, not any engine-looking name), every way a variable does reach the
server, the SGLang 0.5.14 no-op, one finding per script and variable, and the shipped table."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.serve.specenv import spec_var, table, version_of
from tests.conftest import FIXTURES, copy_repo

S = "benchmarks/single_node/fixed_seq_len"
DSR1 = f"{S}/dsr1_fp8_mi300x_mtp.sh"
SERVER = 'python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port 8888 \\\n'
SPEC = ("    --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 \\\n"
        "    --speculative-num-draft-tokens 2 > server.log 2>&1 &\n")


def _found(tmp_path: Path, edits: dict[str, tuple[str, str]] | None = None) -> list[Finding]:
    repo = copy_repo(FIXTURES / "spec-env", tmp_path / "r")
    for path, (old, new) in (edits or {}).items():
        f = repo / path
        assert old in f.read_text(), (path, old)
        f.write_text(f.read_text().replace(old, new, 1))
    return [f for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == "spec-env-not-exported"]


def test_the_fixture_findings_name_the_variable_the_server_and_the_consequence(tmp_path: Path) -> None:
    found = {(f.path.rpartition("/")[2], f.line): f for f in _found(tmp_path)}
    assert sorted(found) == [("dsr1_fp4_mi300x_mtp.sh", 4), ("dsr1_fp8_mi300x_mtp.sh", 4),
                             ("qwen3.5_fp8_mi300x_mtp.sh", 4), ("qwen3.5_fp8_mi300x_mtp.sh", 5)]
    old = found[("dsr1_fp8_mi300x_mtp.sh", 4)]
    assert old.message.startswith("SGLANG_ENABLE_SPEC_V2=1 is set without export: the SGLang server started at "
                                  "line 5 never sees it, so dsr1-fp8-mi300x-sglang-mtp (tp 8, conc 4-64, "
                                  "isl 1024 / osl 1024) keeps the server's default speculative worker")
    assert "SGLang 0.5.9 predates 0.5.14" in old.message
    assert old.entries == ("dsr1-fp8-mi300x-sglang-mtp",)
    assert [(r.path.rpartition("/")[2], r.line) for r in old.related] == [("dsr1_fp8_mi300x_mtp.sh", 5),
                                                                          ("amd-master.yaml", 29)]
    noop = found[("qwen3.5_fp8_mi300x_mtp.sh", 4)].message
    assert "with the image of qwen3.5-fp8-mi300x-sglang-mtp" in noop and "(SGLang 0.5.15) it does nothing" in noop
    assert noop.endswith("remove the line")
    # exported only after the server started: still never reaches it
    late = found[("qwen3.5_fp8_mi300x_mtp.sh", 5)].message
    assert late.startswith("SGLANG_SIMULATE_ACC_LEN=2.5 is set without export") and "verifies drafts for real" in late
    trt = found[("dsr1_fp4_mi300x_mtp.sh", 4)].message
    assert trt.startswith("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1 is set without export: the TRT-LLM server "
                          "started at line 12")


@pytest.mark.parametrize("fixed", [
    "export SGLANG_ENABLE_SPEC_V2=1\n",  # exported where it is set
    "SGLANG_ENABLE_SPEC_V2=1\nexport SGLANG_ENABLE_SPEC_V2\n",  # exported later, before the server
])
def test_an_export_before_the_server_reaches_it(tmp_path: Path, fixed: str) -> None:
    found = _found(tmp_path, {DSR1: ("SGLANG_ENABLE_SPEC_V2=1\n", fixed)})
    assert not [f for f in found if f.path == DSR1]


@pytest.mark.parametrize("launch", [
    "SGLANG_ENABLE_SPEC_V2=1 " + SERVER,  # an inline prefix (the plain assignment is overridden)
    "docker run --rm -e SGLANG_ENABLE_SPEC_V2 img \\\n    " + SERVER,
    "docker run --rm --env=SGLANG_ENABLE_SPEC_V2=\"$SGLANG_ENABLE_SPEC_V2\" img \\\n    " + SERVER,
    "env -u HOME SGLANG_ENABLE_SPEC_V2=\"$SGLANG_ENABLE_SPEC_V2\" " + SERVER,
    "mpirun -n 1 -x SGLANG_ENABLE_SPEC_V2 " + SERVER,
])
def test_a_variable_handed_to_the_server_on_its_command_line_is_not_a_finding(tmp_path: Path, launch: str) -> None:
    found = _found(tmp_path, {DSR1: (SERVER, launch)})
    assert not [f for f in found if f.path == DSR1]


def test_a_wrapper_that_hands_on_another_variable_does_not_count(tmp_path: Path) -> None:
    launch = "docker run --rm -e SGLANG_ENABLE_SPEC_V2_OLD -e OTHER img \\\n    " + SERVER
    assert [f.line for f in _found(tmp_path, {DSR1: (SERVER, launch)}) if f.path == DSR1] == [4]


def test_only_the_engines_own_speculative_variables_count(tmp_path: Path) -> None:
    # an SGLang variable in front of a vLLM server, and the script's own SGLANG_* / VLLM_* names
    edits = {f"{S}/dsr1_fp4_mi300x_mtp.sh": ("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1\n",
                                             "SGLANG_SIMULATE_ACC_LEN=2\nTLLM_EXTRA_OPTIONS=x\n"),
             DSR1: ("SGLANG_ENABLE_SPEC_V2=1\n", "SGLANG_BACKEND_PORT=8888\nSGLANG_SPEC_ARGS=x\n")}
    found = _found(tmp_path, edits)
    assert {f.path for f in found} == {f"{S}/qwen3.5_fp8_mi300x_mtp.sh"}


def test_points_that_neither_ask_for_nor_run_speculation_are_not_judged(tmp_path: Path) -> None:
    # the plain script with the same stray assignment: its points say none and it does not speculate
    base = f"{S}/dsr1_fp8_mi300x.sh"
    found = _found(tmp_path, {base: (SERVER.rstrip(" \\\n"), "SGLANG_ENABLE_SPEC_V2=1\n" + SERVER.rstrip(" \\\n"))})
    assert not [f for f in found if f.path == base]


def test_one_finding_per_script_and_variable_however_many_entries_run_it(tmp_path: Path) -> None:
    # a second entry (another runner label's image) dispatches the same script: one finding naming both
    repo = copy_repo(FIXTURES / "spec-env", tmp_path / "r")
    cfg = repo / "configs/amd-master.yaml"
    text = cfg.read_text()
    start = text.index("dsr1-fp8-mi300x-sglang-mtp:")
    block = text[start:text.index("\n\n", start)]
    cfg.write_text(text + "\n\n" + block.replace("dsr1-fp8-mi300x-sglang-mtp:", "dsr1-fp8-mi300x-sglang-spec:")
                   .replace("v0.5.9-rocm700", "v0.5.15-rocm700") + "\n")
    found = [f for f in lint(WorkTree(str(repo)), Config()).findings
             if f.rule == "spec-env-not-exported" and f.path == DSR1]
    assert len(found) == 1
    assert found[0].entries == ("dsr1-fp8-mi300x-sglang-mtp", "dsr1-fp8-mi300x-sglang-spec")
    assert "dsr1-fp8-mi300x-sglang-mtp and 1 more entries" in found[0].message
    assert "SGLang 0.5.9 predates 0.5.14" in found[0].message  # not every image is that recent: export it


def test_the_clean_twin_is_clean() -> None:
    found = lint(WorkTree(str(FIXTURES / "spec-env-clean")), Config()).findings
    assert found == []


def test_the_table_names_a_source_for_every_variable_and_reads_image_versions() -> None:
    rows = [v for engine in table().values() for v in engine.values()]
    assert {v.name for v in rows} >= {"SGLANG_ENABLE_SPEC_V2", "SGLANG_SIMULATE_ACC_LEN", "SGLANG_SIMULATE_ACC_METHOD",
                                      "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"}
    assert all(v.source and v.missing and v.effect for v in rows)
    assert table()["vllm"] == {}  # vLLM takes speculation from --speculative-config only
    v2 = spec_var("sglang", "SGLANG_ENABLE_SPEC_V2")
    assert v2 is not None and v2.noop_from == (0, 5, 14)
    assert spec_var("vllm", "SGLANG_ENABLE_SPEC_V2") is None and spec_var("sglang", "SGLANG_BACKEND_PORT") is None
    assert version_of("lmsysorg/sglang:v0.5.15.post1-cu130", "sglang") == (0, 5, 15)
    assert version_of("lmsysorg/sglang-rocm:v0.5.14-rocm720-mi35x-20260701", "sglang") == (0, 5, 14)
    assert version_of("lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95b", "sglang") == (0, 5, 14)
    assert version_of("lmsysorg/sglang:nightly-dev-cu13-20260624-b2c8f7a2", "sglang") is None
    assert version_of("rocm/atom:rocm7.2.3_ubuntu24.04", "sglang") is None  # a ROCm version, not SGLang's
