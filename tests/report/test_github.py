"""GitHub Actions workflow commands: golden output, escaping, automatic selection."""

from __future__ import annotations

import pytest

from bot.findings import Severity
from bot.report import github
from tests.conftest import EXAMPLE, ROOT
from tests.report import SEED_RULES, STATS, finding, normalize, run

GOLDEN = ROOT / "tests" / "golden" / "seed.github"


def test_seed_matches_golden_line_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "github")
    assert code == 1
    got, want = normalize(out).splitlines(), GOLDEN.read_text().splitlines()
    for n, (g, w) in enumerate(zip(got, want), 1):
        assert g == w, f"line {n}"
    assert len(got) == len(want)


def test_github_actions_selects_the_format(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert normalize(out) == GOLDEN.read_text()
    # an explicit --format wins
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "text")
    assert not out.startswith("::")
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert out.startswith("runners/launch_mi300x-amds.sh:32:6: error BB103")


def test_levels_and_positions() -> None:
    assert github.command(finding(severity=Severity.ERROR)).startswith("::error file=runners/launch.sh,line=3,col=5,")
    assert github.command(finding(severity=Severity.WARNING)).startswith("::warning ")
    assert github.command(finding(severity=Severity.INFO)).startswith("::notice ")
    # a finding about a whole file has no line (and so no column)
    whole_file = github.command(finding(line=0, column=0))
    assert whole_file == "::error file=runners/launch.sh,title=BB103 ignored-variant::msg"


def test_message_escaping() -> None:
    cmd = github.command(finding(message="100% of\nentries\r\nfail: a,b::c"))
    assert cmd.endswith("::100%25 of%0Aentries%0D%0Afail: a,b::c")
    assert "\n" not in cmd and "\r" not in cmd


def test_property_escaping() -> None:
    cmd = github.command(finding(path="runners/a,b:c%d\ne.sh"))
    assert cmd.startswith("::error file=runners/a%2Cb%3Ac%25d%0Ae.sh,line=3,col=5,title=BB103 ignored-variant::")
    assert github.escape_property("%0A") == "%250A"  # escaped once, unescaped once: no double decoding
    assert github.escape_data("a:b,c") == "a:b,c"


def test_a_crafted_message_cannot_start_another_command() -> None:
    out = github.render([finding(message="x\n::error file=evil::pwned")], STATS)
    lines = out.splitlines()
    assert len(lines) == 2
    assert sum(line.startswith("::") for line in lines) == 1
    assert lines[1] == "benchbot: 1 finding (1 error); 2 entries, 1 launcher, 1 script checked in 0.50s"


def test_empty() -> None:
    assert github.render([], STATS) == "benchbot: 0 findings; 2 entries, 1 launcher, 1 script checked in 0.50s\n"
