"""What an evaluation takes and gives: Options, FileSystem, Result, and the command tables."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from bot.shell.evaluator.budget import BudgetHit, Limits
from bot.shell.evaluator.state import Dispatch, Event, Exited, Handed, Ran, Read, Served, Sourced, Wrote
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val

SHELLS = frozenset({"bash", "sh", "dash", "zsh"})
# Commands that run their argument command (options first).
PREFIX_COMMANDS = frozenset(
    {"exec", "command", "nohup", "time", "sudo", "stdbuf", "nice", "setsid", "env", "timeout",
     "taskset", "numactl", "flock", "xargs", "chrt", "ionice", "unbuffer", "caffeinate"}
)
# Commands that run a command somewhere else (a container, a cluster node).
DEFAULT_WRAPPERS = frozenset(
    {"srun", "salloc", "sbatch", "docker", "podman", "enroot", "apptainer", "singularity",
     "mpirun", "torchrun", "ssh", "kubectl", "pdsh", "parallel"}
)
_PURE_OUTPUT = frozenset({"echo", "printf"})
MAX_ROUNDS = 8  # merges of the paths a path may outlive before it is merged itself

_STRING_CACHE: dict[tuple[str, str], ir.Script] = {}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


# What a sink test says of a command: (kind, index of its first argument), or, for a function
# that runs a command it finds in a variable, (kind, 1, that variable's name): the command
# recorded is then the variable's value, split into words as ``$VAR`` would be.
Sink = tuple[str, int] | tuple[str, int, str]


@dataclass(frozen=True)
class PathResult:
    events: tuple[Event, ...]
    exited: bool

    @property
    def exit_at(self) -> Exited | None:
        ends = [e for e in self.events if isinstance(e, Exited)]
        return ends[-1] if self.exited and ends else None


@dataclass
class Result:
    paths: list[PathResult]
    bound_hit: bool = False
    # Environment variables that influenced a branch, a loop or a dispatched path: two
    # environments that agree on these give the same result.
    relevant: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    # Budgets that ran out (``bot.shell.evaluator.budget``): a fatal one (steps, deadline) ended the
    # evaluation, and ``paths`` is then empty: what the script runs is unknown.
    budget_hits: tuple[BudgetHit, ...] = ()
    # Environment variables whose being unset, empty or non-empty (not their value) decided a
    # path (a read under ``set -u``, an env check; with ``Options.record_reads`` every read
    # with no default): a result stays right for an env that agrees on these three states.
    presence: frozenset[str] = frozenset()

    @property
    def stopped(self) -> BudgetHit | None:
        return next((h for h in self.budget_hits if h.fatal), None)

    def dispatches(self) -> list[Dispatch]:
        seen: dict[Dispatch, None] = {}
        for p in self.paths:
            for e in p.events:
                if isinstance(e, Dispatch):
                    seen.setdefault(e)
        return list(seen)

    def ran(self) -> list[Ran]:
        return list(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Ran)))

    def reads(self) -> list[Read]:
        return list(self._reads)

    @cached_property
    def _reads(self) -> tuple[Read, ...]:  # a result is not changed once made
        return tuple(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Read)))

    @cached_property
    def read_names(self) -> frozenset[str]:
        """The names of the variables the result reads (``reads``)."""
        return frozenset(r.name for r in self._reads)

    def served(self) -> list[Served]:
        return list(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Served)))

    def handed(self) -> list[Handed]:
        return list(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Handed)))

    def wrote(self) -> list[Wrote]:
        return list(dict.fromkeys(e for p in self.paths for e in p.events if isinstance(e, Wrote)))

    def sourced(self) -> list[Sourced]:
        seen: dict[Sourced, None] = {}
        for p in self.paths:
            for e in p.events:
                if isinstance(e, Sourced):
                    seen.setdefault(e)
        return list(seen)


class FileSystem:
    """What the evaluator may ask about the repository (answered from a tree)."""

    def is_file(self, path: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def is_dir(self, path: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def script(self, path: str) -> ir.Script | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class Options:
    max_paths: int = 32
    max_depth: int = 12
    max_loop: int = 16
    wrappers: frozenset[str] = DEFAULT_WRAPPERS
    # Absolute prefixes that mean "the repository root" (the checkout, a container mount).
    workspace_aliases: tuple[str, ...] = ("/workspace/", "/github/workspace/")
    parse: Callable[[str, bytes], ir.Script] | None = None
    # Dispatched repo scripts to evaluate as children (e.g. a launcher that execs another).
    follow: Callable[[str], bool] | None = None
    # Scan mode: every branch is taken, in sequence, on one path (finds every reference).
    linear: bool = False
    # Evaluate sourced files inline (off when scanning: each file is scanned on its own).
    descend_source: bool = True
    # Treat variables that are not set as unknown (scanning a script with no entry env).
    unset_is_unknown: bool = False
    # Variables the runner sets with values we cannot know (HOME, USER, ...).
    unknown_names: Callable[[str], bool] | None = None
    # Commands whose runs are recorded as ``Ran`` events (external job tools, ``cp``).
    observe: frozenset[str] = frozenset()
    # Steps, deadline and bytes per value of one evaluation (``bot.shell.evaluator.budget``).
    limits: Limits = field(default_factory=Limits)
    # Commands to record as ``Served`` events (``bot.shell.evaluator.serving``): called with the words of
    # every external command and function call, returns a ``Sink`` or None. Also turns on arrays
    # by element, ``Wrote`` and ``Handed`` events.
    sinks: Callable[[list[Val]], Sink | None] | None = None
    # Sink kinds that end their path once recorded (``client``: what a script does after its
    # benchmark client, evaluations and cleanup, starts nothing the serve model needs).
    stop_after: frozenset[str] = frozenset()
    # Steps the evaluation may go on once a server sink is recorded (0: no limit). What a
    # script does long after starting its server (eval harnesses, artifact uploads) cannot
    # change the server; the evaluation ends there, keeping what the sinks recorded.
    after_sink_steps: int = 0
    # Record ``Read`` events: variables read with no default that are not set on the path.
    record_reads: bool = False
    # Commands or functions whose arguments name variables that must be set and non-empty
    # (``check_env_vars MODEL TP``): one that is not ends the path with an error exit.
    env_checks: frozenset[str] = frozenset()
    # Record ``Handed`` events without ``sinks`` (lint: what crosses a container boundary).
    handoffs: bool = False
    # Skip the statements nothing recorded can depend on (``bot.shell.evaluator.slicing``).
    slice: bool = True
