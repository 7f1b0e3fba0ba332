"""The synthetic InferenceX-shaped repo (tests/perf/synth.py): deterministic, sized as asked, and
linting (nearly) clean through the real code path, every entry reaching a script that exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_config
from bot.lint import LintResult, lint
from bot.repo.files.tree import WorkTree
from tests.perf import synth


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def lint_repo(root: Path) -> LintResult:
    tree = WorkTree(str(root))
    return lint(tree, load_config(tree))


@pytest.fixture(scope="module")
def scale1(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    root = tmp_path_factory.mktemp("synth") / "scale-1"
    return root, synth.make_repo(root, 1)


def test_same_seed_same_bytes(scale1: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    root, counts = scale1
    assert synth.make_repo(tmp_path / "again", 1) == counts
    assert snapshot(tmp_path / "again") == snapshot(root)
    synth.make_repo(tmp_path / "other", 1, seed=1)
    assert snapshot(tmp_path / "other") != snapshot(root)


def test_scale1_is_inferencex_sized(scale1: tuple[Path, dict[str, int]]) -> None:
    _, c = scale1
    assert 150 <= c["entries"] <= 260
    assert c["multinode_entries"] >= 30 and c["mtp_entries"] >= 15 and c["agentic_entries"] >= 10
    assert c["launchers"] == 19
    assert 120 <= c["scripts"] <= 200
    assert c["workflows"] >= 5
    assert 8_000 <= c["yaml_lines"] <= 16_000


def test_scale1_lints_clean(scale1: tuple[Path, dict[str, int]]) -> None:
    root, c = scale1
    result = lint_repo(root)
    # the generator draws each entry's search space on its own, so an -mtp entry and its base
    # sweep different shapes (variant-drift, rightly), and its DeepSeek-like models draft 3
    # tokens with 1 native MTP layer (spec-exceeds-mtp-layers, a note): both are by design
    by_design = {"variant-drift", "spec-exceeds-mtp-layers"}
    rules = sorted(f.rule for f in result.findings if f.rule not in by_design)
    assert "missing-script" not in rules
    assert len(rules) < 10, rules
    assert {f.rule for f in result.findings} >= by_design
    assert result.stats.entries == c["entries"]
    assert result.stats.launchers == c["launchers"]


def test_scale1_lint_sees_a_broken_dispatch(scale1: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    root, _ = scale1
    broken = tmp_path / "broken"
    for rel, data in snapshot(root).items():
        (broken / rel).parent.mkdir(parents=True, exist_ok=True)
        (broken / rel).write_bytes(data)
    victim = next(p for p in sorted((broken / "benchmarks/single_node/fixed_seq_len").glob("*.sh"))
                  if "_mtp" not in p.name)
    victim.unlink()
    rules = {f.rule for f in lint_repo(broken).findings}
    assert "missing-script" in rules


def test_scale2_doubles(scale1: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    _, one = scale1
    two = synth.make_repo(tmp_path / "scale-2", 2)
    assert two["launchers"] == 2 * one["launchers"]
    assert two["labels"] == 2 * one["labels"]
    for key in ("entries", "scripts", "workflows", "yaml_lines"):
        assert 1.6 <= two[key] / one[key] <= 2.4, (key, one[key], two[key])
    result = lint_repo(tmp_path / "scale-2")
    assert "missing-script" not in {f.rule for f in result.findings}
    assert result.stats.entries == two["entries"]


def test_a_synthetic_history_has_its_break_where_it_was_made(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """tests/perf/synth_history.py on a 1x repo: the script it deletes at commit 4 and brings
    back at commit 7 is the one root cause ``history`` reports, at those commits."""
    import json
    import subprocess

    from bot.cli import main
    from tests.perf import synth_history

    root = tmp_path / "r"
    synth.make_repo(root, 1)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    synth_history._commit(root, "generated", 0)
    made = synth_history.make_history(root, 9, break_every=8, break_for=3)
    assert made["breaks"] == 1 and sum(made.values()) == 8  # and one commit brings the script back
    shas = subprocess.run(["git", "-C", str(root), "rev-list", "--reverse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.split()
    assert len(shas) == 10
    assert main(["history", f"{shas[0]}..HEAD", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    came = [e for e in doc["root_causes"] if e["first_bad"] is not None]
    assert [(e["rule"], e["first_bad"]["sha"], e["fixed_by"]["sha"]) for e in came] == \
        [("missing-script", shas[4], shas[7])]
    assert came[0]["days_open"] == 0.12  # 3 commits an hour apart
