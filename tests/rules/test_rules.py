"""Rule metadata, documentation, and behaviour not covered by the fixture repos."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import Config, load_config
from bot.findings import Severity
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.rules import BY_CODE, RULES, resolve_rule
from tests.conftest import EXAMPLE, FIXTURES, copy_repo


def test_registry_is_consistent() -> None:
    assert len(BY_CODE) == len(RULES)
    for rid, m in RULES.items():
        assert m.ID == rid and re.fullmatch(r"[a-z]+(-[a-z]+)*", rid)
        assert re.fullmatch(r"BB\d{3}", m.CODE)
        assert isinstance(m.SEVERITY, Severity) and m.SUMMARY
        doc = m.__doc__ or ""
        for section in ("What it does:", "Why is this bad?", "Example:", "Fix:"):
            assert section in doc, f"{rid}: no {section}"
        assert resolve_rule(m.CODE.lower()) == rid


def _lint(repo: Path, conf: Config | None = None) -> list[str]:
    tree = WorkTree(str(repo))
    return [f.rule for f in lint(tree, conf or load_config(tree)).findings]


def test_dispatch_bound_is_an_info_note(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    launcher = repo / "runners" / "launch_mi355x-amds.sh"
    probes = "".join(f'if [ -n "$(probe {i})" ]; then A{i}=1; else A{i}=2; fi\n' for i in range(8))
    original = launcher.read_text()
    launcher.write_text(original.replace("set -euo pipefail\n", "set -euo pipefail\n" + probes, 1))
    (repo / ".benchbot.yml").write_text("profile:\n  max-paths: 4\n")
    # the bound is hit, but no dispatched path depends on the merged branches: no note
    assert sorted(_lint(repo)) == ["ignored-variant", "ignored-variant"]
    # now a dispatched path depends on them
    helper = repo / "benchmarks" / "single_node" / "extra_1.sh"
    helper.write_text("echo extra\n")
    # (a command that may use them all: variables nothing reads are sliced away, and paths
    # that differ only in those are one path)
    launcher.write_text(launcher.read_text() + 'probe' + ''.join(f' "$A{i}"' for i in range(1, 8)) + '\n'
                        + 'bash "benchmarks/single_node/extra_${A0}.sh"\n')
    tree = WorkTree(str(repo))
    found = lint(tree, load_config(tree)).findings
    bound = [f for f in found if f.rule == "dispatch-bound"]
    assert len(bound) == 1 and bound[0].severity is Severity.INFO
    assert bound[0].path == "runners/launch_mi355x-amds.sh"
    # the rest of the analysis is unchanged
    assert sorted(f.rule for f in found if f.rule != "dispatch-bound") == \
        ["ignored-variant", "ignored-variant"]


def test_deprecated_folders_are_skipped_and_configurable(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "dead-and-helpers", tmp_path / "r")
    assert _lint(repo).count("dead-script") == 1
    (repo / ".benchbot.yml").write_text("profile:\n  scripts-exclude: []\n")
    assert _lint(repo).count("dead-script") > 1


def test_severity_override_and_ignore(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / ".benchbot.yml").write_text("severity:\n  dead-script: error\nignore: [BB103]\n")
    tree = WorkTree(str(repo))
    found = lint(tree, load_config(tree)).findings
    # the cause is turned off: its consequences are findings of their own again
    assert [(f.rule, f.severity) for f in found] == [("dead-script", Severity.ERROR)] * 2


def test_unparseable_launcher_does_not_hide_the_rest(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    bad = repo / "runners" / "launch_mi325x-amds.sh"
    bad.write_text(bad.read_text() + "\nif [[ -n \"$X\" ]]; then\n  echo never closed\n")
    rules = _lint(repo)
    assert "shell-syntax" in rules
    # mi300x is still analysed (its dead _mtp script is the consequence of its cause);
    # mi325x's scripts are not called dead (its launcher is unknowable)
    assert rules.count("ignored-variant") == 1 and rules.count("dead-script") == 0


@pytest.mark.parametrize("garbage", [b"\xff\xfe\x00binary", b"", b"{{{{", b"- just\n- a list\n"])
def test_garbage_configs_never_crash(tmp_path: Path, garbage: bytes) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "configs" / "zz-master.yaml").write_bytes(garbage)
    rules = _lint(repo)
    assert rules.count("ignored-variant") == 2


@pytest.mark.parametrize("where,content", [
    ("runners/launch_mi325x-amds.sh", b"\x00\x01\x02 binary \xff\xfe"),
    ("runners/launch_mi325x-amds.sh", "#!/bin/bash\necho \xe9t\xe9\nbash b/\x80.sh\n".encode("latin-1")),
    ("configs/runners.yaml", b"labels: [not, a, mapping]\n"),
    ("configs/runners.yaml", b"labels:\n  mi300x: null\n  mi325x: 7\n"),
    ("configs/amd-master.yaml", b"x:\n  runner: [a, b]\n  scenarios: {fixed-seq-len: 3}\n"),
    pytest.param("configs/amd-master.yaml", b"x:\n  runner: mi300x\n  model-prefix: k\n  scenarios:\n"
                 b"    fixed-seq-len:\n    - {isl: 1024, osl: 1024, search-space: [7, {tp: null}]}\n",
                 id="master-bad-search-space"),
    ("configs/amd-master.yaml", b"&a [*a]\n"),
    ("benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi355x.sh", b"if then fi ) ( $(("),
])
def test_bad_input_is_a_finding_or_nothing_never_a_crash(tmp_path: Path, where: str, content: bytes) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / where).write_bytes(content)
    tree = WorkTree(str(repo))
    result = lint(tree, load_config(tree))
    for f in result.findings:
        assert f.line >= 1 and f.path
    # mi300x is untouched in every case and still analysed, unless its config is gone
    if where != "configs/amd-master.yaml" and where != "configs/runners.yaml":
        assert any(f.rule == "ignored-variant" and "mi300x" in f.path for f in result.findings)


def test_no_dead_scripts_without_any_resolved_entry(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "configs" / "amd-master.yaml").unlink()
    assert _lint(repo) == []


def test_misplaced_script_links_missing_and_dead(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    src = repo / "benchmarks" / "single_node" / "fixed_seq_len" / "kimik2.5_int4_mi355x_mtp.sh"
    (repo / "benchmarks" / "single_node" / "kimik2.5_int4_mi355x_mtp.sh").write_bytes(src.read_bytes())
    src.unlink()
    tree = WorkTree(str(repo))
    found = lint(tree, load_config(tree)).findings
    missing = [f for f in found if f.rule == "missing-script"]
    dead = [f for f in found if f.rule == "dead-script" and "mi355x" in f.path]
    assert len(missing) == 1 and missing[0].entries == ("kimik2.5-int4-mi355x-vllm-mtp",)
    assert "benchmarks/single_node/kimik2.5_int4_mi355x_mtp.sh" in missing[0].message  # closest name
    # one cause: the dead script in the other folder is the missing script's consequence
    assert dead == []
    assert [(r.rule, r.path) for r in missing[0].consequences] == [
        ("dead-script", "benchmarks/single_node/kimik2.5_int4_mi355x_mtp.sh")]
    # with missing-script off, the dead script says where its entry looks for it
    (repo / ".benchbot.yml").write_text("ignore: [missing-script]\n")
    tree = WorkTree(str(repo))
    dead = [f for f in lint(tree, load_config(tree)).findings if f.rule == "dead-script" and "mi355x" in f.path]
    assert len(dead) == 1 and "wrong folder" in dead[0].message
    assert "kimik2.5-int4-mi355x-vllm-mtp" in dead[0].message
