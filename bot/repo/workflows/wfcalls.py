"""What the workflows half of the chain gives (:mod:`bot.repo.workflows.workflows` reads them): the
launcher calls, each with the env the launcher starts with and the way it is reached, and
the errors of the workflows that could not be read."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.repo.workflows import ghexpr as gx


@dataclass(frozen=True)
class EnvVar:
    """One variable of a launcher's env: its value (a template over the outermost caller's
    contexts) and where it is set."""

    name: str
    value: gx.Template
    path: str
    line: int
    origin: str  # "workflow", "job", "step", "run" (an export in the step's script), "github-env"
    inputs: tuple[str, ...] = ()  # the workflow inputs its value was written with (``inputs.x``)


@dataclass(frozen=True)
class Hop:
    """One workflow on the way to the launcher step: the file, the job, the line of the job
    (a caller's job is the one with ``uses:``)."""

    path: str
    job: str
    line: int


@dataclass(frozen=True)
class LauncherCall:
    """A launcher run by one step, reached one way (through the callers in ``chain``)."""

    chain: tuple[Hop, ...]  # outermost caller first; the last hop holds the step
    step: str  # the step's name (or its index)
    path: str  # the workflow file of the step
    line: int  # the line of the launcher command
    launcher: str | None  # a literal launcher path; None: the node's launcher (``${RUNNER_NAME%%_*}``)
    env: Mapping[str, EnvVar]
    # What the matrix stands for: "generated" (a generator's JSON output: the config entries),
    # "literal" (a matrix or env of its own: one run, not a config entry), "external" (a
    # reusable workflow that no file of the repo calls: its caller is outside, e.g. another repo).
    entries: str
    matrix: tuple[str, ...] = ()  # the context path naming an entry's generated fields, ("matrix", "config")
    runner: gx.Template = ()  # runs-on of the outermost job
    templates: tuple[str, ...] = ()  # every workflow file on the way (for the profile's single/multi split)
    triggers: tuple[str, ...] = ()  # the outermost workflow's events
    # input -> (file, line) where the innermost caller passes it (``with:``)
    passed: Mapping[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """How messages name the path: ``run-sweep.yml › benchmark-single → benchmark-tmpl.yml › benchmark``."""
        hops = " → ".join(f"{posixpath.basename(h.path)} › {h.job}" for h in self.chain)
        return f"{hops} › {self.step}" if self.step else hops

    def sets(self, name: str) -> bool:
        return name in self.env


@dataclass
class Workflows:
    calls: list[LauncherCall] = field(default_factory=list)
    errors: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, message)
    files: dict[str, Any] = field(default_factory=dict)  # path -> the loaded document (YMap)
    truncated: bool = False  # MAX_CALLS or MAX_WORK reached
    work: int = 0  # caller chains walked
    made: int = 0  # calls made through the chains (bounded by MAX_CALLS)
