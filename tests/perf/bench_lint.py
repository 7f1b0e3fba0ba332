"""Lint speed, as a ratio against a baseline measured in the same run (machines are noisy).

    python tests/perf/bench_lint.py [REPO] [--rev REV] [--repeat N]

Baseline: what any linter of the repo must do at least, i.e. read every shell file and
parse it with tree-sitter, and compose every YAML config with PyYAML's C loader. The
full lint (facts, evaluation of every entry x launcher, rules) is reported as a multiple
of that. Each figure is the median of N runs in one process, caches cleared.
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

import yaml  # noqa: E402

from bot.config import load_config  # noqa: E402
from bot.lint import lint  # noqa: E402
from bot.repo.cache import evalcache
from bot.repo.files import parsed  # noqa: E402
from bot.repo.files.git import open_tree  # noqa: E402
from bot.shell.evaluator import options, wordops  # noqa: E402
from bot.shell.front.parse import _parser  # noqa: E402


def baseline(path: str, rev: str | None) -> float:
    tree = open_tree(path, rev)
    t0 = time.perf_counter()
    for f in tree.glob(["**/*.sh"]):
        data = tree.read(f)
        if data is not None:
            _parser().parse(data)
    for f in tree.glob(["**/*-master.yaml", "**/runners.yaml"]):
        text = tree.text(f)
        if text:
            try:
                yaml.compose(text, Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                pass
    return time.perf_counter() - t0


def full(path: str, rev: str | None) -> tuple[float, int]:
    options._STRING_CACHE.clear()
    wordops._SHIFT_CACHE.clear()
    parsed.reset()
    evalcache.reset()
    tree = open_tree(path, rev)
    with tempfile.TemporaryDirectory() as empty:  # a cold lint: an empty persistent cache
        os.environ["BENCHBOT_CACHE_DIR"] = empty
        t0 = time.perf_counter()
        result = lint(tree, load_config(tree))
        took = time.perf_counter() - t0
    return took, len(result.findings)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", nargs="?", default=str(Path(__file__).resolve().parents[2] / "examples" / "seed"))
    ap.add_argument("--rev")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    base = [baseline(args.repo, args.rev) for _ in range(args.repeat)]
    runs = [full(args.repo, args.rev) for _ in range(args.repeat)]
    b = statistics.median(base)
    f = statistics.median(t for t, _ in runs)
    print(f"repo {args.repo}{'@' + args.rev if args.rev else ''}: {runs[0][1]} findings")
    print(f"baseline (read + tree-sitter parse + YAML compose): {b:.3f}s")
    print(f"full lint: {f:.3f}s  = {f / b:.1f}x baseline  (median of {args.repeat})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
