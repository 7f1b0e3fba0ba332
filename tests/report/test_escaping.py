"""Repository text on a terminal or in a job log: control characters (ESC, CR, C1, DEL) and
bidi overrides in file names, entry names and messages are shown escaped, in the text and
the GitHub annotation formats and on stderr, through the real lint of a crafted repo."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.report import visible
from tests.conftest import EXAMPLE, copy_repo
from tests.report import run

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "abc\u202ehs.x" shows as "abcx.sh"
EVIL_ENTRY = "evil\x1b[2J\x1b[31m-entry"
BIDI_ENTRY = "kimi\u202e-mi300x"  # on a real runner: it shows up in the dispatch table
EVIL_SCRIPT = f"benchmarks/single_node/fixed_seq_len/kimi{RLO}hs.x_\x1b]0;pwned\x07.sh"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    # an entry whose name drives the terminal, on a runner label nobody defines
    with (repo / "configs" / "amd-master.yaml").open("a") as fh:
        for name, runner in ((EVIL_ENTRY, "mi999x"), (BIDI_ENTRY, "mi300x")):
            fh.write(f'\n"{name.encode("unicode_escape").decode()}":\n'
                     "  image: vllm/vllm-openai-rocm:v0.14.1\n  model: m\n  model-prefix: kimik2.5\n"
                     f"  runner: {runner}\n  precision: int4\n  framework: vllm\n  multinode: false\n"
                     "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
                     "      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n")
    # a benchmark script nobody runs, with an override and an OSC sequence in its file name
    (repo / EVIL_SCRIPT).write_text("#!/bin/bash\necho hi\n")
    return repo


def test_visible_escapes_controls_and_bidi_but_not_text() -> None:
    assert visible("a\x1b[31mb\u202ec\u2066d\u200fe\x85f\x7fg\r\nh") == \
        "a\\x1b[31mb\\u202ec\\u2066d\\u200fe\\x85f\\x7fg\\x0d\\x0ah"
    assert visible("tab\there, ümlaut, 中文, emoji 🚀") == "tab\there, ümlaut, 中文, emoji 🚀"
    assert visible("x\r\ny\x1b", lines=True) == "x\r\ny\\x1b"


def test_text_output_escapes_file_and_entry_names(hostile_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(hostile_repo), "--select", "dead-script,unknown-runner-label",
                       "--frames")
    assert code == 1
    assert not RAW.search(out.replace("\n", "")), repr(out)
    assert "kimi\\u202ehs.x_\\x1b]0;pwned\\x07.sh" in out  # the file name, shown as it is
    assert "evil\\x1b[2J\\x1b[31m-entry" in out  # the entry name
    # with colours on, only our own SGR sequences reach the terminal
    code, coloured, _ = run(capsys, "lint", str(hostile_repo), "--select", "dead-script,unknown-runner-label")
    assert "\\x1b[2J" in coloured


def test_color_output_keeps_repo_escapes_visible(hostile_repo: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = run(capsys, "lint", str(hostile_repo), "--select", "dead-script,unknown-runner-label")
    ours = re.sub(r"\x1b\[[0-9;]*m", "", out)  # drop the SGR colours the text format adds itself
    assert not RAW.search(ours.replace("\n", "")), repr(out)
    assert "\x1b[2J" not in out and RLO not in out


def test_github_annotations_escape_file_and_entry_names(hostile_repo: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(hostile_repo), "--select", "dead-script,unknown-runner-label",
                       "--format", "github")
    assert code == 1
    assert not RAW.search(out.replace("\n", "")), repr(out)
    lines = out.splitlines()
    assert any(line.startswith("::") and "kimi\\u202ehs.x_\\x1b]0;pwned\\x07.sh" in line for line in lines)
    assert any(line.startswith("::") and "evil\\x1b[2J\\x1b[31m-entry" in line for line in lines)


def test_dispatch_table_and_errors_escape_repo_text(hostile_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dispatch", str(hostile_repo))
    assert code == 0 and not RAW.search(out.replace("\n", "")) and "kimi\\u202e-mi300x  [" in out
    code, _, err = run(capsys, "dispatch", str(hostile_repo), "--entry", "nope\x1b[31m*")
    assert code == 2  # no entry matches; the message quotes the pattern and the closest names
    assert not RAW.search(err.replace("\n", "")) and "nope\\x1b[31m*" in err
    (hostile_repo / ".benchbot.yml").write_text('select: ["no-such\\u202erule"]\n')
    code, _, err = run(capsys, "lint", str(hostile_repo))
    assert code == 2 and not RAW.search(err.replace("\n", "")) and "no-such\\u202erule" in err


def test_markdown_escapes_file_and_entry_names(hostile_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(hostile_repo), "--select", "dead-script,unknown-runner-label",
                       "--format", "markdown")
    assert code == 1
    assert not RAW.search(out.replace("\n", "")), repr(out)
    assert "kimi\\u202ehs.x_\\x1b]0;pwned\\x07.sh" in out
