"""Budgets per launcher. A launcher bash accepts but that nests too deep to analyse is one shell-syntax cause:
its entries are named and unknown, and the scripts only it could run are not reported dead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import EXAMPLE, copy_repo

LAUNCHER = "runners/launch_mi355x-amds.sh"


def test_a_too_deep_launcher_is_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    body = (repo / LAUNCHER).read_text()
    deep = "if true; then\n" * 60 + body + "fi\n" * 60
    (repo / LAUNCHER).write_text(deep)
    code = main(["lint", str(repo), "--format", "json", ])
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if "mi355x" in f["path"]]
    assert code == 1
    [cause] = found  # no dead-script for the mi355x scripts only this launcher runs
    assert cause["rule"] == "shell-syntax" and cause["path"] == LAUNCHER and cause["line"] == 51
    assert "nesting deeper than 50 levels" in cause["message"]
    assert cause["message"].endswith("what its entries run is not analysed")
    assert cause["entries"] and all("mi355x" in e for e in cause["entries"])
    main(["lint", str(repo), "--format", "json"])
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["coverage"]["unknown"] >= len(cause["entries"])


def test_the_same_launcher_at_the_limit_is_analysed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    body = (repo / LAUNCHER).read_text()
    (repo / LAUNCHER).write_text("if true; then\n" * 40 + body + "fi\n" * 40)
    main(["lint", str(repo), "--format", "json"])
    assert [f for f in json.loads(capsys.readouterr().out)["findings"] if "mi355x" in f["path"]] == []


def test_one_launcher_shares_one_time_budget_over_its_entries(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A construct that eats each entry's whole deadline stops at the launcher's share
    (LAUNCHER_SHARE deadlines), not at one deadline per entry: the later entries are unknown."""
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("profile:\n  max-seconds: 0.2\n  max-steps: 50000000\n")
    config = repo / "configs" / "amd-master.yaml"
    blocks = config.read_text().strip().split("\n\n")
    mi325 = [b for b in blocks if b.startswith("kimik2.5-int4-mi325x-vllm:")][0]
    extra = [mi325.replace("kimik2.5-int4-mi325x-vllm:", f"kimik2.5-int4-mi325x-vllm-x{i}:").replace(
        "precision: int4", f"precision: int{i}") for i in range(12)]
    config.write_text("\n\n".join(blocks + extra) + "\n")
    launcher = repo / "runners" / "launch_mi325x-amds.sh"
    launcher.write_text('#!/usr/bin/env bash\nf() { f; f; f; f; f; f; }\n[ -n "$PRECISION" ] && f\n'
                        + launcher.read_text())
    main(["lint", str(repo), "--format", "json", "--select", "dispatch-bound"])
    found = json.loads(capsys.readouterr().out)["findings"]
    messages = " ".join(f["message"] for f in found if f["path"] == "runners/launch_mi325x-amds.sh")
    assert "deadline (0.2 s)" in messages
    assert "time budget of the launcher (0.4 s over its entries)" in messages
    main(["lint", str(repo), "--format", "json"])  # the scripts only it runs are unknown, not dead
    assert [f for f in json.loads(capsys.readouterr().out)["findings"] if "mi325x" in f["path"]
            and f["rule"] == "dead-script"] == []


def test_all_launchers_share_one_time_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every launcher hostile: the evaluations together stop at TOTAL_SHARE deadlines (set to 3 here:
    the seed has 3 launchers, each stopping at its own share of 2)."""
    from bot.repo import facts

    monkeypatch.setattr(facts, "TOTAL_SHARE", 3)
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("profile:\n  max-seconds: 0.05\n  max-steps: 50000000\n")
    config = repo / "configs" / "amd-master.yaml"
    blocks = config.read_text().strip().split("\n\n")
    extra = [b.replace(":\n", f"-x{i}:\n", 1).replace("precision: int4", f"precision: int{i}")
             for i in range(12) for b in blocks]
    config.write_text("\n\n".join(blocks + extra) + "\n")
    for launcher in (repo / "runners").glob("launch_*.sh"):
        launcher.write_text('#!/usr/bin/env bash\nf() { f; f; f; f; f; f; }\n[ -n "$PRECISION" ] && f\n'
                            + launcher.read_text())
    main(["lint", str(repo), "--format", "json", "--select", "dispatch-bound"])
    found = json.loads(capsys.readouterr().out)["findings"]
    total = "time budget of the whole analysis (0.15 s)"
    assert any(total in f["message"] for f in found), [f["message"] for f in found]
