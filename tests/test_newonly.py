"""Only what a change introduces: bot/newonly.py, and ``lint --new-from-rev/--baseline/--write-baseline/--staged``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.config import Config
from bot.findings import Finding, Related, Severity
from bot.lint import lint
from bot.newonly import Comparison, against_baseline, compare, read_baseline, write_baseline
from bot.repo.files.tree import WorkTree
from tests.conftest import ROOT, git

MTP = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh"
MOVED = "benchmarks/single-node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh"
LAUNCHER = "runners/launch_mi300x-amds.sh"


def dead(path: str, line: int = 1) -> Finding:
    return Finding("dead-script", "BB102", Severity.WARNING, path, line, 1, f"no entry runs {path}", key=path)


def ignored(scripts: list[str], entries: tuple[str, ...] = ("a-mtp",), line: int = 32) -> Finding:
    related = tuple(Related(s, 1, "the mtp script, never run", rule="dead-script", key=s) for s in scripts)
    return Finding("ignored-variant", "BB103", Severity.ERROR, LAUNCHER, line, 6,
                   f"{LAUNCHER} dispatches {len(entries)} mtp entries to their base scripts", related, entries,
                   key=f"{LAUNCHER}|mtp")


# ------------------------------------------------------------------ compare

def test_unchanged_findings_are_old_even_when_their_lines_move() -> None:
    base = [dead(MTP, 1), ignored([MTP], line=32)]
    head = [dead(MTP, 3), ignored([MTP], line=40)]
    c = compare(head, base)
    assert c.new == [] and c.old == head and c.fixed == ()


def test_renames_are_followed() -> None:
    """A moved script's dead-script finding is not new, and not fixed either."""
    base, head = [dead(MTP)], [dead(MOVED)]
    c = compare(head, base, {MTP: MOVED})
    assert c.new == [] and c.old == head and c.fixed == ()
    # without the rename it is a new finding and the old one looks fixed
    c = compare(head, base)
    assert c.new == head and c.fixed == (dead(MTP).fingerprint,)
    # a consequence's path is renamed too
    c = compare([ignored([MOVED])], [ignored([MTP])], {MTP: MOVED})
    assert c.new == [] and c.fixed == ()


def test_a_base_cause_that_became_a_consequence_is_not_fixed() -> None:
    """The base reports the dead script on its own; the head explains it by a launcher that
    ignores the variant. The launcher's finding is new; the dead script is not fixed."""
    base = [dead(MTP)]
    head = [ignored([MTP])]
    c = compare(head, base)
    assert c.new == head and c.old == [] and c.fixed == ()


def test_a_head_cause_that_was_a_base_consequence_is_not_new() -> None:
    base = [ignored([MTP, "benchmarks/other_mtp.sh"])]
    head = [dead(MTP)]  # the launcher was fixed for one variant; this script is dead for another reason
    c = compare(head, base)
    assert c.new == [] and c.old == head and c.fixed == (ignored([]).fingerprint,)


def test_a_cause_that_gains_one_more_entry_is_not_new() -> None:
    base = [ignored([MTP], ("a-mtp",))]
    head = [ignored([MTP, "benchmarks/b_mtp.sh"], ("a-mtp", "b-mtp"))]
    assert head[0].message != base[0].message
    c = compare(head, base)
    assert c.new == [] and c.old == head and c.fixed == ()


def test_comparison_summary_and_json() -> None:
    c = Comparison([dead("x.sh")], [dead("y.sh"), dead("z.sh")], ("f" * 20,), rev="HEAD")
    assert c.summary() == "2 findings already on HEAD not shown; fixes 1"
    assert c.as_json() == {"rev": "HEAD", "new": 1, "existing": 2, "fixed": ["f" * 20]}
    assert Comparison([], [], baseline="b.json").summary() == ""
    assert Comparison([], [dead("y.sh")], baseline="b.json").summary() == "1 finding already in b.json not shown"


# ------------------------------------------------------------------ baselines

def test_baseline_bytes_are_stable_and_read_back() -> None:
    findings = [ignored([MTP]), dead(MTP), dead("benchmarks/a.sh"), dead(MTP, line=9)]
    text = write_baseline(findings)
    assert text == write_baseline(list(reversed(findings)))  # order does not matter
    assert text.endswith("}\n")
    doc = json.loads(text)
    assert doc["version"] == 1 and doc["tool"] == "benchbot"
    rows = doc["fingerprints"]
    assert [r["path"] for r in rows] == ["benchmarks/a.sh", MTP, LAUNCHER]  # one per fingerprint, sorted
    assert set(rows[0]) == {"fingerprint", "rule", "path", "message"}
    assert read_baseline(text, "b.json") == {f.fingerprint for f in findings}


@pytest.mark.parametrize(("text", "error"), [
    ("{", r"^b\.json:1:2: not a benchbot baseline: invalid JSON"),
    ("[]", r"^b\.json: not a benchbot baseline: expected a JSON object"),
    ('{"version": 1, "tool": "ruff", "fingerprints": []}', r"^b\.json: .*'ruff', not 'benchbot'"),
    ('{"version": 2, "tool": "benchbot", "fingerprints": []}', r"^b\.json: unsupported baseline version 2"),
    ('{"version": 1, "tool": "benchbot", "fingerprints": {}}', r'^b\.json: .*"fingerprints" must be a list'),
    pytest.param('{"version": 1, "tool": "benchbot", "fingerprints": [{"rule": "x"}]}',
                 r'^b\.json: fingerprints\[0\] has no', id="fingerprint-without-one"),
    ('{"version": 1, "tool": "benchbot", "fingerprints": ["abc"]}', r"^b\.json: fingerprints\[0\] has no"),
])
def test_bad_baselines_name_the_file_and_the_reason(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        read_baseline(text, "b.json")


def test_stale_baseline_entries_are_fixed() -> None:
    known = {dead(MTP).fingerprint, dead("gone.sh").fingerprint}
    c = against_baseline([dead(MTP), dead("new.sh")], known, "b.json")
    assert c.new == [dead("new.sh")] and c.old == [dead(MTP)] and c.fixed == (dead("gone.sh").fingerprint,)
    assert c.as_json()["file"] == "b.json" and c.as_json()["rev"] is None


# ------------------------------------------------------------------ the CLI

EXPERIMENTS = ("benchmarks/experimental/sweep_a.sh", "benchmarks/experimental/sweep_b.sh")


@pytest.fixture
def committed_seed(seed_repo: Path) -> Path:
    """The seed (its launcher bugs) plus two scripts nothing runs, committed."""
    for path in EXPERIMENTS:
        (seed_repo / path).parent.mkdir(parents=True, exist_ok=True)
        (seed_repo / path).write_text("#!/usr/bin/env bash\necho sweep\n")
    git(seed_repo, "init", "-q", "-b", "main")
    git(seed_repo, "add", "-A")
    git(seed_repo, "commit", "-qm", "seed")
    return seed_repo


def _lint_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["lint", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)




def _base(repo: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    """The repo's findings now (the committed seed), as baseline rows."""
    assert main(["lint", str(repo), "--write-baseline", str(repo / ".git" / "b.json")]) == 0
    capsys.readouterr()
    rows: list[dict[str, str]] = json.loads((repo / ".git" / "b.json").read_text())["fingerprints"]
    assert rows and any(r["rule"] == "ignored-variant" for r in rows)
    return rows


def _fix_mi300x(repo: Path) -> None:
    """Apply benchbot's own fix to the MI300X launcher (in the work tree)."""
    (fix,) = [f.fix for f in lint(WorkTree(str(repo)), Config()).findings
              if f.rule == "ignored-variant" and f.path == LAUNCHER]
    assert fix is not None
    subprocess.run(["git", "apply"], cwd=repo, input=fix.diff.encode(), check=True)


def test_new_from_rev_follows_a_moved_folder(committed_seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed_seed
    n = len(_base(repo, capsys))
    git(repo, "mv", "benchmarks/experimental", "benchmarks/attic")
    code, everything = _lint_json(capsys, str(repo))
    findings: list[dict[str, Any]] = everything["findings"]
    assert code == 1 and len(findings) == n
    assert sorted(f["path"] for f in findings if f["rule"] == "dead-script") == [
        "benchmarks/attic/sweep_a.sh", "benchmarks/attic/sweep_b.sh"]
    code, doc = _lint_json(capsys, str(repo), "--new-from-rev", "HEAD")
    assert code == 0 and doc["findings"] == []
    assert doc["baseline"] == {"rev": "HEAD", "new": 0, "existing": n, "fixed": []}
    # committed, and compared across revisions
    git(repo, "commit", "-qam", "move")
    code, doc = _lint_json(capsys, str(repo), "--rev", "HEAD", "--new-from-rev", "HEAD~1")
    assert code == 0 and doc["baseline"] == {"rev": "HEAD~1", "new": 0, "existing": n, "fixed": []}


def test_new_from_rev_reports_only_the_new_mistake(committed_seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed_seed
    n = len(_base(repo, capsys))
    config = repo / "configs/amd-master.yaml"
    config.write_text(config.read_text().replace("runner: mi300x", "runner: mi300x-typo", 1))
    assert main(["lint", str(repo), "--new-from-rev", "HEAD"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].endswith("[unknown-runner-label]"), out
    assert out[1].startswith(f"1 finding (1 error); {n} findings already on HEAD not shown; "), out[1]


def test_new_from_rev_takes_the_configuration_from_rev(committed_seed: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A change cannot relax its own gate: its .benchbot.yml takes effect once it is the base."""
    repo = committed_seed
    _base(repo, capsys)
    (repo / ".benchbot.yml").write_text("ignore: [unknown-runner-label]\n")
    config = repo / "configs/amd-master.yaml"
    config.write_text(config.read_text().replace("runner: mi300x", "runner: mi300x-typo", 1))
    assert main(["lint", str(repo), "--new-from-rev", "HEAD"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].endswith("[unknown-runner-label]")
    assert "using the configuration of HEAD; this tree changes it (ignore: [] -> [unknown-runner-label])" \
        in captured.err
    # an explicit --config is the caller's choice, and obeyed
    (repo / "mine.yml").write_text("ignore: [unknown-runner-label]\n")
    assert main(["lint", str(repo), "--new-from-rev", "HEAD", "--config", str(repo / "mine.yml")]) == 0


def test_new_from_rev_counts_fixes(committed_seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed_seed
    rows = _base(repo, capsys)
    fixed = {r["fingerprint"] for r in rows if "mi300x" in r["path"]}
    _fix_mi300x(repo)
    code, doc = _lint_json(capsys, str(repo), "--new-from-rev", "HEAD")
    assert code == 0 and doc["baseline"] == {"rev": "HEAD", "new": 0, "existing": len(rows) - len(fixed),
                                             "fixed": sorted(fixed)}
    assert main(["lint", str(repo), "--new-from-rev", "HEAD"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"0 findings; {len(rows) - len(fixed)} finding"), last
    assert f" already on HEAD not shown; fixes {len(fixed)}; " in last, last


def test_new_from_rev_errors(committed_seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(committed_seed), "--new-from-rev", "v9.9.9"]) == 2
    assert "v9.9.9: not a revision" in capsys.readouterr().err
    assert main(["lint", str(committed_seed), "--new-from-rev", "HEAD", "--baseline", "b.json"]) == 2
    assert "use one of" in capsys.readouterr().err
    assert main(["lint", str(committed_seed), "--staged", "--rev", "HEAD"]) == 2
    assert "--staged" in capsys.readouterr().err


def test_baseline_round_trip(seed_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "baseline.json"
    assert main(["lint", str(seed_repo), "--write-baseline", str(baseline)]) == 0
    captured = capsys.readouterr()
    rows = json.loads(baseline.read_text())["fingerprints"]
    assert captured.out == "" and f"wrote {len(rows)} fingerprints to {baseline}" in captured.err
    first = baseline.read_bytes()
    assert main(["lint", str(seed_repo), "--write-baseline", str(baseline)]) == 0
    assert baseline.read_bytes() == first  # stable bytes
    capsys.readouterr()

    code, doc = _lint_json(capsys, str(seed_repo), "--baseline", str(baseline))
    assert code == 0 and doc["findings"] == []
    assert doc["baseline"] == {"rev": None, "file": str(baseline), "new": 0, "existing": len(rows), "fixed": []}

    # fix the MI300X launcher: its findings are stale baseline entries, reported as fixed
    _fix_mi300x(seed_repo)
    stale = sorted(r["fingerprint"] for r in rows if "mi300x" in r["path"])
    code, doc = _lint_json(capsys, str(seed_repo), "--baseline", str(baseline))
    assert code == 0 and doc["findings"] == [] and stale
    assert doc["baseline"] == {"rev": None, "file": str(baseline), "new": 0, "existing": len(rows) - len(stale),
                               "fixed": stale}
    assert main(["lint", str(seed_repo), "--baseline", str(baseline)]) == 0
    assert f" already in {baseline} not shown; fixes {len(stale)}; " in capsys.readouterr().out

    # a new mistake is reported, and only it
    config = seed_repo / "configs/amd-master.yaml"
    config.write_text(config.read_text().replace("runner: mi300x", "runner: mi300x-typo", 1))
    code, doc = _lint_json(capsys, str(seed_repo), "--baseline", str(baseline))
    assert code == 1 and [f["rule"] for f in doc["findings"]] == ["unknown-runner-label"]


def test_bad_baseline_is_a_usage_error(seed_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("{\n  nope")
    assert main(["lint", str(seed_repo), "--baseline", str(bad)]) == 2
    assert f"{bad}:2:3: not a benchbot baseline: invalid JSON" in capsys.readouterr().err
    assert main(["lint", str(seed_repo), "--baseline", str(tmp_path / "missing.json")]) == 2
    assert "cannot read the baseline" in capsys.readouterr().err
    assert main(["lint", str(seed_repo), "--write-baseline", str(tmp_path / "no" / "dir.json")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_staged_lints_the_index(committed_seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = committed_seed
    rows = _base(repo, capsys)
    fixed = [r for r in rows if "mi300x" in r["path"]]
    _fix_mi300x(repo)  # in the work tree, not staged
    assert main(["lint", str(repo), "--staged"]) == 0
    out = capsys.readouterr().out
    assert f"{len(rows)} findings already on HEAD not shown; 6 entries" in out, out  # the index is HEAD
    git(repo, "add", LAUNCHER)
    assert main(["lint", str(repo), "--staged"]) == 0
    out = capsys.readouterr().out
    assert f"already on HEAD not shown; fixes {len(fixed)}; " in out, out
    # a mistake staged, then undone in the work tree only: the index is what counts
    config = repo / "configs/amd-master.yaml"
    good = config.read_text()
    config.write_text(good.replace("runner: mi300x", "runner: mi300x-typo", 1))
    git(repo, "add", "configs/amd-master.yaml")
    config.write_text(good)
    code, doc = _lint_json(capsys, str(repo), "--staged")
    assert code == 1 and [f["rule"] for f in doc["findings"]] == ["unknown-runner-label"]
    code, doc = _lint_json(capsys, str(repo), "--new-from-rev", "HEAD")  # the work tree has no new mistake
    assert code == 0 and doc["findings"] == []


def test_staged_before_the_first_commit_reports_everything(seed_repo: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    n = len(lint(WorkTree(str(seed_repo)), Config()).findings)
    git(seed_repo, "init", "-q")
    git(seed_repo, "add", "-A")
    code, doc = _lint_json(capsys, str(seed_repo), "--staged")
    assert code == 1 and len(doc["findings"]) == n
    assert doc["baseline"] == {"rev": "HEAD", "new": n, "existing": 0, "fixed": []}


def test_console_entry_point_help_lists_the_options() -> None:
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", "--help"], cwd=ROOT, capture_output=True, text=True)
    for option in ("--staged", "--new-from-rev", "--baseline", "--write-baseline"):
        assert option in proc.stdout
