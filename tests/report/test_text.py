"""The text format: the golden one-line form stays, code frames and colour when asked for."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.report import text
from tests.conftest import EXAMPLE
from tests.report import SEED_RULES, STATS, finding, run

ESC = "\x1b["


def test_the_one_line_form_names_the_severity() -> None:
    assert finding().text() == "runners/launch.sh:3:5: error BB103 msg [ignored-variant]"
    assert finding(severity=Severity.INFO).text() == "runners/launch.sh:3:5: info BB103 msg [ignored-variant]"
    assert text.render([finding(severity=Severity.WARNING)], STATS).splitlines()[0] == \
        "runners/launch.sh:3:5: warning BB103 msg [ignored-variant]"


def test_frame_line_and_caret() -> None:
    src = ["first", "second line", "  third = 1"]
    assert text.frame(src, 3, 3) == ["  |", "2 | second line", "3 |   third = 1", "  |   ^"]
    # line 1 has no line above; a column past the end is put just after it
    assert text.frame(src, 1, 99) == ["  |", "1 | first", "  |      ^"]
    # a whole-file finding (line 0) or a line the file does not have: no frame
    assert text.frame(src, 0, 1) == [] and text.frame(src, 4, 1) == []


def test_frame_gutter_width_tabs_and_controls() -> None:
    src = [""] * 8 + ["a", "\tx = \x1b[31m"]
    assert text.frame(src, 10, 2) == ["   |", " 9 | a", "10 |     x = \\x1b[31m", "   |     ^"]
    assert text.frame(src, 10, 6) == ["   |", " 9 | a", "10 |     x = \\x1b[31m", "   |         ^"]
    wide = ["名前=x"]
    assert text.frame(wide, 1, 3)[-1] == "  |     ^"  # two wide characters before the column


def test_render_with_frames_from_source() -> None:
    files = {"runners/launch.sh": "#!/bin/bash\nset -e\nbash b.sh\n"}
    f = finding("runners/launch.sh", 3, 6)
    out = text.render([f], STATS, source=files.get, frames=True)
    assert out.splitlines()[:5] == [f.text(), "  |", "2 | set -e", "3 | bash b.sh", "  |      ^"]
    # no frame without frames=True, or for a file the source does not have
    assert text.render([f], STATS, source=files.get) == f"{f.text()}\n{text.summary([f], STATS)}\n"
    missing = finding("gone.sh", 3, 6)
    assert text.render([missing], STATS, source=files.get, frames=True).splitlines()[1] == text.summary([missing],
                                                                                                        STATS)


def test_colour_only_when_asked() -> None:
    f = finding(severity=Severity.WARNING)
    plain = text.render([f], STATS, source=lambda p: "a\nb\nc\n", frames=True)
    assert ESC not in plain
    coloured = text.render([f], STATS, source=lambda p: "a\nb\nc\n", frames=True, color=True)
    # the severity word in the severity's colour, after the position, as in the plain form
    assert f"{ESC}1;33mwarning{ESC}0m {ESC}1mBB103{ESC}0m" in coloured
    # stripping the colour gives the plain text back
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_cli_frames_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--frames")
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("runners/launch_mi300x-amds.sh:32:6: error BB103 "))
    assert lines[at + 1:at + 5] == [
        "   |",
        "31 | --no-container-entrypoint --export=ALL \\",
        "32 | bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh",
        "   |      ^",
    ]
    assert ESC not in out


def _tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)


def test_cli_defaults_not_a_tty(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert ESC not in out and " |" not in out


def test_cli_defaults_on_a_tty(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert ESC in out and "32 |" in out
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--no-frames")
    assert ESC in out and "32 |" not in out


def test_no_color_on_a_tty(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")  # NO_COLOR wins
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert ESC not in out and "32 |" in out


def test_force_color_without_a_tty(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES)
    assert ESC in out and "32 |" not in out


def test_text_to_a_file_is_plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    target = tmp_path / "report.txt"
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--output", str(target))
    written = target.read_text()
    assert ESC not in written and "32 |" not in written
    assert written.splitlines()[-1].startswith("2 findings (2 errors)")
    assert out.startswith(f"benchbot: wrote the text report to {target}: 2 findings")
