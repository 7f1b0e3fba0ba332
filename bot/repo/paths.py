"""The other workflow paths: each launcher run again under the env another path gives it.

The main path's runs (``Facts.runs``) are what most rules judge. Every other workflow path
that runs a launcher for the config entries (another caller of the benchmark template, a
profiling workflow with its own env, ...) is evaluated here wherever its env differs from
the main path's in a variable the launcher's result depends on (``Result.relevant``):
elsewhere the outcome is the main run's, by the evaluation cache's own rule. One entry per
(path, launcher, difference) is evaluated (``SAMPLES``): the question is whether the
difference changes what runs, and every entry with the same difference is named. (Two
samples found nothing more on InferenceX HEAD and two older revisions, for 41 more
evaluations on HEAD; only the relevant variables are compared, the whole env is rendered
for a sample.)
Standalone paths (a workflow that runs a launcher with an env of its own, no entry) are
evaluated once per launcher of the runner label they run on, when that label can be told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from bot.repo.env import wfenv
from bot.repo.env.launchenv import EnvSource
from bot.repo.files.tree import Tree
from bot.repo.load.configs import Entry, Point, Runners
from bot.repo.runs import Run
from bot.repo.workflows.wfcalls import Workflows
from bot.shell.evaluator.evaluate import Result
from bot.shell.ir.values import Val

SAMPLES = 1  # entries evaluated per (path, launcher, set of differing relevant variables)


class Host(Protocol):
    """What the other workflow paths' resolution reads of the facts (``bot.repo.facts.Facts``)."""

    @property
    def tree(self) -> Tree: ...
    @property
    def runs(self) -> list[Run]: ...
    @property
    def runners(self) -> Runners: ...
    @property
    def workflows(self) -> Workflows: ...
    @property
    def broken_launchers(self) -> list[str]: ...
    @property
    def envs(self) -> EnvSource: ...
    def evaluate(self, launcher: str, env: dict[str, Val], max_paths: int | None = None) -> Result: ...
    def launcher_of_node(self, node: str) -> str: ...
    def env_for(self, entry: Entry, point: Point, node: str, label: str) -> dict[str, Val]: ...


@dataclass(frozen=True)
class PathRun:
    """A launcher evaluated under another workflow path's env."""

    group: wfenv.Group
    launcher: str
    node: str
    label: str
    env: Mapping[str, Val]
    result: Result
    entry: Entry | None = None  # None: a standalone path
    point: Point | None = None
    main: Run | None = None  # the main path's run of the same (entry, point, launcher)
    differs: tuple[str, ...] = ()  # relevant variables whose values differ from the main env
    # entries (names) with the same difference on this launcher, evaluated or not
    alike: tuple[str, ...] = ()


def resolve(facts: Host) -> list[PathRun]:
    out: list[PathRun] = []
    for multinode in (False, True):
        sweep = facts.envs.sweep(multinode)
        if sweep.main is None:
            continue
        for group in facts.envs.paths(multinode):
            out.extend(_group_runs(facts, group, multinode))
    for group in wfenv.standalone(facts.workflows):
        label = wfenv.runner_label(group.call, facts.workflows)
        nodes = facts.runners.labels.get(label or "", [])
        for launcher, node in _launchers(facts, nodes, group.call.launcher).items():
            env = facts.envs.env_of(group.call, None, None, node, label or "")
            out.append(PathRun(group, launcher, node, label or "", env, facts.evaluate(launcher, env)))
    return out


def _launchers(facts: Host, nodes: list[str], literal: str | None) -> dict[str, str]:
    """launcher -> the first node that runs it (the call's own launcher when it names one)."""
    by: dict[str, str] = {}
    for node in nodes:
        by.setdefault(literal or facts.launcher_of_node(node), node)
    broken = set(facts.broken_launchers)
    return {k: v for k, v in by.items() if facts.tree.is_file(k) and k not in broken
            and (facts.tree.resolve(k) or k) not in broken}


def _group_runs(facts: Host, group: wfenv.Group, multinode: bool) -> list[PathRun]:
    out: list[PathRun] = []
    # (launcher, differing relevant names) -> [evaluated runs], entries alike
    seen: dict[tuple[str, tuple[str, ...]], list[PathRun]] = {}
    alike: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for run in facts.runs:
        if run.entry.multinode != multinode:
            continue
        if not facts.envs.applies(group.call, run.entry, run.point, run.node, run.label):
            continue  # the generator never routes this point to this path
        if facts.envs.call_for(run.entry, run.point, run.node, run.label) is group.call:
            continue  # the path this point's main run already used
        launcher = group.call.launcher or run.launcher
        main_env = facts.env_for(run.entry, run.point, run.node, run.label)
        main_result = run.result if run.result is not None else facts.evaluate(run.launcher, main_env)
        relevant = _relevant(main_result)
        # only the relevant names are compared; the whole env is rendered for a sample
        part = facts.envs.env_of(group.call, run.entry, run.point, run.node, run.label, relevant)
        differs = tuple(sorted(n for n in relevant if part.get(n) != main_env.get(n)))
        if not differs and launcher == run.launcher:
            continue  # the same outcome as the main run
        key = (launcher, differs)
        names = alike.setdefault(key, [])
        if run.entry.name not in names:
            names.append(run.entry.name)
        runs = seen.setdefault(key, [])
        if len(runs) >= SAMPLES:
            continue
        env = facts.envs.env_of(group.call, run.entry, run.point, run.node, run.label)
        result = facts.evaluate(launcher, env)
        pr = PathRun(group, launcher, run.node, run.label, env, result, run.entry, run.point, run, differs)
        runs.append(pr)
    for key, runs in seen.items():
        out.extend(PathRun(r.group, r.launcher, r.node, r.label, r.env, r.result, r.entry, r.point, r.main,
                           r.differs, tuple(alike[key])) for r in runs)
    return out


def _relevant(result: Result) -> frozenset[str]:
    """The variables a result depends on: those that decided a branch or a path, and those
    it read (an unset one may fail the job on another path)."""
    return result.relevant | result.read_names
