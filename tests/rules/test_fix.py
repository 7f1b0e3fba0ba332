"""The ignored-variant fix, applied with git to a copy of the example, makes lint clean."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import EXAMPLE, copy_repo


def lint_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["lint", str(repo), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_fix_applied_makes_the_example_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    code, doc = lint_json(repo, capsys)
    assert code == 1
    fixes = [f["fix"] for f in doc["findings"] if f["fix"]]  # type: ignore[union-attr,index]
    assert len(fixes) == 2
    for fix in fixes:
        patch = tmp_path / "fix.patch"
        patch.write_text(fix["diff"])
        subprocess.run(["git", "apply", "--unsafe-paths", "--directory", "", str(patch)], cwd=repo, check=True,
                       capture_output=True)
    code, doc = lint_json(repo, capsys)
    assert doc["findings"] == [] and code == 0
    # and the patched launcher really routes the MTP entry to its script
    text = (repo / "runners" / "launch_mi300x-amds.sh").read_text()
    # copied from launch_mi355x-amds.sh, written so that the set -u launcher survives an unset variable
    assert "SPEC_SUFFIX=$([[ \"${SPEC_DECODING:-}\" == \"mtp\" ]] && printf '_mtp' || printf '')" in text
    assert "_mi300x${SPEC_SUFFIX}.sh" in text
    proc = subprocess.run(["bash", "-n", "runners/launch_mi300x-amds.sh"], cwd=repo, capture_output=True)
    assert proc.returncode == 0


def test_fix_without_a_sibling_uses_the_profile_snippet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    # no launcher handles MTP any more: the fix comes from the variant's snippet
    mi355 = repo / "runners" / "launch_mi355x-amds.sh"
    mi355.write_text(mi355.read_text().replace("${SPEC_SUFFIX}", ""))
    _, doc = lint_json(repo, capsys)
    iv = [f for f in doc["findings"] if f["rule"] == "ignored-variant"]  # type: ignore[index]
    assert len(iv) == 3
    assert all(f["fix"] and "computed as" not in f["fix"]["description"] for f in iv)
    assert [("template" in f["fix"]["description"], "computes it already" in f["fix"]["description"])
            for f in sorted(iv, key=lambda f: f["path"])] == [(True, False), (True, False), (False, True)]
