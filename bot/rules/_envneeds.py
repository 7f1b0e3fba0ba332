"""What env-not-passed looks at: outcomes of runs, the variables a script needs, and where
a variable is set in a workflow path. Shared analysis, memoized in ``facts.memo``."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass

from bot.repo.facts import Facts, Run
from bot.repo.files import parsed
from bot.repo.workflows.wfcalls import EnvVar, LauncherCall
from bot.shell.analysis.needs import Need
from bot.shell.evaluator.evaluate import Result
from bot.shell.evaluator.state import Exited, Handed, Read
from bot.shell.ir.values import Val, known

FAILS = ("guard", "check", "nounset")  # reads of an unset variable that end the job


@dataclass(frozen=True)
class Outcome:
    """What a run does, as far as a job's result goes: the scripts it runs (None: a target we
    cannot name), or where it exits before running any."""

    runs: frozenset[str | None]
    exits: tuple[tuple[str, int], ...] = ()

    def text(self, facts: Facts) -> str:
        if not self.runs:
            if self.exits:
                path, line = self.exits[0]
                return f"the job fails (the launcher exits at {path.rsplit('/', 1)[-1]}:{line})"
            return "nothing runs"
        names = sorted(s or "an unknown script" for s in self.runs)
        shown = ", ".join(f"{s} (which does not exist)" if s and not facts.tree.is_file(s) else s for s in names)
        return f"it runs {shown}"


def outcome(result: Result) -> Outcome:
    targets = frozenset(known(d.target) for d in result.dispatches())
    if targets:
        return Outcome(targets)
    exits = list(dict.fromkeys((e.loc.path, e.loc.line) for p in result.paths if p.exited
                               for e in p.events if isinstance(e, Exited)))
    # an exit at a read of an unset variable first: the one the env decides (not ``exit 1``
    # after a failed allocation, which every env shares)
    failing = {(r.loc.path, r.loc.line) for r in result.reads() if r.kind in FAILS}
    exits.sort(key=lambda e: e not in failing)
    return Outcome(frozenset(), tuple(exits))


def reads(result: Result | None) -> list[Read]:
    return result.reads() if result is not None else []


def script_needs(facts: Facts, script: str) -> list[Need]:
    return parsed.needs(facts, script)


def is_runner_set(facts: Facts, name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in facts.profile.unknown_env)


@dataclass(frozen=True)
class Missing:
    """A variable a dispatched script needs that does not reach it."""

    need: Need
    script: str
    handed: Handed
    in_env: bool  # the launcher had it (so the container boundary drops it)


def missing_needs(facts: Facts, result: Result | None, env: Mapping[str, Val]) -> list[Missing]:
    """Variables the scripts a run dispatches need (``bot.shell.analysis.needs``) that do not reach
    them: not crossing a docker ``-e`` / ``srun --export`` list, or not set at all."""
    if result is None:
        return []
    out: list[Missing] = []
    for h in result.handed():
        script = known(h.target)
        if not script or not facts.tree.is_file(script) or not h.complete:
            continue
        if h.inherit_all:
            # an input the launcher changed is dropped as an input but handed with its new value
            visible = (set(env) - set(h.dropped)) | {k for k, _ in h.env}
        else:
            visible = {k for k, _ in h.env} | set(h.inherited)
        for need in script_needs(facts, script):
            if need.name in visible or is_runner_set(facts, need.name):
                continue
            out.append(Missing(need, script, h, need.name in env))
    return out


def where_set(call: LauncherCall, name: str) -> EnvVar | None:
    return call.env.get(name)


def main_reads_unset(run: Run, env: Mapping[str, Val]) -> list[Read]:
    """Reads that end the job (a guard, an env check, ``set -u``) of variables the env lacks."""
    return [r for r in reads(run.result) if r.kind in FAILS and r.name not in env]
