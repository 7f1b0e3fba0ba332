"""Which files the workflow checkers read, the folder they read them in, and stable names for
the places in them.

The checkers run on files, and a tree may be a git revision: the files are written into a
temporary folder of our own, at their repo-relative paths (every workflow and action file, so
that a local reusable workflow or action a checked file calls is there too). A finding's
fingerprint must not move when lines move: it names its place by job and step
(``jobs.build.steps[Checkout]``: a step by its ``id``, else its ``name``, else its index),
read from the file with positions (``bot.repo.load.yamlfile``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.repo.files.tree import Tree, glob_match
from bot.repo.load.yamlfile import YList, YMap, load

WORKFLOWS = (".github/workflows/*.yml", ".github/workflows/*.yaml")
ACTIONS = ("action.yml", "action.yaml", "**/action.yml", "**/action.yaml")
ACTIONLINT_CONFIG = (".github/actionlint.yaml", ".github/actionlint.yml")
# zizmor's, in the order its discovery from the repository's root finds them
ZIZMOR_CONFIG = ("zizmor.yml", "zizmor.yaml", ".github/zizmor.yml", ".github/zizmor.yaml")
TOOL_CONFIGS = ACTIONLINT_CONFIG + ZIZMOR_CONFIG  # read from the policy tree (the base in a pull request)
MAX_FILES = 500  # workflow and action files written for one run


def checkable(path: str) -> bool:
    """Whether a repo-relative path is a workflow or an action definition."""
    return any(glob_match(p, path) for p in WORKFLOWS + ACTIONS)


def is_workflow(path: str) -> bool:
    return any(glob_match(p, path) for p in WORKFLOWS)


def all_files(tree: Tree) -> list[str]:
    return tree.glob(WORKFLOWS + ACTIONS)


class Workspace:
    """A temporary folder holding the texts of some repo files at their relative paths."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="benchbot-workflows-")
        self.root = os.path.realpath(self._tmp.name)
        for path, text in texts.items():
            target = os.path.join(self.root, path)
            if not os.path.realpath(target).startswith(self.root + os.sep):
                continue  # no path leaves the folder (a tree never gives one; kept as a guard)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)

    def relative(self, path: str) -> str:
        """A path a tool printed (absolute, or relative to the folder) as repo-relative."""
        full = os.path.realpath(os.path.join(self.root, path))
        return os.path.relpath(full, self.root) if full.startswith(self.root + os.sep) else path

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Places:
    """Job and step names of one workflow file, by line."""

    def __init__(self, text: str) -> None:
        data, err = load(text)
        self.data: Any = data if err is None else None
        self._jobs: list[tuple[int, str, Any]] = []
        jobs = self.data.get("jobs") if isinstance(self.data, YMap) else None
        if isinstance(jobs, YMap):
            self._jobs = sorted((jobs.key_pos[k].line, str(k), v) for k, v in jobs.items() if k in jobs.key_pos)
        runs = self.data.get("runs") if isinstance(self.data, YMap) else None  # an action: runs.steps
        if isinstance(runs, YMap):
            self._jobs.append((runs.pos.line if hasattr(runs, "pos") else 1, "", runs))

    def label(self, line: int) -> str:
        """``jobs.<job>.steps[<step>]`` (or less) of the innermost job and step holding ``line``."""
        job = None
        for start, name, body in self._jobs:
            if start <= line:
                job = (name, body)
        if job is None:
            return ""
        name, body = job
        out = f"jobs.{name}" if name else "runs"
        steps = body.get("steps") if isinstance(body, YMap) else None
        if isinstance(steps, YList) and steps.item_pos and steps.item_pos[0].line <= line:
            i = max(k for k, pos in enumerate(steps.item_pos) if pos.line <= line)
            out += f".steps[{step_name(steps, i)}]"
        return out

    def route(self, components: Sequence[Mapping[str, Any]]) -> str:
        """zizmor's route (``[{"Key": "jobs"}, {"Key": "build"}, {"Key": "steps"}, {"Index": 2}]``)
        as a dotted name, a step named as :meth:`label` names it."""
        node: Any = self.data
        parts: list[str] = []
        for comp in components:
            if "Key" in comp:
                key = str(comp["Key"])
                parts.append(f".{key}" if parts else key)
                node = node.get(key) if isinstance(node, YMap) else None
            elif "Index" in comp and isinstance(comp["Index"], int):
                i = comp["Index"]
                is_steps = isinstance(node, YList) and bool(parts) and parts[-1] == ".steps"
                parts.append(f"[{step_name(node, i) if is_steps else i}]")
                node = node[i] if isinstance(node, YList) and 0 <= i < len(node) else None
            else:
                parts.append("[?]")
                node = None
        return "".join(parts)


def step_name(steps: Any, i: int) -> str:
    step = steps[i] if isinstance(steps, YList) and 0 <= i < len(steps) else None
    if isinstance(step, YMap):
        for key in ("id", "name"):
            value = step.get(key)
            if isinstance(value, (str, int)) and str(value).strip():
                return " ".join(str(value).split())[:80]
    return str(i)


def texts_of(tree: Tree, paths: Iterable[str]) -> dict[str, str]:
    """The readable texts of ``paths`` (at most :data:`MAX_FILES`)."""
    out: dict[str, str] = {}
    for path in paths:
        if len(out) >= MAX_FILES:
            break
        text = tree.text(path)
        if text is not None:
            out[path] = text
    return out
