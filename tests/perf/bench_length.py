"""Lint speed under launcher length, as ratios against a baseline measured in the same run.

    python tests/perf/bench_length.py [--lines 1000,2000,20000] [--repeat 3] [--max-seconds 30]

Each size generates a repo in a temp dir (a copy of tests/fixtures/bash-c-clean whose
launcher gets N realistic lines before its dispatch: assignments, echo, ``if`` on env vars,
``docker``/``srun`` lines) and times ``python -m bot lint`` on it in a subprocess. The
baseline is the same fixture with its one-screen launcher, timed the same way, so the
figures are absolute seconds (wall clock and the child's CPU time, which a busy machine
disturbs less) and ratios to that floor (interpreter start-up included). A size whose
evaluation runs past the deadline (2 s by default; ``--max-seconds`` raises it through
``profile: {max-seconds: N}`` in each generated repo's .benchbot.yml, baseline included)
shows it in its summary line: a ``dispatch-bound`` finding and entries "unknown".
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "bash-c-clean"
LAUNCHER = "runners/launch_h100-cw.sh"


def launcher_lines(n: int) -> list[str]:
    """N lines of the kind real launchers have (the dispatch itself is added after)."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        k = i % 8
        if k == 0:
            out.append(f'SETTING_{i}="value-{i}"')
        elif k == 1:
            out.append(f'echo "step {i}: $SETTING_{i - 1} on $RUNNER_NAME"')
        elif k == 2:
            out += ['if [[ "$FRAMEWORK" == "sglang" ]]; then', f'    OPT_{i}="--flag-{i}"', "else",
                    f'    OPT_{i}=""', "fi"]
        elif k == 3:
            out.append(f'export PATH_{i}="$GITHUB_WORKSPACE/cache/{i}"')
        elif k == 4:
            out.append(f'docker pull "$IMAGE" >/dev/null 2>&1 || echo "pull {i} failed"')
        elif k == 5:
            # the runner host (set, value unknown): both branches are followed
            out += [f'if [[ "$HOSTNAME" == *-{i % 7} ]]; then', f'    echo "eval on ({i})"', f'    EVAL_{i}=1', "fi"]
        elif k == 6:
            out.append(f'srun --jobid="$JOB_ID" --ntasks=1 hostname > /tmp/host_{i}.txt')
        else:
            out.append(f'COUNT_{i}=$((COUNT_{i - 7:d} + 1))' if i >= 7 else f"COUNT_{i}=0")
        i += 1
    return out  # whole blocks: may end a few lines past n


def make_repo(dest: Path, n: int, max_seconds: float | None = None) -> Path:
    repo = dest / f"repo-{n}"
    shutil.copytree(FIXTURE, repo)
    if max_seconds is not None:
        (repo / ".benchbot.yml").write_text(f"profile:\n  max-seconds: {max_seconds:g}\n")
    if n:
        original = (repo / LAUNCHER).read_text().splitlines()
        head, tail = original[:3], original[3:]
        (repo / LAUNCHER).write_text("\n".join(head + launcher_lines(n) + tail) + "\n")
    return repo


def time_lint(repo: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the child, exit code, the summary line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(repo)], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (proc.stdout.strip().splitlines() or [proc.stderr.strip()])[-1]
    return elapsed, cpu, proc.returncode, last


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", default="1000,2000,20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="evaluation deadline for the generated repos (the profile's max-seconds)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.lines.split(",") if x]
    with tempfile.TemporaryDirectory() as tmp:
        base_repo = make_repo(Path(tmp), 0, args.max_seconds)
        base_runs = [time_lint(base_repo) for _ in range(args.repeat)]
        base = statistics.median(r[0] for r in base_runs)
        base_cpu = statistics.median(r[1] for r in base_runs)
        print(f"baseline (fixture launcher, {len((base_repo / LAUNCHER).read_text().splitlines())} lines): "
              f"{base:.2f}s wall, {base_cpu:.2f}s CPU")
        for n in sizes:
            repo = make_repo(Path(tmp), n, args.max_seconds)
            lines = len((repo / LAUNCHER).read_text().splitlines())
            runs = [time_lint(repo) for _ in range(args.repeat)]
            t = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rc, last = runs[0][2], runs[0][3]
            print(f"{lines:>6} lines: {t:6.2f}s wall = {t / base:5.1f}x, {cpu:6.2f}s CPU = {cpu / base_cpu:5.1f}x "
                  f"baseline  (exit {rc}: {last})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
