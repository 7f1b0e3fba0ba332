"""Every package under bot/ ships: pyproject lists packages explicitly (schemas/ is mapped in); the Action
installs exactly the files of requirements.lock, which pins pyproject.toml's dependencies with hashes."""

from __future__ import annotations

import copy
import functools
import importlib.util
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT


def test_every_bot_package_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bot").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert "bot._schemas" in listed


# --- requirements.lock: the Action installs exactly these files -------------------------------------------

LOCK = ROOT / "requirements.lock"
REGENERATE = "python scripts/lock.py"
# Where the Action runs: Linux (ubuntu-latest, also the arm runners) with the Python the action sets up
# (its python-version input; 3.11 by default, and any newer one benchbot supports).
RUNNERS = [{"sys_platform": "linux", "platform_system": "Linux", "platform_machine": machine,
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "python_version": version, "python_full_version": f"{version}.0"}
           for machine in ("x86_64", "aarch64") for version in ("3.11", "3.12", "3.13", "3.14")]


@functools.cache
def _lock_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchbot_lock_script", ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lock_entries(text: str) -> tuple[list[tuple[Requirement, list[str]]], list[str]]:
    """The lock's requirements with their hashes, and the problems of lines that are not ``name==version``
    requirements with ``--hash`` options (an index URL, an editable or a URL requirement, say)."""
    entries: list[tuple[Requirement, list[str]]] = []
    problems: list[str] = []
    logical = re.sub(r"\\\n", " ", "\n".join(line.split(" #")[0] for line in text.splitlines()
                                             if not line.lstrip().startswith("#")))
    for line in filter(None, (raw.strip() for raw in logical.splitlines())):
        requirement, *options = re.split(r"\s+(?=--)", line)
        hashes = [o.removeprefix("--hash=") for o in options if o.startswith("--hash=")]
        if requirement.startswith("-") or len(hashes) != len(options):
            problems.append(f"not a pinned requirement with hashes: {line[:100]}")
            continue
        try:
            entries.append((Requirement(requirement), hashes))
        except InvalidRequirement:
            problems.append(f"not a requirement: {requirement[:100]}")
    return entries, problems


def lock_problems(text: str, pyproject: dict[str, Any]) -> list[str]:
    """Why ``text`` is not a lock of ``pyproject``'s runtime dependencies and build backend, with hashes."""
    entries, problems = lock_entries(text)
    pinned: dict[str, list[Requirement]] = {}
    for req, hashes in entries:
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
            problems.append(f"{req.name}: {req.specifier or 'no version'}, not pinned with ==")
        if not hashes or not all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes):
            problems.append(f"{req.name}: no --hash=sha256: (or one that is not a sha256)")
        pinned.setdefault(canonicalize_name(req.name), []).append(req)
    wanted = [*pyproject["project"]["dependencies"], *pyproject["build-system"]["requires"]]
    for want in map(Requirement, wanted):
        for env in RUNNERS:
            if want.marker is not None and not want.marker.evaluate(env):
                continue
            have = [r for r in pinned.get(canonicalize_name(want.name), [])
                    if r.marker is None or r.marker.evaluate(env)]
            versions = [next(iter(r.specifier)).version for r in have if len(r.specifier) == 1]
            if len(have) != 1 or not versions:
                problems.append(f"{want}: {len(have)} pins for Python {env['python_version']} on "
                                f"{env['platform_machine']}")
                break
            if not want.specifier.contains(versions[0], prereleases=True):
                problems.append(f"{want}: the lock pins {versions[0]}")
                break
    script = _lock_script()
    recorded, digest = script.recorded_digest(text), script.inputs_digest(pyproject)
    if recorded != digest:
        problems.append(f"compiled from other inputs than pyproject.toml's (inputs-sha256 {recorded}, want {digest})")
    if f"#    {REGENERATE}\n" not in text:
        problems.append(f"the header does not name the command that regenerates it ({REGENERATE})")
    return problems


def _words(script: str) -> list[list[str]]:
    return [shlex.split(line, comments=True) for line in script.replace("\\\n", " ").splitlines()]


def install_problems(action: dict[str, Any]) -> list[str]:
    """action.yml installs the lock with --require-hashes and then benchbot with --no-deps, nothing else."""
    steps = action["runs"]["steps"]
    pips = [words for step in steps for words in _words(str(step.get("run", "")))
            if any(re.fullmatch(r"(.*/)?pip[0-9.]*", w) for w in words)]
    problems = [f"not `python -P -m pip install`: {' '.join(w)}" for w in pips if w[:5] != ["python", "-P", "-m",
                                                                                          "pip", "install"]]
    if len(pips) != 2:
        return [*problems, f"{len(pips)} pip commands, want two (the lock, then benchbot)"]
    lock, own = pips
    def after(words: list[str], flag: str) -> str | None:
        return words[words.index(flag) + 1] if flag in words[:-1] else None

    if "--require-hashes" not in lock:
        problems.append("the lock is installed without --require-hashes")
    if after(lock, "--only-binary") != ":all:":
        problems.append("the lock is installed without --only-binary :all:")
    if after(lock, "-r") != "$ACTION_PATH/requirements.lock":
        problems.append("the first pip install is not -r $ACTION_PATH/requirements.lock")
    for flag in ("--no-deps", "--no-build-isolation", "--no-index"):
        if flag not in own:
            problems.append(f"benchbot is installed without {flag}")
    if own[-1:] != ["$ACTION_PATH"]:
        problems.append("the second pip install is not benchbot's own checkout ($ACTION_PATH)")
    return problems


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_lock_pins_pyproject_dependencies_with_hashes() -> None:
    assert lock_problems(LOCK.read_text(), _pyproject()) == [], \
        f"requirements.lock is out of date with pyproject.toml; run: {REGENERATE}"


def test_the_action_installs_the_lock_with_hashes() -> None:
    assert install_problems(yaml.safe_load((ROOT / "action.yml").read_text())) == []


def test_lock_check_passes() -> None:
    proc = subprocess.run([sys.executable, "scripts/lock.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_changed_dependency_list_makes_the_lock_stale() -> None:
    text, pyproject = LOCK.read_text(), _pyproject()
    stale = "compiled from other inputs than pyproject.toml's"
    first = Requirement(pyproject["project"]["dependencies"][0]).name

    def changed(table: str, key: str, edit: Callable[[list[str]], list[str]]) -> list[str]:
        other = copy.deepcopy(pyproject)
        other[table][key] = edit(other[table][key])
        problems = lock_problems(text, other)
        assert any(p.startswith(stale) for p in problems), problems
        return problems

    assert "rich>=13: 0 pins for Python 3.11 on x86_64" in changed("project", "dependencies",
                                                                    lambda deps: [*deps, "rich>=13"])
    raised = changed("project", "dependencies", lambda deps: [f"{first}>=9999", *deps[1:]])
    assert any(p.startswith(f"{first}>=9999: the lock pins ") for p in raised), raised
    assert "wheel: 0 pins for Python 3.11 on x86_64" in changed("build-system", "requires",
                                                                lambda reqs: [*reqs, "wheel"])
    # a looser bound, or one dependency fewer: the pins still fit, only the recorded inputs tell
    assert [p[:len(stale)] for p in changed("project", "dependencies", lambda deps: [first, *deps[1:]])] == [stale]
    assert [p[:len(stale)] for p in changed("project", "dependencies", lambda deps: deps[:-1])] == [stale]
    # the same inputs in another order, case or spacing are the same inputs
    same = copy.deepcopy(pyproject)
    same["project"]["dependencies"] = [d.upper().replace(">=", " >= ") for d in reversed(pyproject["project"]
                                                                                         ["dependencies"])]
    assert lock_problems(text, same) == []


def test_the_lock_checks_can_fail() -> None:
    text, pyproject = LOCK.read_text(), _pyproject()
    unhashed = re.sub(r"(?m)^(pyyaml==[^ \n]+) \\\n(    --hash=.*\n)+", r"\1\n", text)
    assert unhashed != text
    assert "pyyaml: no --hash=sha256: (or one that is not a sha256)" in lock_problems(unhashed, pyproject)
    ranged = text.replace("\nbashlex==0.18 ", "\nbashlex>=0.18 ")
    assert "bashlex: >=0.18, not pinned with ==" in lock_problems(ranged, pyproject)
    indexed = "--extra-index-url https://example.invalid/simple\n" + text
    assert any(p.startswith("not a pinned requirement with hashes: --extra-index-url") for p in
               lock_problems(indexed, pyproject))
    assert any("header does not name" in p for p in lock_problems(text.replace(REGENERATE, "uv"), pyproject))


def test_the_install_checks_can_fail() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if "pip" in str(s.get("run", "")))
    original = step["run"]
    step["run"] = 'python -m pip install "$ACTION_PATH"\n'
    problems = install_problems(action)
    assert "1 pip commands, want two (the lock, then benchbot)" in problems
    assert any(p.startswith("not `python -P -m pip install`") for p in problems)
    step["run"] = original.replace(" --require-hashes", "").replace(" --no-deps", "").replace(":all:", ":none:")
    assert install_problems(action) == ["the lock is installed without --require-hashes",
                                        "the lock is installed without --only-binary :all:",
                                        "benchbot is installed without --no-deps"]
