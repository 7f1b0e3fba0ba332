"""Recipe parity of a whole repo against local recipe checkouts, as a ratio of a cold lint of
the same repo measured in the same run.

    python tests/perf/bench_recipes.py REPO --source DIR [--source DIR] [--repeat N]

Each round runs, in fresh processes with no persistent cache, ``python -m bot lint REPO``
(the floor) and ``python -m bot recipes REPO --source DIR... --format json`` (every
single-node vLLM / SGLang entry, one comparison per point group), alternating so that a
noisy machine hits both alike. Printed: the median of each and of the paired ratios, and how
many comparisons found a recipe. The issue's bar: recipes < 2x a cold lint.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def timed(args: list[str]) -> tuple[float, str]:
    env = {**os.environ, "BENCHBOT_NO_CACHE": "1"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-P", "-m", "bot", *args], cwd=HERE, env=env, capture_output=True,
                          text=True)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"benchbot {' '.join(args)}: exit {done.returncode}: {done.stderr[-500:]}")
    return took, done.stdout


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repo")
    p.add_argument("--source", action="append", required=True)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    sources = [a for s in args.source for a in ("--source", s)]
    lints, parities, ratios = [], [], []
    out = ""
    for _ in range(args.repeat):
        lt, _ = timed(["lint", args.repo, "--format", "json"])
        rt, out = timed(["recipes", args.repo, *sources, "--format", "json"])
        lints.append(lt)
        parities.append(rt)
        ratios.append(rt / lt)
    doc = json.loads(out)
    found = sum(1 for c in doc["comparisons"] if c["recipe"] is not None)
    print(f"cold lint: median {statistics.median(lints):.2f}s; recipes: median {statistics.median(parities):.2f}s "
          f"({found} of {len(doc['comparisons'])} comparisons found a recipe)")
    print(f"recipes / cold lint: {statistics.median(ratios):.2f}x (median of {args.repeat} paired ratios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
