"""A history of small changes on top of a synthetic repo (tests/perf/synth.py), for timing
``benchbot history``: deterministic for a seed, one git commit per change.

    python tests/perf/synth_history.py REPO [--commits 1000] [--seed 0]

REPO must be a git repo whose HEAD is a generated tree. The changes are what a benchmark
repo's pull requests are made of: a concurrency bound in a master config (most of them), a
line in a launcher, a line in a benchmark script, a perf-changelog entry. Every
``BREAK_EVERY`` commits one benchmark script is deleted and brought back ``BREAK_FOR``
commits later, so the range has root causes that appear and go at known commits.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
from pathlib import Path

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
BREAK_EVERY = 100
BREAK_FOR = 10
T0 = 1_780_000_000
_CONC = re.compile(r"conc-end: (\d+)")


def _commit(repo: Path, message: str, n: int) -> None:
    when = f"@{T0 + n * 3600} +0000"
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "PATH": "/usr/bin:/bin:/usr/local/bin"}
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", message], cwd=repo, check=True, env=env)


def make_history(repo: Path, commits: int, seed: int = 0, break_every: int = BREAK_EVERY,
                 break_for: int = BREAK_FOR) -> dict[str, int]:
    """Add ``commits`` commits to ``repo``; returns how many of each kind, and the breaks."""
    rng = random.Random(f"synth-history:{seed}")
    configs = sorted(str(p.relative_to(repo)) for p in (repo / "configs").glob("*-master.yaml"))
    launchers = sorted(str(p.relative_to(repo)) for p in (repo / "runners").glob("launch_*.sh"))
    scripts = sorted(str(p.relative_to(repo)) for p in (repo / "benchmarks").rglob("*.sh")
                     if p.name != "benchmark_lib.sh" and "multi_node" not in p.parts)
    counts = {"config": 0, "launcher": 0, "script": 0, "changelog": 0, "breaks": 0}
    broken: tuple[str, str] | None = None  # (path, text) of the script deleted for a while
    for n in range(1, commits + 1):
        if broken is None and n % break_every == break_every // 2:
            path = rng.choice(scripts)
            broken = (path, (repo / path).read_text())
            (repo / path).unlink()
            counts["breaks"] += 1
            _commit(repo, f"drop {path}", n)
            continue
        if broken is not None and n % break_every == (break_every // 2 + break_for) % break_every:
            (repo / broken[0]).write_text(broken[1])
            _commit(repo, f"bring back {broken[0]}", n)
            broken = None
            continue
        roll = rng.random()
        if roll < 0.45:
            path = repo / rng.choice(configs)
            text = path.read_text()
            found = list(_CONC.finditer(text))
            m = rng.choice(found)
            value = int(m.group(1))
            text = text[: m.start(1)] + str(value * 2 if value < 4096 else value // 2) + text[m.end(1):]
            path.write_text(text)
            counts["config"] += 1
            _commit(repo, f"configs: retune {m.group(0)}", n)
        elif roll < 0.65:
            path = repo / rng.choice(launchers)
            lines = path.read_text().splitlines(keepends=True)
            lines.insert(2, f'echo "launcher change {n}"\n')
            path.write_text("".join(lines))
            counts["launcher"] += 1
            _commit(repo, f"{path.name}: log change {n}", n)
        elif roll < 0.85:
            path = repo / rng.choice(scripts)
            path.write_text(path.read_text() + f"# tuned in change {n}\n")
            counts["script"] += 1
            _commit(repo, f"{path.name}: note change {n}", n)
        else:
            log = repo / "perf-changelog.yaml"
            log.write_text(log.read_text() + f"\n- config-keys:\n    - synthetic-{n}\n  description:\n"
                                              f"    - \"change {n}\"\n  pr-link: https://example.invalid/pull/{n}\n")
            counts["changelog"] += 1
            _commit(repo, f"perf-changelog: change {n}", n)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(make_history(args.repo, args.commits, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
