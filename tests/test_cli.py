"""The CLI end to end on the bundled example: golden text, the JSON contract, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import EXAMPLE, ROOT, git

GOLDEN = ROOT / "tests" / "golden"


def _normalize(text: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in <t>s", text)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_text_matches_golden(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), "--show-fixes")
    assert code == 1
    assert _normalize(out) == (GOLDEN / "seed.txt").read_text()


def test_seed_findings_are_the_two_causes_of_the_issue(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), "--format", "json")
    doc = json.loads(out)
    got = sorted((f["rule"], f["path"]) for f in doc["findings"])
    assert got == [
        ("ignored-variant", "runners/launch_mi300x-amds.sh"),
        ("ignored-variant", "runners/launch_mi325x-amds.sh"),
    ]
    # each cause carries the _mtp script it leaves dead as a consequence, with the
    # fingerprint that dead-script finding would have
    for f, gpu in zip(sorted(doc["findings"], key=lambda f: f["path"]), ("mi300x", "mi325x")):
        cons = [r for r in f["related"] if r.get("rule")]
        assert [(r["rule"], r["path"]) for r in cons] == [
            ("dead-script", f"benchmarks/single_node/fixed_seq_len/kimik2.5_int4_{gpu}_mtp.sh")]
        assert len(cons[0]["fingerprint"]) == 20 and "1 script left dead" in f["message"]
    assert not any("mi355x" in f["path"] for f in doc["findings"])


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == 1
    assert doc["root"] == str(EXAMPLE)
    assert set(doc["stats"]) == {"files", "entries", "launchers", "scripts", "seconds", "coverage"}
    assert doc["stats"]["entries"] == 6 and doc["stats"]["launchers"] == 3
    keys = {"rule", "code", "severity", "path", "line", "column", "message", "related", "entries", "fix",
            "fingerprint"}
    for f in doc["findings"]:
        assert set(f) == keys
        assert f["severity"] in ("error", "warning", "info")
        assert re.fullmatch(r"BB\d{3}", f["code"])
        assert re.fullmatch(r"[0-9a-f]{20}", f["fingerprint"])
        for r in f["related"]:
            # a consequence of the finding also names its rule and its own fingerprint
            assert set(r) in ({"path", "line", "note"}, {"path", "line", "note", "rule", "fingerprint"})
    iv = [f for f in doc["findings"] if f["rule"] == "ignored-variant"]
    assert all(f["code"] == "BB103" and f["fix"]["diff"].startswith("--- a/runners/") for f in iv)
    assert {tuple(f["entries"]) for f in iv} == {("kimik2.5-int4-mi300x-vllm-mtp",), ("kimik2.5-int4-mi325x-vllm-mtp",)}
    # the message names the script that runs instead and the one that should
    mi300 = next(f for f in iv if "mi300x" in f["path"])
    assert "kimik2.5_int4_mi300x.sh" in mi300["message"] and "kimik2.5_int4_mi300x_mtp.sh" in mi300["message"]
    assert "launch_mi355x-amds.sh" in mi300["message"]


def test_fingerprints_are_stable_when_lines_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import copy_repo

    repo = copy_repo(EXAMPLE, tmp_path / "r")
    _, before, _ = run(capsys, "lint", str(repo), "--format", "json")
    launcher = repo / "runners" / "launch_mi300x-amds.sh"
    text = launcher.read_text().replace("set -euo pipefail\n", "set -euo pipefail\n\n# a comment\n\n", 1)
    launcher.write_text(text)
    _, after, _ = run(capsys, "lint", str(repo), "--format", "json")
    fp = lambda doc: sorted((f["rule"], f["fingerprint"]) for f in json.loads(doc)["findings"])  # noqa: E731
    lines = lambda doc: sorted(f["line"] for f in json.loads(doc)["findings"] if "mi300x-amds" in f["path"])  # noqa: E731
    assert fp(before) == fp(after)
    assert lines(before) != lines(after)


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "lint", str(EXAMPLE), "--select", "unknown-runner-label")[0] == 0
    assert run(capsys, "lint", str(EXAMPLE), "--fail-on", "error", "--ignore", "BB103")[0] == 0
    assert run(capsys, "lint", str(EXAMPLE), "--fail-on", "error")[0] == 1
    code, _, err = run(capsys, "lint", str(tmp_path / "nope"))
    assert code == 2 and "not a directory" in err
    code, _, err = run(capsys, "lint", str(EXAMPLE), "--select", "no-such-rule")
    assert code == 2 and "unknown rule 'no-such-rule'" in err


def test_bad_config_is_exit_2_with_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import copy_repo

    repo = copy_repo(EXAMPLE, tmp_path / "r")
    (repo / ".benchbot.yml").write_text("select: [ignored-variant]\nignroe: [dead-script]\n")
    code, out, err = run(capsys, "lint", str(repo))
    assert code == 2 and out == ""
    assert ".benchbot.yml:2:1: unknown field 'ignroe'; did you mean 'ignore'?" in err
    (repo / ".benchbot.yml").write_text("ignore: [dead-script]\n")
    code, out, _ = run(capsys, "lint", str(repo), "--format", "json")
    assert {f["rule"] for f in json.loads(out)["findings"]} == {"ignored-variant"}


def test_lint_a_git_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import copy_repo

    repo = copy_repo(EXAMPLE, tmp_path / "r")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    # the work tree changes, the revision does not
    (repo / "benchmarks" / "single_node" / "fixed_seq_len" / "kimik2.5_int4_mi300x_mtp.sh").unlink()
    _, head, _ = run(capsys, "lint", str(repo), "--rev", "HEAD", "--format", "json")
    _, work, _ = run(capsys, "lint", str(repo), "--format", "json")
    assert len(json.loads(head)["findings"]) == 2
    # without the mi300x _mtp script there is nothing to ignore on mi300x; its MTP entry now
    # runs the plain script, which does not speculate
    got = sorted((f["rule"], f["path"].rsplit("/", 1)[-1]) for f in json.loads(work)["findings"])
    assert got == [("ignored-variant", "launch_mi325x-amds.sh"), ("spec-not-enabled", "kimik2.5_int4_mi300x.sh")]
    code, _, err = run(capsys, "lint", str(repo), "--rev", "no-such-rev")
    assert code == 2 and "no-such-rev" in err


def test_rules_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    assert re.search(r"^BB103\s+ignored-variant\s+error", out, re.M)
    code, out, _ = run(capsys, "explain", "BB103")
    assert code == 0 and out.startswith("ignored-variant (BB103, error)")
    for section in ("What it does:", "Why is this bad?", "Example:", "Fix:"):
        assert section in out
    assert run(capsys, "explain", "nope")[0] == 2


def test_rules_name_the_workflow_checkers_rules_too(capsys: pytest.CaptureFixture[str]) -> None:
    """The external checkers' ids go wherever a rule id goes (--select, ignore, suppressions):
    ``rules`` says they exist, ``--external`` lists each, JSON has every id with its docs."""
    from bot.external import names

    code, out, _ = run(capsys, "rules")
    assert code == 0
    assert re.search(r"zizmor/<audit>\s+\d+ audits of zizmor 1\.\d+\.\d+: https://docs\.zizmor\.sh/audits/", out)
    assert re.search(r"actionlint/<kind>\s+\d+ kinds of actionlint ", out)
    assert "zizmor/template-injection" not in out
    code, out, _ = run(capsys, "rules", "--external")
    listed = set(re.findall(r"^\s+((?:zizmor|actionlint)/[a-z0-9-]+)$", out, re.M))
    assert listed == {f"{t}/{s}" for t, subs in names.TOOLS.items() for s in subs}
    code, out, _ = run(capsys, "rules", "--format", "json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert rows["ignored-variant"]["code"] == "BB103" and rows["ignored-variant"]["severity"] == "error"
    assert rows["zizmor/template-injection"]["help"] == "https://docs.zizmor.sh/audits/#template-injection"
    assert all(rid in rows for rid in listed)
    code, out, _ = run(capsys, "explain", "zizmor/artipacked")
    assert code == 0 and out.strip().endswith("https://docs.zizmor.sh/audits/#artipacked")


def test_python_dash_m(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(EXAMPLE)], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    assert proc.returncode == 1
    assert proc.stdout.strip().splitlines()[-1].startswith("2 findings (2 errors)")


def test_dispatch_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dispatch", str(EXAMPLE), "--entry", "*-mtp", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    got = {(r["entry"], r["launcher"], r["script"], r["exists"]) for r in rows}
    base = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_"
    assert got == {
        ("kimik2.5-int4-mi300x-vllm-mtp", "runners/launch_mi300x-amds.sh", base + "mi300x.sh", True),
        ("kimik2.5-int4-mi325x-vllm-mtp", "runners/launch_mi325x-amds.sh", base + "mi325x.sh", True),
        ("kimik2.5-int4-mi355x-vllm-mtp", "runners/launch_mi355x-amds.sh", base + "mi355x_mtp.sh", True),
    }
    code, out, _ = run(capsys, "dispatch", str(EXAMPLE), "--entry", "kimik2.5-int4-mi300x-vllm")
    assert out.splitlines()[0].endswith("@runners/launch_mi300x-amds.sh:32")
