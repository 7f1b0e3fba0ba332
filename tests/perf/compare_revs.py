"""Lint time of this checkout against an earlier benchbot revision, in one run.

    python tests/perf/compare_revs.py REPO --against REV [--repeat N] [--rev REPO_REV] [--no-bytecode]

Extracts benchbot at ``REV`` (``git archive``) into a temporary directory and times one
``bot.lint.lint`` of ``REPO`` in a fresh process per checkout, alternating between the two N
times (so drift of a noisy machine hits both alike). The same harness (below) runs both:
each process imports its checkout's ``bot``, opens the tree and loads the config, then times
the lint alone, in wall and CPU seconds, with an empty persistent cache (``bot.cache``): a
cold lint. Both checkouts' modules are byte-compiled first (into a temporary
``PYTHONPYCACHEPREFIX``), as ``pip install`` does: a module a lint imports late is then
loaded, not compiled, in the timed part, whatever ``PYTHONDONTWRITEBYTECODE`` says
(``--no-bytecode``: compiled on import, as in a checkout run with that variable set).
Printed: min and median per checkout, and the change as the median of the N paired ratios
(new / old of the same round) and as the ratio of the minima. This is how
"no slower than before by more than X%" is measured.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def extract(rev: str, into: Path) -> Path:
    data = subprocess.run(["git", "-C", str(HERE), "archive", rev], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


HARNESS = """
import resource, sys, time
sys.path.insert(0, '.')
from bot.config import load_config
from bot.lint import lint
import importlib
for where in ("bot.repo.files.git", "bot.repo.git", "bot.repo.tree"):  # this checkout's, then older layouts
    try:
        open_tree = importlib.import_module(where).open_tree
        break
    except (ImportError, AttributeError):
        continue
tree = open_tree(sys.argv[1], sys.argv[2] or None)
conf = load_config(tree)
w, c = time.perf_counter(), time.process_time()
n = len(lint(tree, conf).findings)
print(time.perf_counter() - w, time.process_time() - c, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def compile_all(checkout: Path, prefix: str) -> None:
    """Byte-compile ``checkout``'s ``bot`` into ``prefix`` (what an install leaves behind)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0", str(checkout / "bot")], check=True,
                   capture_output=True, env={**os.environ, "PYTHONPYCACHEPREFIX": prefix})


def one(checkout: Path, repo: str, rev: str | None, prefix: str | None) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, findings, peak RSS in KB) of one lint in a fresh process."""
    cmd = [sys.executable, "-c", HARNESS, repo, rev or ""]
    with tempfile.TemporaryDirectory() as cache_dir:  # cold: an empty persistent cache each run
        env = {**os.environ, "BENCHBOT_CACHE_DIR": cache_dir}
        env.pop("BENCHBOT_NO_CACHE", None)
        if prefix is not None:
            env["PYTHONPYCACHEPREFIX"] = prefix
        out = subprocess.run(cmd, cwd=checkout, check=True, capture_output=True, text=True, env=env).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), int(out[3])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--against", required=True, help="the benchbot revision to compare with")
    ap.add_argument("--rev", help="lint this revision of REPO (git)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-bytecode", action="store_true",
                    help="do not byte-compile first: modules imported during the lint are compiled then")
    args = ap.parse_args()
    repo = str(Path(args.repo).resolve())
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as pyc:
        old = extract(args.against, Path(tmp))
        prefix = None if args.no_bytecode else pyc
        if prefix is not None:
            compile_all(old, prefix)
            compile_all(HERE, prefix)
        print("modules byte-compiled first" if prefix else "modules compiled as they are imported (--no-bytecode)")
        runs: dict[str, list[tuple[float, float, int, int]]] = {"old": [], "new": []}
        for _ in range(args.repeat):
            runs["old"].append(one(old, repo, args.rev, prefix))
            runs["new"].append(one(HERE, repo, args.rev, prefix))
    for name, label in (("old", args.against), ("new", "this checkout")):
        wall, cpu = [r[0] for r in runs[name]], [r[1] for r in runs[name]]
        print(f"{label}: lint wall min {min(wall):.3f}s median {statistics.median(wall):.3f}s, "
              f"CPU min {min(cpu):.3f}s median {statistics.median(cpu):.3f}s "
              f"peak RSS {max(r[3] for r in runs[name]) / 1024:.0f} MB "
              f"({runs[name][0][2]} findings, {args.repeat} runs)")
    for i, what in ((0, "wall"), (1, "CPU")):
        paired = statistics.median(n[i] / o[i] for o, n in zip(runs["old"], runs["new"]))
        mins = min(n[i] for n in runs["new"]) / min(o[i] for o in runs["old"])
        print(f"change ({what}): {100 * (paired - 1):+.1f}% (median of paired ratios), "
              f"{100 * (mins - 1):+.1f}% (ratio of minima)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
