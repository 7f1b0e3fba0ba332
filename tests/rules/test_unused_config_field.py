"""unused-config-field against what the server really runs with (serve's reading of the command):
a script that sets the parallelism its own way, to the labelled value, is not a finding; a real
difference is one finding per entry and field, whatever the number of rows; a command that cannot
tell is left alone. Copies of the fixture repo, through ``lint``."""

from __future__ import annotations

from pathlib import Path

from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, copy_repo

SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh"
SERVE = 'vllm serve "$MODEL" --tensor-parallel-size "$TP"'


def _found(tmp_path: Path, serve: str | None = None, rows: str | None = None) -> list[Finding]:
    repo = copy_repo(FIXTURES / "unused-config-field", tmp_path / "r")
    if serve is not None:
        script = repo / SCRIPT
        script.write_text(script.read_text().replace(SERVE, serve, 1))
    if rows is not None:
        cfg = repo / "configs/amd-master.yaml"
        cfg.write_text(cfg.read_text().replace(
            "      - { tp: 8, ep: 8, dp-attn: true, conc-start: 32, conc-end: 256 }\n", rows, 1))
    return [f for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == "unused-config-field"]


def test_a_script_that_sets_the_labelled_parallelism_its_own_way_is_not_a_finding(tmp_path: Path) -> None:
    # never reads EP_SIZE or DP_ATTENTION, yet at TP 8 runs 1 x 8 data-parallel ranks with expert
    # parallelism: ep 8, DP attention on, as labelled
    serve = ('vllm serve "$MODEL" --tensor-parallel-size 1 --data-parallel-size "$TP" --enable-expert-parallel')
    assert _found(tmp_path, serve) == []


def test_a_real_difference_is_one_finding_per_entry_and_field(tmp_path: Path) -> None:
    rows = ("      - { tp: 8, ep: 8, dp-attn: true, conc-start: 32, conc-end: 64 }\n"
            "      - { tp: 8, ep: 8, dp-attn: true, conc-start: 128, conc-end: 256 }\n")
    found = _found(tmp_path, rows=rows)
    assert sorted(f.key for f in found) == ["kimik2.5-int4-mi300x-vllm|dp-attn", "kimik2.5-int4-mi300x-vllm|ep"]
    ep = next(f for f in found if f.key.endswith("|ep"))
    assert "ep: 8 (2 search-space rows), but the server" in ep.message and "starts runs with ep 1" in ep.message
    assert [r.note for r in ep.related if r.note.startswith("also labelled")] == ["also labelled ep: 8"]


def test_a_command_that_cannot_tell_is_left_alone(tmp_path: Path) -> None:
    serve = 'vllm serve "$MODEL" --tensor-parallel-size "$TP" --data-parallel-size "$(nproc)" --enable-expert-parallel'
    assert _found(tmp_path, serve) == []  # the data-parallel size is unknown: neither ep nor dp-attn is told
