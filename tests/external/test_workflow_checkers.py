"""zizmor and actionlint through ``benchbot lint``: the real tools (the ``workflows`` extra), on a
small benchmark repo with a workflow, in real git repos for ``--new-from-rev``.

Their findings are benchbot findings: rule ids ``zizmor/<audit>`` and ``actionlint/<kind>``,
file:line kept, inline suppressions (ours and zizmor's), baselines, ``--new-from-rev``, rule
selection and SARIF apply to them as to our own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from bot.external.tools import locate, version
from tests.conftest import EXAMPLE, git
from tests.external.workflow_texts import CLEAN, INJECTABLE

WORKFLOW = ".github/workflows/ci.yml"


def test_the_tools_are_installed() -> None:
    """CI installs the extra: a missing tool fails here instead of skipping the tests below."""
    for tool in ("zizmor", "actionlint", "shellcheck"):
        exe = locate(tool)
        assert exe is not None, f"{tool} is not installed: pip install -e '.[test]' (the workflows extra)"
        assert version(exe), f"{tool} does not run"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE, root)
    shutil.rmtree(root / ".github")  # the seed's own workflow has findings of its own
    (root / ".github/workflows").mkdir(parents=True)
    (root / WORKFLOW).write_text(CLEAN)
    return root


def _lint(root: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]], str]:
    code = main(["lint", str(root), "--format", "json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out)["findings"], err


def _external(findings: list[dict[str, object]]) -> list[dict[str, object]]:
    return [f for f in findings if str(f["rule"]).startswith(("zizmor/", "actionlint/"))]


def test_an_injectable_run_step_is_one_zizmor_finding_at_its_line(repo: Path, capsys: pytest.CaptureFixture[str]
                                                                   ) -> None:
    code, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert _external(findings) == []  # the clean workflow: nothing
    (repo / WORKFLOW).write_text(INJECTABLE)
    code, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    [z] = [f for f in findings if str(f["rule"]).startswith("zizmor/")]
    assert (z["rule"], z["code"], z["severity"], z["path"], z["line"], z["column"]) == \
        ("zizmor/template-injection", "zizmor", "error", WORKFLOW, 9, 24)
    assert "code injection via template expansion" in str(z["message"])
    [a] = [f for f in findings if str(f["rule"]).startswith("actionlint/")]
    assert (a["rule"], a["line"]) == ("actionlint/expression", 9)
    assert "potentially untrusted" in str(a["message"])
    assert code == 1
    # without --workflows (and no compared change) the checkers do not run
    _, findings, _ = _lint(repo, capsys=capsys)
    assert _external(findings) == []


def test_fingerprints_do_not_move_with_lines(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    _, before, _ = _lint(repo, "--workflows", capsys=capsys)
    (repo / WORKFLOW).write_text("# a comment\n# another\n" + INJECTABLE)
    _, after, _ = _lint(repo, "--workflows", capsys=capsys)
    assert [f["line"] for f in _external(after)] == [int(str(f["line"])) + 2 for f in _external(before)]
    assert {f["fingerprint"] for f in _external(after)} == {f["fingerprint"] for f in _external(before)}


@pytest.mark.parametrize("comment", ["# benchbot: ignore[zizmor/template-injection] the title is ours",
                                     "# benchbot: ignore[zizmor]", "# zizmor: ignore[template-injection]"])
def test_inline_suppressions_cover_it(repo: Path, comment: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = INJECTABLE.replace('title }}"', 'title }}"  ' + comment)
    (repo / WORKFLOW).write_text(text)
    _, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]


def test_configuration_selects_and_grades_them(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / ".benchbot.yml").write_text("ignore: [actionlint]\nseverity: {zizmor: info}\n")
    _, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert [(f["rule"], f["severity"]) for f in _external(findings)] == [("zizmor/template-injection", "info")]
    (repo / ".benchbot.yml").write_text("per-path-ignores:\n  '.github/**': [zizmor/template-injection]\n")
    _, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]
    (repo / ".benchbot.yml").write_text("ignore: [zizmor/template-injecton]\n")
    assert main(["lint", str(repo), "--workflows"]) == 2
    assert "did you mean 'zizmor/template-injection'?" in capsys.readouterr().err


def test_a_baseline_keeps_it_and_reports_a_second_copy(repo: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    baseline = tmp_path / "baseline.json"
    assert main(["lint", str(repo), "--workflows", "--write-baseline", str(baseline)]) == 0
    capsys.readouterr()
    code, findings, _ = _lint(repo, "--workflows", "--baseline", str(baseline), capsys=capsys)
    assert (code, _external(findings)) == (0, [])
    # the same injection once more, in the same step: a new finding, not hidden by the first one's fingerprint
    (repo / WORKFLOW).write_text(INJECTABLE.replace('}}"', '}} ${{ github.event.pull_request.title }}"'))
    code, findings, _ = _lint(repo, "--workflows", "--baseline", str(baseline), capsys=capsys)
    [second] = _external(findings)  # (actionlint names an untrusted input once per line)
    assert (second["rule"], second["line"], second["column"]) == ("zizmor/template-injection", 9, 63)
    assert code == 1


def test_new_from_rev_checks_the_workflows_the_change_touches(repo: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    old = repo / ".github/workflows/old.yml"
    old.write_text(INJECTABLE.replace("name: ci", "name: old"))  # a finding already on the base
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / WORKFLOW).write_text(INJECTABLE)
    code, findings, _ = _lint(repo, "--new-from-rev", "HEAD", capsys=capsys)
    assert {(f["rule"], f["path"]) for f in _external(findings)} == \
        {("zizmor/template-injection", WORKFLOW), ("actionlint/expression", WORKFLOW)}
    assert code == 1
    # --workflows: every file is checked, and the base's findings still are not new
    _, findings, _ = _lint(repo, "--new-from-rev", "HEAD", "--workflows", capsys=capsys)
    assert {f["path"] for f in _external(findings)} == {WORKFLOW}
    _, findings, _ = _lint(repo, "--new-from-rev", "HEAD", "--no-workflows", capsys=capsys)
    assert _external(findings) == []


def test_a_missing_tool_is_a_note(repo: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    monkeypatch.setenv("BENCHBOT_ZIZMOR", "")
    code, findings, err = _lint(repo, "--workflows", capsys=capsys)
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]
    assert "zizmor is not installed (pip install 'benchbot[workflows]')" in err
    assert code == 1


def test_a_tool_over_its_budget_is_a_note(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / ".benchbot.yml").write_text("workflows:\n  zizmor: {timeout: 0.000001}\n")
    _, findings, err = _lint(repo, "--workflows", capsys=capsys)
    assert "zizmor: zizmor ran out of its 1e-06 s budget; no zizmor findings" in err
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]


def test_an_unreadable_workflow_is_reported_and_the_others_checked(repo: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / ".github/workflows/broken.yml").write_text("on: push\njobs:\n  b: [\n")
    _, findings, err = _lint(repo, "--workflows", capsys=capsys)
    rules = {(f["rule"], f["path"]) for f in _external(findings)}
    assert ("zizmor/template-injection", WORKFLOW) in rules
    assert ("actionlint/syntax-check", ".github/workflows/broken.yml") in rules
    assert "zizmor skipped a file it could not read" in err


def test_sarif_names_the_tools_documentation(repo: Path, tmp_path: Path) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    sarif = tmp_path / "out.sarif"
    main(["lint", str(repo), "--workflows", "--format", "json", "--sarif-file", str(sarif)])
    run = json.loads(sarif.read_text())["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["zizmor/template-injection"]["helpUri"] == "https://docs.zizmor.sh/audits/#template-injection"
    assert "actionlint" in rules["actionlint/expression"]["helpUri"]
    [result] = [r for r in run["results"] if r["ruleId"] == "zizmor/template-injection"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "zizmor/template-injection"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 9


def test_a_bad_workflows_setting_is_a_configuration_error_at_its_line(repo: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".benchbot.yml").write_text("fail-on: error\nworkflows:\n  zizmor: {persona: loud}\n")
    assert main(["lint", str(repo), "--workflows"]) == 2
    err = capsys.readouterr().err
    assert ".benchbot.yml:3:" in err and "persona" in err and "Traceback" not in err


def test_the_persona_reaches_zizmor(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The clean workflow has pedantic-only findings (no concurrency limits): the setting is obeyed."""
    _, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert _external(findings) == []
    (repo / ".benchbot.yml").write_text("workflows:\n  zizmor: {persona: pedantic}\n")
    _, findings, _ = _lint(repo, "--workflows", capsys=capsys)
    assert "zizmor/concurrency-limits" in {f["rule"] for f in _external(findings)}


@pytest.mark.parametrize(("where", "config", "kept"), [
    (".github/zizmor.yml", "rules:\n  template-injection:\n    disable: true\n", False),
    ("zizmor.yml", "rules:\n  template-injection:\n    ignore: [ci.yml]\n", False),
    ("zizmor.yml", "rules:\n  template-injection:\n    ignore: ['ci.yml:9']\n", False),
    ("zizmor.yaml", "rules:\n  template-injection:\n    ignore: ['ci.yml:9:24']\n", False),
    (".github/zizmor.yaml", "rules:\n  template-injection:\n    ignore: ['ci.yml:10']\n", True),
    ("zizmor.yml", "rules:\n  template-injection:\n    ignore: ['ci.yml:9:5']\n", True),
    ("zizmor.yml", "rules:\n  template-injection:\n    ignore: ['other.yml:9']\n", True),
    ("zizmor.yml", "rules:\n  unpinned-uses:\n    ignore: ['ci.yml:9']\n", True),
])
def test_the_repos_zizmor_configuration_counts(repo: Path, where: str, config: str, kept: bool,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """zizmor reads the repository's ``zizmor.yml`` (found where zizmor finds it from the root);
    its ``ignore`` entries (file, file:line, file:line:column), which ``--no-ignores`` turns off
    in zizmor, are applied as zizmor applies them."""
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / where).write_text(config)
    _, findings, err = _lint(repo, "--workflows", capsys=capsys)
    got = [(f["rule"], f["line"], f["column"]) for f in _external(findings) if str(f["rule"]).startswith("zizmor/")]
    assert got == ([("zizmor/template-injection", 9, 24)] if kept else [])
    assert "zizmor failed" not in err


@pytest.mark.parametrize(("config", "said"), [
    ("rules: [\n", "rules: invalid type: sequence, expected a map"),
    ("rules:\n  template-injection:\n    ignore: [ci.txt]\n", "invalid workflow filename: ci.txt"),
])
def test_a_zizmor_configuration_zizmor_rejects_is_its_note(repo: Path, config: str, said: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / "zizmor.yml").write_text(config)
    _, findings, err = _lint(repo, "--workflows", capsys=capsys)
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]
    [note] = [line for line in err.splitlines() if "zizmor failed" in line]
    assert "configuration error in zizmor.yml: " in note and said in note and "backtrace" not in note.lower()


def test_with_new_from_rev_the_bases_zizmor_configuration_counts(repo: Path, capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    (repo / "zizmor.yml").write_text("rules:\n  template-injection:\n    ignore: ['ci.yml:9']\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / WORKFLOW).write_text(INJECTABLE)
    (repo / "zizmor.yml").write_text("rules:\n  actionlint-is-not-an-audit: {}\n")  # the head's: not read
    _, findings, err = _lint(repo, "--new-from-rev", "HEAD", capsys=capsys)
    assert [f["rule"] for f in _external(findings)] == ["actionlint/expression"]
    assert "zizmor failed" not in err


def test_ignore_entries_are_read_as_zizmor_reads_them_and_within_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.external import zizmor

    text = ("rules:\n  template-injection:\n    ignore: [ci.yml, 'ci.yml:12', 'ci.yml:12:7', ci.txt, 'ci.yml:0', 7,\n"
            "             {a: b}, 'a:b.yaml:3']\n  unpinned-uses: {disable: true}\n  artipacked: {ignore: x.yml}\n")
    assert zizmor.ignores(text) == {"template-injection": [("ci.yml", None, None), ("ci.yml", 12, None),
                                                           ("ci.yml", 12, 7)]}  # the rest zizmor rejects
    for odd in ("rules: [\n", "- a\n", "rules: 3\n", "rules:\n  x: [1]\n", ""):
        assert zizmor.ignores(odd) == {}
    # aliases share one list: read once per audit naming it, and never past the budget
    many = "base: &l [" + ", ".join(f"'f{i}.yml'" for i in range(50)) + "]\nrules:\n" + \
        "".join(f"  a{i}: {{ignore: *l}}\n" for i in range(50))
    monkeypatch.setattr(zizmor, "MAX_IGNORES", 120)
    assert sum(map(len, zizmor.ignores(many).values())) == 120
