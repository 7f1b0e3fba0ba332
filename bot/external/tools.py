"""Finding and running the external checkers' executables, under budgets.

A tool is looked up beside the running Python first (the ``bin/`` of the virtual environment
that ``pip install 'benchbot[workflows]'`` filled), then on ``PATH``; ``BENCHBOT_ZIZMOR``,
``BENCHBOT_ACTIONLINT`` and ``BENCHBOT_SHELLCHECK`` name an executable explicitly (an empty
value turns that tool off). A tool that is not there is a note, never a failure.

Runs get an argument list (never a shell), a working directory of our own, an environment
without tokens (zizmor's online audits would use ``GH_TOKEN``/``GITHUB_TOKEN``; it runs
``--offline`` anyway), a wall-clock budget and an output budget. Two tools run at once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_OUTPUT = 32 * 1024 * 1024  # bytes of a tool's standard output we read
_DROP_ENV = ("GH_TOKEN", "GITHUB_TOKEN", "BENCHBOT_GITHUB_TOKEN", "ZIZMOR_CONFIG", "ACTIONS_RUNTIME_TOKEN",
             "ACTIONS_ID_TOKEN_REQUEST_TOKEN")


def locate(name: str) -> str | None:
    """The executable of ``name`` (``zizmor``, ``actionlint``, ``shellcheck``), or None."""
    explicit = os.environ.get(f"BENCHBOT_{name.upper()}")
    if explicit is not None:
        return explicit if explicit and os.access(explicit, os.X_OK) else None
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which(name)


@lru_cache(maxsize=16)
def version(exe: str) -> str | None:
    """The version a tool prints for ``--version`` (actionlint: ``-version``), first line; None
    if it does not run."""
    flag = "-version" if os.path.basename(exe).startswith("actionlint") else "--version"
    try:
        proc = subprocess.run([exe, flag], capture_output=True, text=True, timeout=20, env=clean_env(),
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    first = (proc.stdout or proc.stderr).strip().splitlines()
    return first[0].strip()[:200] if proc.returncode == 0 and first else None


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env["NO_COLOR"] = "1"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Ran:
    """What one run gave: its exit code and output, or why there is none (``problem``)."""

    code: int
    stdout: str
    stderr: str
    problem: str | None = None  # a budget hit or a tool that would not start


def json_items(ran: Ran, tool: str, ok: Collection[int]) -> tuple[list[Any], str | None]:
    """The items of the JSON list a run printed, or why there are none (a note naming the tool):
    a budget hit, an exit code not in ``ok``, output that is not JSON."""
    if ran.problem is not None:
        return [], f"{tool}: {ran.problem}; no {tool} findings"
    if ran.code not in ok:
        return [], f"{tool} failed (exit {ran.code}): {_why(ran.stderr)[:300]}; no {tool} findings"
    try:
        raw = json.loads(ran.stdout or "[]")
    except json.JSONDecodeError as exc:
        return [], f"{tool} printed no JSON ({exc.msg}); no {tool} findings"
    return (raw if isinstance(raw, list) else []), None


def _why(stderr: str) -> str:
    """What a failed run said: its ``error:`` line and the innermost cause under it (a Rust
    tool's error chain, ``Caused by: 0: ... 2: ...``), never the stack backtrace after them."""
    lines = [line.strip() for line in stderr.splitlines()]
    if "Stack backtrace:" in lines:
        lines = lines[:lines.index("Stack backtrace:")]
    lines = [line for line in lines if line]
    if not lines:
        return "(nothing on stderr)"
    last = re.sub(r"^[0-9]+:\s*", "", lines[-1])
    error = next((line[len("error:"):].strip() for line in lines if line.startswith("error:")), None)
    return f"{error}: {last}" if error and error not in last else last


def run(argv: Sequence[str], cwd: str, timeout: float) -> Ran:
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=clean_env(), start_new_session=True)
    except OSError as exc:
        return Ran(-1, "", "", f"could not start {os.path.basename(argv[0])}: {exc.strerror}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return Ran(-1, "", "", f"{os.path.basename(argv[0])} ran out of its {timeout:g} s budget")
    if len(out) > MAX_OUTPUT:
        return Ran(proc.returncode, "", "", f"{os.path.basename(argv[0])} printed more than "
                                            f"{MAX_OUTPUT // 2**20} MB")
    return Ran(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")[-4000:])


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End a run that overran, with what it started (its own session)."""
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        proc.kill()
    proc.communicate()


def run_all(jobs: Mapping[str, tuple[Sequence[str], str, float]]) -> dict[str, Ran]:
    """Several runs at once: name -> (argv, cwd, timeout)."""
    if len(jobs) <= 1:
        return {name: run(*job) for name, job in jobs.items()}
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {name: pool.submit(run, *job) for name, job in jobs.items()}
        return {name: f.result() for name, f in futures.items()}
