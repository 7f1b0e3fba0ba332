#!/usr/bin/env python3
"""Write requirements.lock: benchbot's runtime dependencies and its build backend, pinned with hashes.

    python scripts/lock.py             # re-resolve and rewrite requirements.lock (keeps the pins it can)
    python scripts/lock.py --upgrade   # the same, taking the newest versions pyproject.toml allows
    python scripts/lock.py --check     # exit 1 if the lock's inputs are not pyproject.toml's; no network

Resolving needs uv on PATH (``pip install uv``) and the package index. The lock is uv's universal
resolution (every OS, CPU and Python version that ``requires-python`` admits, with markers) of
``[project].dependencies``, the ``workflows`` extra (zizmor, actionlint, ShellCheck: the Action runs
them) and ``[build-system].requires``; every file of every pinned version carries
its sha256. action.yml installs it with ``pip install --require-hashes --only-binary :all: -r`` and
then benchbot itself with ``--no-deps --no-build-isolation --no-index``, so an Action run installs
these files and nothing else. The header records a digest of the inputs; tests/test_packaging.py
fails when pyproject.toml's no longer match it (run this script, then commit both files).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
COMMAND = "python scripts/lock.py"
PYTHON = "3.11"  # the lowest Python the resolution is for (action.yml's default; requires-python's floor)
UV_ARGS = ["pip", "compile", "pyproject.toml", "-", "--extra", "workflows", "--universal", "--python-version", PYTHON,
           "--generate-hashes",
           "--custom-compile-command", COMMAND, "--output-file", LOCK.name]
DIGEST_LINE = re.compile(r"^# inputs-sha256: ([0-9a-f]{64})$", re.MULTILINE)


def _canonical(requirement: str) -> str:
    req = Requirement(requirement)
    extras = "[" + ",".join(sorted(canonicalize_name(e) for e in req.extras)) + "]" if req.extras else ""
    marker = f"; {req.marker}" if req.marker else ""
    return f"{canonicalize_name(req.name)}{extras}{req.specifier}{marker}"


def inputs(pyproject: dict[str, Any]) -> dict[str, Any]:
    """What the lock is compiled from, normalized: order, spacing and name spelling do not count."""
    return {"requires-python": str(pyproject["project"].get("requires-python", "")),
            "dependencies": sorted(_canonical(r) for r in pyproject["project"].get("dependencies", [])),
            "build-system": sorted(_canonical(r) for r in pyproject["build-system"]["requires"]),
            "workflows": sorted(_canonical(r) for r in pyproject["project"]["optional-dependencies"]["workflows"]),
            "python": PYTHON}


def inputs_digest(pyproject: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs(pyproject), sort_keys=True).encode()).hexdigest()


def recorded_digest(lock_text: str) -> str | None:
    found = DIGEST_LINE.search(lock_text)
    return found.group(1) if found else None


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def compile_lock(upgrade: bool) -> int:
    uv = shutil.which("uv")
    if uv is None:
        print("lock.py: uv is not on PATH; install it with `pip install uv`", file=sys.stderr)
        return 2
    pyproject = _pyproject()
    build = "".join(f"{r}\n" for r in pyproject["build-system"]["requires"])
    proc = subprocess.run([uv, *UV_ARGS, *(["--upgrade"] if upgrade else [])], cwd=ROOT, input=build, text=True,
                          stdout=subprocess.DEVNULL)  # uv prints the lock too; its messages go to stderr
    if proc.returncode != 0:
        return proc.returncode
    text = LOCK.read_text(encoding="utf-8")
    head, sep, rest = text.partition(f"#    {COMMAND}\n")
    if not sep:
        print(f"lock.py: uv's header does not name {COMMAND!r}; requirements.lock left as uv wrote it",
              file=sys.stderr)
        return 1
    note = (f"# which runs: {shlex.join(['uv', *UV_ARGS])} <<< [build-system].requires\n"
            f"# inputs-sha256: {inputs_digest(pyproject)}\n")
    LOCK.write_text(head + sep + note + rest, encoding="utf-8")
    return 0


def check() -> int:
    want = inputs_digest(_pyproject())
    have = recorded_digest(LOCK.read_text(encoding="utf-8")) if LOCK.is_file() else None
    if have != want:
        print(f"requirements.lock was not compiled from pyproject.toml's dependencies; run: {COMMAND}",
              file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare the recorded inputs with pyproject.toml's")
    parser.add_argument("--upgrade", action="store_true", help="take the newest allowed versions")
    args = parser.parse_args(argv)
    return check() if args.check else compile_lock(args.upgrade)


if __name__ == "__main__":
    raise SystemExit(main())
