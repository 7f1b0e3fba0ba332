"""changelog-missing through the command line: ``lint --new-from-rev`` reports it, plain
``lint`` (no base) never does; a work tree with an uncommitted changelog entry counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import git
from tests.rules.test_changelog_missing import _entry, _seed_pr


def _rules(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[tuple[str, str, int]]]:
    code = main(["lint", *argv, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    return code, [(f["rule"], f["path"], f["line"]) for f in doc["findings"]]


def test_new_from_rev_reports_it_and_plain_lint_does_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, _ = _seed_pr(tmp_path)
    code, found = _rules(capsys, str(repo), "--new-from-rev", base)
    assert code == 1
    assert ("changelog-missing", "configs/amd-master.yaml", 20) in found
    assert ("changelog-missing", "configs/amd-master.yaml", 58) in found
    _, plain = _rules(capsys, str(repo))
    assert "changelog-missing" not in {r for r, _, _ in plain}
    # --select / --ignore apply as for every rule
    _, ignored = _rules(capsys, str(repo), "--new-from-rev", base, "--ignore", "changelog-missing")
    assert "changelog-missing" not in {r for r, _, _ in ignored}
    _, only = _rules(capsys, str(repo), "--new-from-rev", base, "--select", "BB111")
    assert {r for r, _, _ in only} == {"changelog-missing"}


def test_the_work_tree_changelog_entry_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, _ = _seed_pr(tmp_path)
    with open(repo / "perf-changelog.yaml", "a", encoding="utf-8") as fh:
        fh.write(_entry("kimik2.5-int4-mi3*-vllm-mtp"))
    _, found = _rules(capsys, str(repo), "--new-from-rev", base)
    assert "changelog-missing" not in {r for r, _, _ in found}


def test_the_base_profile_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = _seed_pr(tmp_path)
    git(repo, "checkout", "-q", "-b", "off", base)
    (repo / ".benchbot.yml").write_text("profile:\n  changelog: null\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "off")
    off = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", head)
    _, found = _rules(capsys, str(repo), "--new-from-rev", off)
    assert "changelog-missing" not in {r for r, _, _ in found}
    # the head turning it off does not count: the base's configuration is the gate's
    git(repo, "checkout", "-q", "-b", "head-off", head)
    (repo / ".benchbot.yml").write_text("profile:\n  changelog: null\n")
    _, found = _rules(capsys, str(repo), "--new-from-rev", base)
    capsys.readouterr()
    assert "changelog-missing" in {r for r, _, _ in found}
