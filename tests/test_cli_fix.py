"""``lint --fix``: every proposed fix applies (git apply --check, and --fix), bytes outside
the edit are kept, unsafe fixes wait for --unsafe-fixes, stale edits are never written."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from bot import fix
from bot.cli import main
from bot.findings import Edit, Finding, Fix, Severity
from tests.conftest import EXAMPLE, FIXTURES, NOT_REPOS, copy_repo, git

REPOS = sorted([p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_REPOS]) + [EXAMPLE]


def lint_json(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object]]:
    code = main(["lint", str(repo), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _with_fixes(repo: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    _, doc = lint_json(repo, capsys)
    return [f for f in doc["findings"] if f["fix"]]  # type: ignore[union-attr]


@pytest.mark.parametrize("src", REPOS, ids=lambda p: p.name)
def test_every_proposed_fix_applies_with_git(src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(src, tmp_path / "r")
    git(repo, "init", "-q")
    for f in _with_fixes(repo, capsys):
        patch = tmp_path / "fix.patch"
        patch.write_text(f["fix"]["diff"])  # type: ignore[index]
        proc = subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo, capture_output=True, text=True)
        assert proc.returncode == 0, f"{f['rule']} at {f['path']}: {proc.stderr}"


def test_the_fixtures_propose_fixes() -> None:
    """The parametrized test above checks something: these repos do have fixes."""
    names = {p.name for p in REPOS}
    assert {"seed", "root-causes", "suppressions"} <= names


def test_seed_passes_after_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    launcher = repo / "runners" / "launch_mi300x-amds.sh"
    mode = launcher.stat().st_mode
    before = launcher.read_bytes()
    assert not before.endswith(b"\n")  # the seed launcher has no final newline
    code = main(["lint", str(repo), "--fix"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("fixed 2 findings in runners/launch_mi300x-amds.sh, runners/launch_mi325x-amds.sh:")
    assert re.search(r"^0 findings", out, re.M)
    after = launcher.read_bytes()
    assert launcher.stat().st_mode == mode and not after.endswith(b"\n")
    # only the edited line changed and one block was inserted: everything else byte for byte
    old_lines, new_lines = before.split(b"\n"), after.split(b"\n")
    assert [ln for ln in new_lines if ln not in old_lines] == [
        b"SPEC_SUFFIX=$([[ \"${SPEC_DECODING:-}\" == \"mtp\" ]] && printf '_mtp' || printf '')",
        b"bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"]
    assert subprocess.run(["bash", "-n", str(launcher)], capture_output=True).returncode == 0
    # and again: nothing left to do
    assert main(["lint", str(repo), "--fix"]) == 0
    assert capsys.readouterr().out.startswith("nothing to fix")


def test_the_copied_suffix_line_survives_set_u(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The sibling's line reads "$SPEC_DECODING" unguarded; the fix must not abort a set -u launcher."""
    repo = copy_repo(FIXTURES / "root-causes", tmp_path / "r")
    assert '"$SPEC_DECODING"' in (repo / "runners" / "launch_mi355x-amds.sh").read_text()
    assert main(["lint", str(repo), "--fix"]) == 1  # the unknown labels are left
    capsys.readouterr()
    text = (repo / "runners" / "launch_mi325x-amds.sh").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("SPEC_SUFFIX="))
    env = {"PATH": os.environ["PATH"]}
    for value, want in ((None, ""), ("mtp", "_mtp"), ("none", "")):
        run_env = dict(env, SPEC_DECODING=value) if value else env
        proc = subprocess.run(["bash", "-c", f'set -euo pipefail\n{line}\nprintf %s "$SPEC_SUFFIX"'],
                              env=run_env, capture_output=True, text=True)
        assert (proc.returncode, proc.stdout) == (0, want)


def test_unsafe_fixes_wait_for_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(FIXTURES / "root-causes", tmp_path / "r")
    cfg = repo / "configs" / "amd-master.yaml"
    before = cfg.read_text()
    main(["lint", str(repo), "--fix"])
    out = capsys.readouterr().out
    assert "not fixed: configs/amd-master.yaml:66: BB104 unknown-runner-label: unsafe fix (--unsafe-fixes" in out
    assert cfg.read_text() == before
    code, doc = lint_json(repo, capsys, "--unsafe-fixes")
    assert code == 1
    assert [f["rule"] for f in doc["findings"]] == ["unknown-runner-label"]  # type: ignore[index]
    after = cfg.read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [('  runner: "mi355x-amds"', '  runner: "cluster:mi355x-amds"')]


def test_fix_refuses_revisions_and_the_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    for extra in (["--rev", "HEAD"], ["--staged"]):
        assert main(["lint", str(repo), "--fix", *extra]) == 2
        assert "--fix edits the work tree" in capsys.readouterr().err


def _finding(path: str, old: str, new: str, safe: bool = True, sev: Severity = Severity.ERROR) -> Finding:
    return Finding("r", "BB000", sev, path, 1, 1, f"m {path} {new}", fix=Fix.of("d", [Edit(path, old, new)], safe))


def test_plan_is_one_fix_per_file_and_skips_stale_and_unsafe() -> None:
    files = {"a.sh": "a\n", "b.sh": "b\n"}
    found = [_finding("a.sh", "a\n", "A\n"), _finding("a.sh", "a\n", "AA\n", sev=Severity.WARNING),
             _finding("b.sh", "old\n", "B\n"), _finding("c.sh", "c\n", "C\n", safe=False)]
    chosen = fix.plan(found, unsafe=False, current=files.get)
    assert [e.new for e in chosen.edits] == ["A\n"]
    assert chosen.deferred == 1
    assert sorted(why for _, why in chosen.skipped) == ["b.sh changed since it was read",
                                                        "unsafe fix (--unsafe-fixes applies it)"]


def test_write_stays_inside_the_repo_and_on_regular_files(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    outside = tmp_path / "outside.sh"
    outside.write_text("x\n")
    (tmp_path / "repo" / "link.sh").symlink_to(outside)
    with pytest.raises(fix.FixError, match="outside the repo"):
        fix.write(str(tmp_path / "repo"), [Edit("link.sh", "x\n", "y\n")])
    with pytest.raises(fix.FixError, match="outside the repo"):
        fix.write(str(tmp_path / "repo"), [Edit("../outside.sh", "x\n", "y\n")])
    assert outside.read_text() == "x\n"
    assert fix.read_current(str(tmp_path / "repo"))("link.sh") is None
