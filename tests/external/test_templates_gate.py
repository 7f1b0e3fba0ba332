"""benchbot's own workflow templates and Action, through benchbot's own workflow gate: zizmor
(pedantic persona) and actionlint, with ShellCheck on the ``run:`` scripts, report nothing. The
few accepted zizmor findings carry ``# zizmor: ignore[...]`` comments in the templates
(tests/test_workflows.py keeps that list exact); benchbot honours them as suppressions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import EXAMPLE, ROOT


def test_the_templates_are_clean_through_benchbot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE / "configs", repo / "configs")
    flows = repo / ".github/workflows"
    flows.mkdir(parents=True)
    templates = sorted((ROOT / "workflows").glob("*.yml"))
    assert len(templates) >= 6
    for t in templates:
        shutil.copy(t, flows / t.name)
    shutil.copy(ROOT / "action.yml", repo / "action.yml")
    (repo / ".benchbot.yml").write_text("workflows:\n  zizmor: {persona: pedantic}\n")
    code = main(["lint", str(repo), "--workflows", "--select", "zizmor,actionlint", "--format", "json"])
    out, err = capsys.readouterr()
    assert json.loads(out)["findings"] == [] and code == 0
    assert "not installed" not in err and "could not read" not in err  # both tools really ran on every file
    # the gate is live: one injectable step in a copy is found by both tools
    review = flows / "benchbot-review.yml"
    review.write_text(review.read_text().replace("run: |\n", "run: |\n          echo \"${{ github.head_ref }}\"\n", 1))
    main(["lint", str(repo), "--workflows", "--select", "zizmor,actionlint", "--format", "json"])
    found = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert {"zizmor/template-injection", "actionlint/expression"} <= found
