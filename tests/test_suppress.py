"""Inline suppressions and per-path ignores, through the real lint pipeline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.suppress import parse
from tests.conftest import EXAMPLE, FIXTURES, copy_repo


def rules_at(repo: Path) -> list[tuple[str, str, int]]:
    tree = WorkTree(str(repo))
    return [(f.rule, f.path, f.line) for f in lint(tree, load_config(tree)).findings]


# ------------------------------------------------------------------ parsing


def test_trailing_comment_covers_its_line_with_reason() -> None:
    (s,) = parse("a.sh", "x=1\nbash run.sh  # benchbot: ignore[dead-script, BB101] -- kept for manual runs\n")
    assert (s.line, s.covers, s.rules, s.reason, s.standalone) == (
        2, 2, ("dead-script", "BB101"), "kept for manual runs", False)


def test_standalone_comment_covers_next_code_line() -> None:
    text = "#!/bin/bash\n# benchbot: ignore[ignored-variant]: reason here\n\n# another comment\nbash x.sh\n"
    (s,) = parse("a.sh", text)
    assert (s.line, s.covers, s.reason, s.standalone) == (2, 5, "reason here", True)


def test_ignore_file_covers_the_whole_file() -> None:
    (s,) = parse("a.sh", "#!/bin/bash\n# benchbot: ignore-file[dead-script]\n")
    assert s.covers == 0 and s.rules == ("dead-script",) and s.reason == ""


@pytest.mark.parametrize("text", [
    'echo "x#benchbot: ignore[dead-script]"\n',  # '#' inside a word is not a comment
    "# benchbot ignore[dead-script]\n",  # no colon
    "# benchbot: ignore(dead-script)\n",  # wrong brackets
])
def test_non_directives_are_not_parsed(text: str) -> None:
    assert parse("a.sh", text) == []


def test_yaml_comment_is_parsed() -> None:
    (s,) = parse("c.yaml", "a:\n  - { tp: 8 }  # benchbot: ignore[config-schema] vendor field\n")
    assert s.covers == 2 and s.rules == ("config-schema",) and s.reason == "vendor field"


# ------------------------------------------------------------------ pipeline


def test_suppression_in_shell_and_yaml_with_reason(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "suppressions-clean", tmp_path / "r")
    assert rules_at(repo) == []
    # Without the comments, the findings they suppress come back.
    for path in ("configs/amd-master.yaml", "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_eagle.sh"):
        p = repo / path
        p.write_text("".join(line for line in p.read_text().splitlines(keepends=True) if "benchbot:" not in line))
    assert sorted(r for r, _, _ in rules_at(repo)) == ["dead-script", "unused-config-field", "unused-config-field"]


def test_code_alias_suppresses(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    launcher = repo / "runners/launch_mi300x-amds.sh"
    text = launcher.read_text().splitlines(keepends=True)
    text.insert(31, "# benchbot: ignore[BB103] tracked in #123\n")  # above the bash line (32)
    launcher.write_text("".join(text))
    found = rules_at(repo)
    assert ("ignored-variant", "runners/launch_mi300x-amds.sh", 33) not in found
    assert ("ignored-variant", "runners/launch_mi325x-amds.sh", 26) in found
    assert not [f for f in found if f[0] == "unused-suppression"]


def test_unused_suppression_fix_applies_and_lints_clean(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "suppressions", tmp_path / "r")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    def unused() -> list[Finding]:
        tree = WorkTree(str(repo))
        return [f for f in lint(tree, load_config(tree)).findings if f.rule == "unused-suppression"]

    first = unused()
    assert len(first) == 3 and all(f.fix is not None and f.fix.safe for f in first)
    assert "did you mean 'dead-script'?" in next(f.message for f in first if "scirpt" in f.message)
    # Fixes of one file overlap in context: apply one, lint again (as a fix loop does).
    for _ in range(len(first)):
        fix = unused()[0].fix
        assert fix is not None
        subprocess.run(["git", "-C", str(repo), "apply", "-"], input=fix.diff, text=True, check=True)
    assert rules_at(repo) == []
    yaml_line = next(line for line in (repo / "configs/amd-master.yaml").read_text().splitlines() if "benchbot" in line)
    assert "ignore[unused-config-field]" in yaml_line and "EP is set" in yaml_line  # reason kept
    assert "benchbot" not in (repo / "runners/launch_mi300x-amds.sh").read_text()
    assert "echo done\n" in (repo / "runners/launch_mi300x-amds.sh").read_text()


def test_suppression_of_a_disabled_rule_is_not_unused(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "suppressions", tmp_path / "r")
    (repo / ".benchbot.yml").write_text("ignore: [ignored-variant, config-schema]\n")
    found = rules_at(repo)
    assert [f[2] for f in found if f[0] == "unused-suppression"] == [8]  # only the misspelt rule


# ------------------------------------------------------------------ per-path ignores


def test_per_path_ignores(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text(
        'per-path-ignores:\n  "benchmarks/**/*_mtp.sh": [dead-script]\n  "runners/launch_mi325x-*.sh": [BB103]\n')
    found = rules_at(repo)
    assert found == [("ignored-variant", "runners/launch_mi300x-amds.sh", 32)]


def test_per_path_ignores_in_pyproject(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "pyproject.toml").write_text('[tool.benchbot]\nignore = ["dead-script"]\n'
                                         '[tool.benchbot.per-path-ignores]\n"runners/**" = ["ignored-variant"]\n')
    assert rules_at(repo) == []


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("per-path-ignores:\n  'runners/**': [ignored-varient]\n",
                 ".benchbot.yml:2:18: unknown rule 'ignored-varient'", id="unknown-rule"),
    ("per-path-ignores: [runners]\n", ".benchbot.yml:1:19: per-path-ignores must be a mapping"),
    ("selec: [dead-script]\n", ".benchbot.yml:1:1: unknown field 'selec'; did you mean 'select'?"),
    ("profile:\n  max-paths: many\n", ".benchbot.yml:2:14: profile.max-paths must be an integer"),
])
def test_config_errors_name_key_and_position(tmp_path: Path, text: str, expected: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(WorkTree(str(repo)))
    assert expected in str(err.value)
    assert main(["lint", str(repo)]) == 2
    assert expected in capsys.readouterr().err


def test_json_output_has_no_suppressed_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(FIXTURES / "suppressions-clean", tmp_path / "r")
    assert main(["lint", str(repo), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
