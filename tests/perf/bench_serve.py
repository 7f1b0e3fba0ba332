"""``serve`` speed, as a ratio against a full ``lint`` of the same repo in the same run.

    python tests/perf/bench_serve.py [REPO] [--rev REV] [--repeat N] [--all-points]

The baseline is the full lint (``tests/perf/bench_lint.py`` relates that one to reading and
parsing); ``serve`` evaluates every entry x search-space point x launcher and then the
benchmark script each dispatches, and is reported as a multiple of it (the target: 2x at
most). Each figure is the median of N runs in one process, caches cleared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.config import load_config  # noqa: E402
from bot.launches.gather import gather as gather_serve  # noqa: E402
from bot.launches.gather import sinks  # noqa: E402
from bot.lint import lint  # noqa: E402
from bot.repo.cache import evalcache
from bot.repo.facts import gather  # noqa: E402
from bot.repo.files import parsed  # noqa: E402
from bot.repo.files.git import open_tree  # noqa: E402
from bot.report.serve import to_json  # noqa: E402
from bot.shell.evaluator import options, wordops  # noqa: E402


def _clear() -> None:
    """Cold: no parse, evaluation or persistent cache left from an earlier run."""
    options._STRING_CACHE.clear()
    wordops._SHIFT_CACHE.clear()
    parsed.reset()
    evalcache.reset()
    os.environ["BENCHBOT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-serve-cache-")


def full_lint(path: str, rev: str | None) -> float:
    _clear()
    tree = open_tree(path, rev)
    t0 = time.perf_counter()
    lint(tree, load_config(tree))
    return time.perf_counter() - t0


def serve(path: str, rev: str | None, all_points: bool) -> tuple[float, int]:
    _clear()
    tree = open_tree(path, rev)
    t0 = time.perf_counter()
    conf = load_config(tree)
    facts = gather(tree, conf.profile, sinks=sinks(), references=False)
    launches = list(gather_serve(facts, facts.entries, all_points=all_points))
    to_json(launches)
    return time.perf_counter() - t0, len(launches)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", nargs="?", default=str(Path(__file__).resolve().parents[2] / "examples" / "seed"))
    ap.add_argument("--rev")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--all-points", action="store_true")
    args = ap.parse_args()
    # lint and serve alternate, so that a slow spell of the machine hits both
    base: list[float] = []
    runs: list[tuple[float, int]] = []
    for _ in range(args.repeat):
        base.append(full_lint(args.repo, args.rev))
        runs.append(serve(args.repo, args.rev, args.all_points))
    b = statistics.median(base)
    s = statistics.median(t for t, _ in runs)
    ratio = statistics.median(t / lint_t for (t, _), lint_t in zip(runs, base))
    print(f"repo {args.repo}{'@' + args.rev if args.rev else ''}: {runs[0][1]} commands")
    print(f"baseline (full lint): {b:.3f}s")
    print(f"serve{' --all-points' if args.all_points else ''}: {s:.3f}s  = {ratio:.2f}x lint  "
          f"(median of {args.repeat} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
