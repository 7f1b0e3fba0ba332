"""The command-line conventions: the repo root found upwards, no configs is a usage error,
--version, the severity word in text lines, dispatch --entry that matches nothing, rules by
code, a closed stdout pipe, explain as plain text. Through bot.cli.main or python -m bot."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot import rules
from bot.cli import EXIT_PIPE, main
from bot.report import rule_doc
from tests.conftest import EXAMPLE, ROOT, copy_repo, git

NO_CONFIGS = ("no master configs (configs/*-master.yaml or .github/configs/*-master.yaml) found; "
              "is this a benchmark repo?")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def python_m_bot(*argv: str, cwd: Path = ROOT, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "bot", *argv], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, env=env, check=False)


def _untimed(text: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in <t>s", text)


def _findings(out: str) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(out)["findings"]]


# ------------------------------------------------------------------ the repo root, upwards

def test_a_folder_inside_the_repo_lints_the_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    code, whole, _ = run(capsys, "lint", str(repo), "--format", "json")
    for sub in ("benchmarks/single_node/fixed_seq_len", "runners", "configs"):
        got, out, err = run(capsys, "lint", str(repo / sub), "--format", "json")
        assert (got, err) == (code, "")
        assert json.loads(out)["root"] == str(repo)  # the root it found, nothing else said
        assert _findings(out) == _findings(whole) != []
    # text: the same report, not one line more
    _, text_root, _ = run(capsys, "lint", str(repo))
    _, text_sub, _ = run(capsys, "lint", str(repo / "runners"))
    assert _untimed(text_sub) == _untimed(text_root)


def test_default_path_from_a_subfolder(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    at_root = python_m_bot("lint", "--format", "json", cwd=repo)
    below = python_m_bot("lint", "--format", "json", cwd=repo / "benchmarks" / "single_node")
    assert below.returncode == at_root.returncode == 1 and below.stderr == ""
    assert _findings(below.stdout) == _findings(at_root.stdout)
    table = python_m_bot("dispatch", "--format", "json", cwd=repo / "runners")
    assert table.returncode == 0
    assert {r["entry"] for r in json.loads(table.stdout)} >= {"kimik2.5-int4-mi300x-vllm-mtp"}


def test_root_markers_benchbot_yml_and_git(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.repo.files.tree import find_root

    globs = ("configs/*-master.yaml",)
    # a custom layout: .benchbot.yml marks the root, its profile says where the configs are
    repo = tmp_path / "custom"
    (repo / "ci" / "matrix").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / ".benchbot.yml").write_text('profile:\n  configs: ["ci/matrix/*.yaml"]\n')
    assert find_root(str(repo / "ci" / "matrix"), globs) == str(repo)
    assert find_root(str(repo), globs) == str(repo)  # a root is returned as given
    # the nearest root wins: a benchmark repo inside a git repo
    outer = tmp_path / "outer"
    copy_repo(EXAMPLE, outer / "bench")
    git(outer, "init", "-q")
    assert find_root(str(outer / "bench" / "runners"), globs) == str(outer / "bench")
    # .git bounds the search: a git repo without configs is the root, and it has none
    (outer / "docs" / "x").mkdir(parents=True)
    assert find_root(str(outer / "docs" / "x"), globs) == str(outer)
    code, out, err = run(capsys, "lint", str(outer / "docs" / "x"))
    assert (code, out) == (2, "")
    assert err == f"benchbot: {outer}: {NO_CONFIGS}\n"
    # nothing above: the path itself, as given
    lone = tmp_path / "lone" / "deep"
    lone.mkdir(parents=True)
    assert find_root(str(lone), globs) == str(lone)


def test_rev_takes_path_as_the_git_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    code, out, _ = run(capsys, "lint", str(repo), "--rev", "HEAD", "--format", "json")
    assert code == 1 and _findings(out)
    # PATH is handed to git as it is (git -C PATH), and git finds its repo from a subfolder itself
    code, sub, err = run(capsys, "lint", str(repo / "runners"), "--rev", "HEAD", "--format", "json")
    assert (code, err) == (1, "") and _findings(sub) == _findings(out)
    assert json.loads(sub)["root"] == f"{repo / 'runners'}@HEAD"


# ------------------------------------------------------------------ no master configs

def test_no_master_configs_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for command in ("lint", "dispatch"):
        code, out, err = run(capsys, command, str(empty))
        assert (code, out) == (2, "")
        assert err == f"benchbot: {empty}: {NO_CONFIGS}\n"
    # the configs/ folder of a repo with no master configs and no root above it
    configs = tmp_path / "half" / "configs"
    configs.mkdir(parents=True)
    (configs / "runners.yaml").write_text("labels:\n  mi300x: [mi300x-amds_0]\n")
    code, out, err = run(capsys, "lint", str(configs), "--format", "json")
    assert (code, out, err) == (2, "", f"benchbot: {configs}: {NO_CONFIGS}\n")
    # deprecated configs only: nothing would be linted either
    (configs / "deprecated").mkdir()
    (configs / "deprecated" / "old-master.yaml").write_text("{}\n")
    assert run(capsys, "lint", str(configs.parent))[0] == 2


def test_no_master_configs_in_a_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "g"
    repo.mkdir()
    (repo / "README").write_text("not a benchmark repo\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    code, out, err = run(capsys, "lint", str(repo), "--rev", "HEAD")
    assert (code, out, err) == (2, "", f"benchbot: {repo}@HEAD: {NO_CONFIGS}\n")


# ------------------------------------------------------------------ --version

def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    want = f"benchbot {importlib.metadata.version('benchbot')}\n"
    assert want == "benchbot 0.1.0\n"
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == want
    proc = python_m_bot("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, want, "")


# ------------------------------------------------------------------ the text line

TEXT_LINE = re.compile(r"^[^ ]+:\d+:\d+: (error|warning|info) BB\d{3} .+ \[[a-z-]+\]$")


def test_text_lines_carry_the_severity_word(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), "--format", "json")
    doc = json.loads(out)
    _, text, _ = run(capsys, "lint", str(EXAMPLE))
    lines = text.splitlines()[:-1]  # the summary is the last line
    assert len(lines) == len(doc["findings"]) > 0
    for line, f in zip(lines, doc["findings"]):
        assert TEXT_LINE.match(line), line
        assert line.startswith(f"{f['path']}:{f['line']}:{f['column']}: {f['severity']} {f['code']} ")
        assert line.endswith(f" [{f['rule']}]")


# ------------------------------------------------------------------ dispatch --entry

def test_dispatch_entry_that_matches_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "dispatch", str(EXAMPLE), "--entry", "kimik2.5-int4-h100-*")
    assert (code, out) == (2, "")
    m = re.fullmatch(r"benchbot: no entry matches kimik2\.5-int4-h100-\* \(6 entries; e\.g\. (.+)\)\n", err)
    assert m, err
    examples = m.group(1).split(", ")
    assert len(examples) == 3 and all(e.startswith("kimik2.5-int4-mi3") for e in examples)
    # one of several patterns that matches nothing is enough to say so
    code, _, err = run(capsys, "dispatch", str(EXAMPLE), "--entry", "*-mtp", "--entry", "nope")
    assert code == 2 and err.startswith("benchbot: no entry matches nope (6 entries; e.g. ")
    assert run(capsys, "dispatch", str(EXAMPLE), "--entry", "*-mtp")[0] == 0


# ------------------------------------------------------------------ rules

def test_rules_sorted_by_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    own, external = out.split("\n\n", 1)  # benchbot's rules, then the workflow checkers' families
    codes = [line.split()[0] for line in own.splitlines()]
    assert codes == sorted(m.CODE for m in rules.RULES.values())
    assert codes[0] == "BB001"
    assert external.startswith("The workflow checkers' rules")


# ------------------------------------------------------------------ a closed pipe

@pytest.mark.parametrize("argv", [("rules",), ("lint", str(EXAMPLE)), ("explain", "BB103")])
def test_closed_stdout_pipe_is_quiet(argv: tuple[str, ...]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte is written: every write fails with EPIPE
    try:
        proc = python_m_bot(*argv, stdout=write)
    finally:
        os.close(write)
    assert proc.stderr == ""  # no traceback, no "Exception ignored" at exit
    assert proc.returncode == EXIT_PIPE == 141


def test_output_to_a_file_is_whole_after_the_quick_exit(tmp_path: Path) -> None:
    """``python -m bot`` leaves with ``os._exit`` (bot/__main__.py): a block-buffered stdout
    is flushed first, and the exit code is main's."""
    out = tmp_path / "out.json"
    with out.open("w") as f:
        proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(EXAMPLE), "--format", "json"], stdout=f,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 1 and proc.stderr == ""
    data = json.loads(out.read_text())
    assert data["findings"] and out.read_text().endswith("\n")


def test_head_of_a_pipe(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = f"{sys.executable} -m bot lint {EXAMPLE} | head -1; {sys.executable} -m bot rules | head -1"
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0 and proc.stderr == ""
    first, second = proc.stdout.splitlines()
    assert TEXT_LINE.match(first) and second.startswith("BB001  shell-syntax")


# ------------------------------------------------------------------ explain

def test_explain_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    for rid in rules.RULES:
        code, out, _ = run(capsys, "explain", rid)
        assert code == 0
        assert "``" not in out  # no RST literals, no markdown fences
        doc = rule_doc(rules.RULES[rid])
        for literal in re.findall(r"``([^`\n]+?)``", doc):
            assert literal in out
    code, out, _ = run(capsys, "explain", "BB103")
    lines = out.splitlines()
    assert lines[0] == "ignored-variant (BB103, error)"
    assert not any(line.strip().startswith("```") for line in lines)
    # the example keeps its code exactly (backticks and all), four more spaces in than the prose
    doc_lines = rule_doc(rules.RULES["ignored-variant"]).splitlines()
    fences = [i for i, line in enumerate(doc_lines) if line.strip().startswith("```")]
    code_lines = [line for line in doc_lines[fences[0] + 1:fences[1]] if line.strip()]
    assert code_lines and any("SPEC_DECODING" in line for line in code_lines)
    for line in code_lines:
        assert "    " + line in lines
    assert "    " + code_lines[0].strip() not in lines  # not flush with the prose


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import bot.repo.facts

    def broken(*_: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(bot.repo.facts, "gather", broken)
    monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")  # a kept result of an earlier test would gather nothing
    assert main(["lint", str(EXAMPLE)]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("benchbot: internal error: KeyError: 'boom' at test_cli_conventions.py:")
    assert err.count("\n") == 1 and "Traceback" not in err
    monkeypatch.setenv("BENCHBOT_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["lint", str(EXAMPLE)])
