"""Hostile files in a pull request: YAML that expands without end, nests without end or
reuses anchors, FIFOs where files should be, files too big to parse, unreadable launchers,
deep TOML. Every case goes through ``python -m bot lint`` (or ``bot.cli.main``) on a copy
of the seed repo and must end with a finding or a configuration error naming the file:
never a hang, never a traceback, never unbounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import Config
from bot.repo.facts import gather
from bot.repo.files.tree import WorkTree
from tests.conftest import EXAMPLE, copy_repo, git

LAUNCHER = "runners/launch_mi300x-amds.sh"
SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x.sh"
MASTER = "configs/amd-master.yaml"
WORKFLOW = ".github/workflows/benchmark-tmpl.yml"

# Nine anchors, each list aliasing the previous one nine times: 9^9 (387 million) values.
LAUGHS = textwrap.dedent("""\
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    """)

# Runs the linter in a grandchild under an address-space limit and reports its exit code,
# output and peak RSS (getrusage of the children of this wrapper: the linter and its own
# helpers, nothing else the test session ran).
_WRAPPER = textwrap.dedent("""\
    import json, resource, subprocess, sys
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))
    proc = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120, preexec_fn=limit)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"code": proc.returncode, "out": proc.stdout, "err": proc.stderr, "peak_mb": peak_kb / 1024}))
    """)


def _lint_bounded(repo: Path, *args: str) -> dict[str, object]:
    cmd = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "bot", "lint", str(repo), *args]
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "BENCHBOT_DEBUG")}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _lint(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m bot lint`` with a timeout: a hang guard for FIFOs, not a timing assertion."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "BENCHBOT_DEBUG")}
    return subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=Path(__file__).resolve().parents[2])


def _json(out: str) -> list[dict[str, object]]:
    findings: list[dict[str, object]] = json.loads(out)["findings"]
    return findings


def _replace_with_fifo(repo: Path, path: str) -> None:
    (repo / path).unlink()
    os.mkfifo(repo / path)


# ------------------------------------------------------------------ billion laughs


@pytest.mark.parametrize("where", ["configs/laughs-master.yaml", "configs/runners.yaml", WORKFLOW])
def test_billion_laughs_in_a_repo_yaml_is_a_finding_in_bounded_memory(tmp_path: Path, where: str) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / where).write_text(LAUGHS)
    r = _lint_bounded(repo, "--format", "json")
    assert "Traceback" not in str(r["err"]) and r["code"] == 1, r["err"]
    assert float(str(r["peak_mb"])) < 500
    hits = [f for f in _json(str(r["out"])) if f["rule"] == "config-syntax" and f["path"] == where]
    assert len(hits) == 1
    assert "document too large: more than 1,000,000 values once aliases are expanded" in str(hits[0]["message"])
    assert hits[0]["line"] == 7  # the list whose aliases pass the budget (g: 9^7 values)


def test_billion_laughs_in_the_bot_config_is_a_configuration_error(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text(LAUGHS)
    r = _lint_bounded(repo)
    assert r["code"] == 2 and "Traceback" not in str(r["err"])
    assert float(str(r["peak_mb"])) < 500
    assert str(r["err"]).startswith("benchbot: .benchbot.yml:7:4: document too large")


# ------------------------------------------------------------------ FIFOs and unreadable files


def test_fifo_launcher_script_and_master_config_are_findings_and_never_opened(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    extra = "configs/fifo-master.yaml"
    os.mkfifo(repo / extra)
    _replace_with_fifo(repo, LAUNCHER)
    _replace_with_fifo(repo, SCRIPT)
    done = _lint(repo, "--format", "json")  # opening any of them for reading would block forever
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    by_path = {str(f["path"]): f for f in _json(done.stdout) if f["rule"] == "config-syntax"}
    assert set(by_path) == {extra, LAUNCHER, SCRIPT}
    assert by_path[extra]["message"] == ("this file is not a regular file (a FIFO); it was not read; "
                                         "no entry of this file was checked")
    assert by_path[LAUNCHER]["message"] == ("this launcher is not a regular file (a FIFO); it was not read; "
                                            "what 2 entries on it dispatch is unknown")
    assert by_path[LAUNCHER]["entries"] == ["kimik2.5-int4-mi300x-vllm", "kimik2.5-int4-mi300x-vllm-mtp"]
    assert by_path[SCRIPT]["message"] == "this file is not a regular file (a FIFO); it was not read"
    # the other launchers are still linted: the mi325x MTP bug is still found
    rules = {(f["rule"], f["path"]) for f in _json(done.stdout)}
    assert ("ignored-variant", "runners/launch_mi325x-amds.sh") in rules
    # nothing is claimed about what the unreadable launcher would have run
    assert not any(f["rule"] == "dead-script" and "mi300x" in str(f["path"]) for f in _json(done.stdout))


def test_a_link_to_a_fifo_is_reported_on_the_link(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    os.mkfifo(repo / "runners" / "real.fifo")
    (repo / LAUNCHER).unlink()
    (repo / LAUNCHER).symlink_to("real.fifo")
    done = _lint(repo, "--format", "json")
    hits = [(f["path"], f["message"]) for f in _json(done.stdout) if f["rule"] == "config-syntax"]
    assert done.returncode == 1 and (LAUNCHER, "this launcher is not a regular file (a FIFO); it was not read; "
                                               "what 2 entries on it dispatch is unknown") in hits


def test_fifo_bot_config_is_a_configuration_error(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    os.mkfifo(repo / ".benchbot.yml")
    done = _lint(repo)
    assert done.returncode == 2
    assert done.stderr == "benchbot: .benchbot.yml: not a regular file (a FIFO); the configuration cannot be read\n"


def test_unreadable_launcher_is_exposed_on_the_facts_as_unknown(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _replace_with_fifo(repo, LAUNCHER)
    facts = gather(WorkTree(str(repo)), Config().profile)
    assert facts.unreadable == {LAUNCHER: "not a regular file (a FIFO)"}
    assert LAUNCHER in facts.broken_launchers
    assert not [r for r in facts.runs if r.launcher == LAUNCHER]  # no run: what it dispatches is unknown
    assert {r.launcher for r in facts.runs} == {"runners/launch_mi325x-amds.sh", "runners/launch_mi355x-amds.sh"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file (the FIFO test covers root)")
def test_mode_000_launcher_is_a_finding(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / LAUNCHER).chmod(0)
    try:
        done = _lint(repo, "--format", "json")
    finally:
        (repo / LAUNCHER).chmod(0o644)
    hits = [f for f in _json(done.stdout) if f["rule"] == "config-syntax"]
    assert [(h["path"], h["message"]) for h in hits] == [
        (LAUNCHER, "this launcher is unreadable (Permission denied); it was not read; "
                   "what 2 entries on it dispatch is unknown")]


# ------------------------------------------------------------------ sizes


def test_a_50_mb_config_is_rejected_by_size_and_the_rest_still_linted(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    big = repo / "configs" / "big-master.yaml"
    try:
        with big.open("w") as fh:
            line = "# " + "x" * 1021 + "\n"  # 1 KB
            for _ in range(50 * 1024):
                fh.write(line)
        code = main(["lint", str(repo), "--format", "json"])
    finally:
        big.unlink()
    out = capsys.readouterr().out
    assert code == 1
    hits = [f for f in _json(out) if f["rule"] == "config-syntax"]
    assert [(h["path"], h["message"]) for h in hits] == [
        ("configs/big-master.yaml", "this file is too large (50 MB; the limit is 8 MB); it was not read; "
                                    "no entry of this file was checked")]
    assert {f["rule"] for f in _json(out)} >= {"ignored-variant"}


def test_the_size_budget_is_configurable_and_applies_to_git_revisions(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("max-file-mb: 0.5\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    (repo / SCRIPT).write_text("#!/bin/bash\n" + "# padding\n" * 60_000)  # 600 KB
    git(repo, "add", "-A")  # staged, not committed: --staged reports it as new against HEAD
    runs = [["--staged"], []]  # cat-file --batch-check sizes, then the work tree
    for args in runs + [["--rev", "HEAD"]]:  # ls-tree -l sizes, once committed
        if args == ["--rev", "HEAD"]:
            git(repo, "commit", "-qm", "big script")
        code = main(["lint", str(repo), "--format", "json", *args])
        out = capsys.readouterr().out
        hits = [(f["path"], f["message"]) for f in _json(out) if f["rule"] == "config-syntax"]
        assert code == 1 and hits == [(SCRIPT, "this file is too large (0.6 MB; the limit is 0.5 MB); it was not read")]


def test_max_file_mb_is_capped_by_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("max-file-mb: 65\n")
    assert main(["lint", str(repo)]) == 2
    assert "max-file-mb must be <= 64" in capsys.readouterr().err


# ------------------------------------------------------------------ nesting, TOML, YAML values


def test_a_5000_deep_array_in_pyproject_is_a_configuration_error(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "pyproject.toml").write_text("[tool.benchbot]\nignore = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["lint", str(repo)]) == 2
    err = capsys.readouterr().err
    assert err == "benchbot: pyproject.toml: an array or inline table nests too deeply to read\n"


def test_deep_yaml_in_the_bot_config_is_a_configuration_error(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("profile:\n  configs: " + "[" * 900 + "]" * 900 + "\n")
    assert main(["lint", str(repo)]) == 2
    assert capsys.readouterr().err.startswith(
        "benchbot: .benchbot.yml:2:211: document nests too deeply (more than 200 levels)")


def test_deep_yaml_in_a_master_config_is_a_finding_at_its_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "configs" / "deep-master.yaml").write_text("x:\n  image: " + "[" * 300 + "]" * 300 + "\n")
    assert main(["lint", str(repo), "--format", "json"]) == 1
    hits = [f for f in _json(capsys.readouterr().out) if f["rule"] == "config-syntax"]
    assert [(h["path"], h["line"], h["message"]) for h in hits] == [
        ("configs/deep-master.yaml", 2, "invalid YAML: document nests too deeply (more than 200 levels); "
                                        "no entry of this file was checked")]


@pytest.mark.parametrize(("text", "message"), [
    ("a: &a [*a]\n", "recursive alias: an anchor is used inside its own value"),
    ("a: 2001-13-45\n", "invalid timestamp value: month must be in 1..12"),
    pytest.param("a: " + "1" * 5000 + "\n", "invalid int value: Exceeds the limit (4300 digits)", id="5000-digits"),
    pytest.param("a: &x 1\nb: &x 2\n", "the anchor &x is defined twice, at line 1 and again at line 2; rename one of "
                 "them (YAML does not allow redefining an anchor here)", id="anchor-twice"),
    ("a: *nothing\n", "the alias *nothing names no anchor defined before it"),
])
def test_hostile_yaml_values_are_findings_with_one_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 text: str, message: str) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "configs" / "odd-master.yaml").write_text(text)
    assert main(["lint", str(repo), "--format", "json"]) == 1
    hits = [f for f in _json(capsys.readouterr().out) if f["rule"] == "config-syntax"]
    assert len(hits) == 1 and hits[0]["path"] == "configs/odd-master.yaml"
    assert str(hits[0]["message"]).startswith(f"invalid YAML: {message}")


def test_aliases_within_the_budget_still_load_shared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Anchors, aliases and merge keys of an ordinary config keep working."""
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    master = repo / MASTER
    first = "kimik2.5-int4-mi300x-vllm:\n  image:"
    text = master.read_text().replace(first, first.replace(":\n", ": &base\n", 1), 1)
    master.write_text(text + "\nkimik2.5-int4-mi300x-vllm-copy:\n  <<: *base\n")
    assert main(["lint", str(repo), "--format", "json", "--select", "config-syntax,config-schema"]) == 0
    capsys.readouterr()
    assert main(["dispatch", str(repo), "--entry", "kimik2.5-int4-mi300x-vllm-copy"]) == 0
    assert "kimik2.5_int4_mi300x.sh" in capsys.readouterr().out


# ------------------------------------------------------------------ workflows


def test_a_workflow_that_does_not_parse_is_a_finding_and_the_rest_is_linted(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    before = _json(_lint(repo, "--format", "json", "--no-cache").stdout)
    wf = repo / WORKFLOW
    lines = wf.read_text().splitlines(keepends=True)
    wf.write_text("".join(lines) + "  broken:\n    steps: [\n")
    done = _lint(repo, "--format", "json", "--no-cache")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    after = _json(done.stdout)
    hits = [f for f in after if f["rule"] == "config-syntax"]
    assert [(h["path"], h["line"], h["severity"]) for h in hits] == [(WORKFLOW, len(lines) + 3, "error")]
    assert str(hits[0]["message"]).startswith("this workflow does not load (while parsing a flow node")
    assert "GitHub would not run it" in str(hits[0]["message"])
    # the configs, launchers and scripts are still linted: every other finding stays
    assert [f for f in after if f["rule"] != "config-syntax"] == before


def test_a_malformed_expression_in_a_workflow_is_a_finding_at_its_line(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    wf = repo / WORKFLOW
    text = wf.read_text()
    assert "      MODEL: ${{ inputs.model }}\n" in text
    wf.write_text(text.replace("      MODEL: ${{ inputs.model }}\n", "      MODEL: ${{ inputs.model == }}\n"))
    line = text.splitlines().index("      MODEL: ${{ inputs.model }}") + 1
    hits = [f for f in _json(_lint(repo, "--format", "json", "--no-cache").stdout) if f["rule"] == "config-syntax"]
    assert [(h["path"], h["line"]) for h in hits] == [(WORKFLOW, line)]
    assert "unexpected end of the expression" in str(hits[0]["message"])


def test_an_unreadable_workflow_is_reported_once(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _replace_with_fifo(repo, WORKFLOW)
    done = _lint(repo, "--format", "json", "--no-cache")
    assert "Traceback" not in done.stderr
    hits = [(f["path"], f["message"]) for f in _json(done.stdout) if f["rule"] == "config-syntax"]
    assert len(hits) == 1 and hits[0][0] == WORKFLOW and "not a regular file" in str(hits[0][1])


# ------------------------------------------------------------------ command line


@pytest.mark.parametrize("option", ["--rev", "--new-from-rev"])
def test_an_empty_revision_is_a_usage_error(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(EXAMPLE), option, ""]) == 2
    assert capsys.readouterr().err == f"benchbot: {option} needs a revision (got an empty string)\n"
