"""Hostile one-liners from a pull request: ``python -m bot lint`` ends, within a memory
guard, with a dispatch-bound (BB901) finding naming what ran out, never a traceback.

Each line is tried as the whole launcher of the fixture's entries, and as a stray benchmark
script that the reference scan evaluates (it starts with ``source "$LIB"``, a path built
from a variable, which is what makes the scan evaluate a script). The subprocess runs
under RLIMIT_AS (1.5 GB) and a generous timeout, both purely guards; the peak RSS of the
children is asserted below 500 MB. Nothing here asserts a time.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "bash-c-clean"
LAUNCHER = "runners/launch_h100-cw.sh"
STRAY = "benchmarks/single_node/x.sh"
AS_LIMIT = 1536 * 1024 * 1024
GUARD_SECONDS = 120

_NESTED = "".join(f"for v{i} in $(seq 16) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do " for i in range(7)) + \
    "Y=1; " + "done; " * 7
_LONG_A = "a" * 40

# (name, script text, BB901 kinds expected as launcher, kinds expected as stray script)
# A kind is the start of the finding's construct ("step budget", "deadline", ...); a set
# means one of them; None: nothing runs out (the line is linear-time now) and no BB901.
CASES: list[tuple[str, str, set[str] | None, set[str] | None]] = [
    ("regex", f'X={_LONG_A}!\nif [[ $X =~ ^(a+)+$ ]]; then Y=1; fi', None, None),
    ("regex-backref", f'X={_LONG_A}\nif [[ $X =~ (a)\\1 ]]; then Y=1; fi', None, None),
    ("case-glob", f'X={_LONG_A}\ncase $X in *a*a*a*a*a*a*a*b) Y=1;; esac', None, None),
    ("recursive-function", "f() { f; f; f; f; f; f; }; f", {"step budget", "deadline"},
     {"step budget", "deadline"}),
    ("power-tower", "X=$((9**9**9))", {"arithmetic beyond 64 bits"}, {"arithmetic beyond 64 bits"}),
    ("nested-loops", _NESTED, {"step budget", "deadline"}, {"step budget", "deadline"}),
    ("source-fan-out", '. "${BASH_SOURCE}"; . "${BASH_SOURCE}"; . "${BASH_SOURCE}"',
     {"step budget", "deadline", "source depth"}, None),  # the scan does not descend into sources
    ("doubling", "X=x\n" + "X=$X$X\n" * 32, {"value over 64 KB"}, {"value over 64 KB"}),
    ("printf-width", "X=$(printf '%2000000000s' x)", {"printf width"}, {"printf width"}),
    ("printf-char", "X=$(printf '%c' 9999999)", None, None),
    ("eval-self", "X='eval \"$X\"'; eval \"$X\"", {"eval depth"}, {"eval depth"}),
    ("bash-c-self", "export C='bash -c \"$C\"'; bash -c \"$C\"", {"bash -c depth"}, {"bash -c depth"}),
]


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def _lint(repo: Path) -> tuple[int, dict[str, object] | None, str]:
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=GUARD_SECONDS, preexec_fn=_limit, check=False)
    data = json.loads(proc.stdout) if proc.returncode in (0, 1) else None
    return proc.returncode, data, proc.stderr


def _bb901(data: dict[str, object] | None) -> list[dict[str, object]]:
    findings = data["findings"] if data else []
    assert isinstance(findings, list)
    return [f for f in findings if f["code"] == "BB901"]


@pytest.mark.parametrize("mode", ["launcher", "stray"])
@pytest.mark.parametrize(("name", "text", "as_launcher", "as_stray"), CASES, ids=[c[0] for c in CASES])
def test_hostile_line_ends_with_a_finding(tmp_path: Path, mode: str, name: str, text: str,
                                          as_launcher: set[str] | None, as_stray: set[str] | None) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    if mode == "launcher":
        target, body, expected = LAUNCHER, text, as_launcher
    else:
        target, body, expected = STRAY, 'source "$LIB"\n' + text, as_stray
    (repo / target).write_text("#!/usr/bin/env bash\n" + body + "\n")
    rc, data, stderr = _lint(repo)
    assert "Traceback" not in stderr
    if rc == 3:  # an internal error is one line, never a traceback
        assert len(stderr.strip().splitlines()) == 1
        return
    assert rc in (0, 1), stderr
    found = _bb901(data)
    if expected is None:
        assert found == [], found
    else:
        messages = [str(f["message"]) for f in found]
        assert any(str(f["path"]) == target for f in found), messages
        assert any(any(k in m for k in expected) for m in messages), messages
        assert all(f"{target}:" in m for m in messages if any(k in m for k in expected)), messages
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert peak_kb < 500 * 1024, f"peak RSS {peak_kb // 1024} MB"


def test_stopped_launcher_is_unknown_not_analysed(tmp_path: Path) -> None:
    """A launcher that runs out of steps leaves its entries unknown in the coverage line."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    (repo / LAUNCHER).write_text("#!/usr/bin/env bash\nf() { f; f; f; f; f; f; }; f\n")
    (repo / ".benchbot.yml").write_text("profile:\n  max-steps: 5000\n  max-seconds: 30\n")
    rc, data, stderr = _lint(repo)
    # only the info-level BB901: the scripts the launcher would run are unknown, not dead
    assert rc == 0, stderr
    assert data is not None
    findings = data["findings"]
    assert isinstance(findings, list) and {f["rule"] for f in findings} == {"dispatch-bound"}
    stats = data["stats"]
    assert isinstance(stats, dict)
    assert stats["coverage"]["analysed"] == 0 and stats["coverage"]["unknown"] == 2
    messages = [str(f["message"]) for f in _bb901(data)]
    assert any("step budget (5,000 steps)" in m and "what 2 entries run is unknown" in m for m in messages), messages
