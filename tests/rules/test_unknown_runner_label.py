"""unknown-runner-label on what runners.yaml is for: an entry whose label lists no nodes still runs
(the sweep puts the label into ``runs-on``), so it is a warning that names the launchers the entries
likely reach; an agentic point with DRAM KV offloading on a label without hardware metadata makes
the sweep generator fail, so that is an error, declared label or not. Real fixture repos in temp
dirs, through ``lint`` (and ``serve``, for the launcher assumed from the node-name prefix)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

from bot.cli import main
from bot.config import Config
from bot.findings import Severity
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, copy_repo

DRAM_BLOCK = """    agentic-coding:
    - search-space:
      - { tp: 8, kv-offloading: dram, conc-list: [1, 4] }
"""


def _repo(tmp_path: Path) -> Path:
    repo = copy_repo(FIXTURES / "runner-labels", tmp_path / "r")
    # a launcher named for the undeclared label's nodes (mi400x-amds_*), running the mi355x script
    src = (repo / "runners/launch_mi355x-amds.sh").read_text()
    (repo / "runners/launch_mi400x-amds.sh").write_text(src)
    script = repo / "benchmarks/single_node/fixed_seq_len"
    shutil.copy(script / "gptoss_fp4_mi355x.sh", script / "dsr1_fp4_mi355x.sh")
    return repo


def _by_rule(repo: Path, rule: str) -> list:  # type: ignore[type-arg]
    return [f for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == rule]


def test_a_label_with_no_nodes_is_a_warning_naming_the_likely_launcher(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    [f] = _by_rule(repo, "unknown-runner-label")
    assert f.severity == Severity.WARNING and f.entries == ("dsr1-fp4-mi400x-sglang",)
    assert f.message.startswith("dsr1-fp4-mi400x-sglang: runner label 'mi400x'") or \
        f.message.startswith("runner label 'mi400x' of dsr1-fp4-mi400x-sglang")
    assert "lists no nodes" in f.message and "never run" not in f.message
    likely = [r for r in f.related if r.path == "runners/launch_mi400x-amds.sh"]
    assert len(likely) == 1 and likely[0].is_consequence  # run by no node in runners.yaml: a consequence
    assert not [g for g in _by_rule(repo, "unreachable-launcher") if g.path == "runners/launch_mi400x-amds.sh"]


def test_a_dram_agentic_point_without_hardware_metadata_is_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    cfg = repo / "configs/amd-master.yaml"
    text = cfg.read_text()
    cfg.write_text(text.rstrip("\n") + "\n" + DRAM_BLOCK)  # the mi400x entry is the last one
    [f] = _by_rule(repo, "unknown-runner-label")
    assert f.severity == Severity.ERROR and "no hardware metadata" in f.message and "sweep fails" in f.message
    # a declared label needs it too; with it, nothing is reported
    first = text.index("dsr1-fp4-mi400x-sglang:")
    cfg.write_text(text[:first].rstrip("\n") + "\n" + DRAM_BLOCK + "\n" + text[first:])
    runners = repo / "configs/runners.yaml"
    rtext = runners.read_text()
    assert [f.severity for f in _by_rule(repo, "unknown-runner-label") if "mi355x" in f.message] == [Severity.ERROR]
    runners.write_text(rtext + "hardware:\n  mi355x: {available-cpu-dram-mib: 2000000, gpus-per-node: 8}\n")
    assert [f for f in _by_rule(repo, "unknown-runner-label") if "mi355x" in f.message] == []


def test_serve_assumes_the_only_launcher_named_for_the_labels_nodes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["serve", str(repo), "--format", "json", "--entry", "dsr1-fp4-mi400x-sglang"]) == 0
    [c] = json.loads(out.getvalue())["commands"]
    assert c["launcher"] == "runners/launch_mi400x-amds.sh" and c["engine"] is not None
    assert c["status"] == "partial"
    assert any(r.startswith("launcher assumed: runner label 'mi400x' lists no nodes") for r in c["reasons"])
    (repo / "runners/launch_mi400x-amds.sh").rename(repo / "runners/launch_mi400x-other.sh")
    (repo / "runners/launch_mi400x-amds2.sh").write_text("#!/usr/bin/env bash\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["serve", str(repo), "--format", "json", "--entry", "dsr1-fp4-mi400x-sglang"])
    for c in json.loads(out.getvalue())["commands"]:  # two candidates: nothing is assumed
        assert c["status"] == "none" and "so the launcher is unknown (launchers named for its nodes:" in c["reasons"][0]
