"""One finding per root cause: consequences ride in ``related`` with the fingerprint they
would have on their own, and come back as findings when their cause is turned off."""

from __future__ import annotations

from pathlib import Path

from bot.config import load_config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import EXAMPLE, FIXTURES, copy_repo

MTP = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x_mtp.sh"
AGENTIC_MTP = "benchmarks/single_node/agentic/glm5_fp8_mi325x_mtp.sh"


def findings(repo: Path, config: str | None = None) -> list[Finding]:
    if config is not None:
        (repo / ".benchbot.yml").write_text(config)
    tree = WorkTree(str(repo))
    return lint(tree, load_config(tree)).findings


def by_rule(found: list[Finding], rule: str) -> list[Finding]:
    return [f for f in found if f.rule == rule]


def test_the_launcher_line_is_the_one_finding_with_its_consequences(tmp_path: Path) -> None:
    found = findings(copy_repo(FIXTURES / "root-causes", tmp_path / "r"))
    assert sorted(f.rule for f in found) == ["ignored-variant", "unknown-runner-label", "unknown-runner-label"]
    [iv] = by_rule(found, "ignored-variant")
    assert (iv.path, iv.line) == ("runners/launch_mi325x-amds.sh", 13)
    assert set(iv.entries) == {"kimik2.5-int4-mi325x-vllm-mtp", "glm5-fp8-mi325x-sglang-agentic-mtp"}
    cons = sorted((r.rule, r.path) for r in iv.consequences)
    assert cons == [("dead-script", AGENTIC_MTP), ("dead-script", MTP), ("missing-script", "configs/amd-master.yaml")]
    assert "2 scripts left dead, 1 entry sent to a script that does not exist" in iv.message
    assert "agentic/glm5_fp8_mi325x.sh (which does not exist)" in iv.message


def test_consequences_are_findings_again_when_the_cause_is_off(tmp_path: Path) -> None:
    """Their fingerprints are the ones the cause lists, so a PR bot or a baseline can match them."""
    repo = copy_repo(FIXTURES / "root-causes", tmp_path / "r")
    [iv] = by_rule(findings(repo), "ignored-variant")
    listed = {r.fingerprint: r.rule for r in iv.consequences}
    alone = [f for f in findings(repo, "ignore: [ignored-variant]\n") if f.fingerprint in listed]
    assert sorted(f.rule for f in alone) == ["dead-script", "dead-script", "missing-script"]
    assert {f.fingerprint: f.rule for f in alone} == listed
    [missing] = by_rule(alone, "missing-script")
    assert missing.entries == ("glm5-fp8-mi325x-sglang-agentic-mtp",)


def test_an_inline_suppression_of_the_cause_brings_the_consequences_back(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    launcher = repo / "runners" / "launch_mi325x-amds.sh"
    launcher.write_text(launcher.read_text().replace(
        "_mi325x.sh\n", "_mi325x.sh  # benchbot: ignore[ignored-variant] measured by hand\n"))
    rules = sorted(f.rule for f in findings(repo))
    assert rules == ["dead-script", "ignored-variant"]


def test_a_removed_label_is_one_finding_with_the_launcher_it_strands(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "root-causes", tmp_path / "r")
    found = findings(repo)
    removed = next(f for f in by_rule(found, "unknown-runner-label") if "mi300x-tw" in f.message)
    assert [(r.rule, r.path) for r in removed.consequences] == [
        ("unreachable-launcher", "runners/launch_mi300x-tw.sh")]
    assert removed.fix is None  # no declared label is its clear successor
    assert not by_rule(found, "unreachable-launcher")
    alone = by_rule(findings(repo, "ignore: [unknown-runner-label]\n"), "unreachable-launcher")
    assert [f.fingerprint for f in alone] == [removed.consequences[0].fingerprint]


def test_all_entries_of_one_unknown_label_are_one_finding(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "root-causes", tmp_path / "r")
    cfg = repo / "configs" / "amd-master.yaml"
    text = cfg.read_text()
    block = text[text.index("gptoss-fp4-mi300x-vllm:"):]
    cfg.write_text(text + "\n" + block.replace("gptoss-fp4-mi300x-vllm:", "gptoss-fp4-mi300x-sglang:", 1))
    labels = by_rule(findings(repo), "unknown-runner-label")
    assert len(labels) == 2
    removed = next(f for f in labels if f.key == "mi300x-tw")
    assert removed.entries == ("gptoss-fp4-mi300x-vllm", "gptoss-fp4-mi300x-sglang")
    assert removed.message.startswith("runner label 'mi300x-tw' of 2 entries (gptoss-fp4-mi300x-vllm, "
                                      "gptoss-fp4-mi300x-sglang) lists no nodes in configs/runners.yaml")
    assert [r.line for r in removed.related if not r.is_consequence][:1] == [text.count("\n") + 1 + 5]


def test_fingerprints_survive_edits_that_do_not_change_the_cause(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    before = {f.path: f.fingerprint for f in findings(repo)}
    launcher = repo / "runners" / "launch_mi325x-amds.sh"
    # lines move and the message gains one more entry: still the same cause
    launcher.write_text(launcher.read_text().replace("set -euo pipefail\n", "set -euo pipefail\n# moved\n\n", 1))
    cfg = repo / "configs" / "amd-master.yaml"
    text = cfg.read_text()
    start = text.index("kimik2.5-int4-mi325x-vllm-mtp:")
    block = text[start:].split("\n\n", 1)[0]
    cfg.write_text(text.rstrip("\n") + "\n\n" + block.replace("kimik2.5-int4-mi325x-vllm-mtp:",
                                                           "kimik2.5-int4-mi325x-vllm-mtp-b:", 1) + "\n")
    after = findings(repo)
    mi325 = next(f for f in after if f.path == "runners/launch_mi325x-amds.sh")
    assert len(mi325.entries) == 2 and mi325.line != 26
    assert {f.path: f.fingerprint for f in after} == before


def test_a_moved_script_is_the_consequence_of_the_entry_that_misses_it(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    src = repo / "benchmarks" / "single_node" / "fixed_seq_len" / "kimik2.5_int4_mi355x.sh"
    (repo / "benchmarks" / "single_node" / "old").mkdir()
    src.rename(repo / "benchmarks" / "single_node" / "old" / "kimik2.5_int4_mi355x.sh")
    found = findings(repo)
    [missing] = by_rule(found, "missing-script")
    assert [(r.rule, r.path) for r in missing.consequences] == [
        ("dead-script", "benchmarks/single_node/old/kimik2.5_int4_mi355x.sh")]
    assert "was it moved?" in missing.message
    assert not any(f.rule == "dead-script" and "old/" in f.path for f in found)


def test_fold_drops_what_a_root_reaches_and_keeps_the_rest() -> None:
    from bot.findings import Related, Severity, fingerprint_of
    from bot.rules import fold

    def f(key: str, *cons: str) -> Finding:
        return Finding("r", "BB000", Severity.ERROR, "p", 1, 1, key, tuple(Related("p", 1, "", "r", c) for c in cons),
                       key=key)

    assert fingerprint_of("r", "b") == f("b").fingerprint
    chain = [f("a", "b"), f("b", "c"), f("c"), f("x", "gone")]
    assert [g.key for g in fold(chain)] == ["a", "x"]
    cycle = [f("p", "q"), f("q", "p")]
    assert [g.key for g in fold(cycle)] == ["p", "q"]
