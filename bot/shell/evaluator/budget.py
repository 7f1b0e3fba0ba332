"""The budget of one evaluation: steps, a wall-clock deadline, bytes per value, depth.

A launcher from a pull request is untrusted input: ``f() { f; f; f; }; f``,
``X=$X$X`` 32 times or ``printf '%2000000000s'`` must not hang the linter or eat the
runner's memory. Every statement and word the evaluator executes is a *step*; a glob or
regex match costs steps in proportion to its text. Running out of steps or time ends
the evaluation (``BudgetExceeded``); a value over the byte limit, a depth limit or an
arithmetic cap only makes that value or call unknown and is recorded (``Budget.hits``).
Either way the result says so, and the rules report a ``dispatch-bound`` finding.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

# Defaults (the profile may change them within the hard maxima below).
MAX_STEPS = 1_000_000
MAX_SECONDS = 2.0
MAX_VALUE = 64 * 1024
# Hard maxima: no configuration raises a budget past these.
HARD_MAX_STEPS = 50_000_000
HARD_MAX_SECONDS = 60.0
HARD_MAX_VALUE = 16 * 1024 * 1024
_CHECK_EVERY = 256  # steps between two looks at the clock


@dataclass(frozen=True)
class BudgetHit:
    """Where a budget ran out and which one (``what``: "step budget", "deadline",
    "value over 64 KB", "source depth", "eval depth", "bash -c depth", "call depth",
    "arithmetic beyond 64 bits", "printf width", "nesting depth", ...)."""

    what: str
    path: str
    line: int
    detail: str = ""  # the construct: a command name, a format, an expression
    fatal: bool = False  # the evaluation stopped here (steps, deadline)

    def text(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.what} at {where}" + (f" ({self.detail})" if self.detail else "")


class BudgetExceeded(Exception):
    """The step budget or the deadline ran out: the evaluation stops."""

    def __init__(self, hit: BudgetHit) -> None:
        super().__init__(hit.text())
        self.hit = hit


@dataclass(frozen=True)
class Limits:
    max_steps: int = MAX_STEPS
    max_seconds: float = MAX_SECONDS
    max_value: int = MAX_VALUE

    def clamped(self) -> Limits:
        return Limits(max(1, min(self.max_steps, HARD_MAX_STEPS)),
                      max(0.001, min(self.max_seconds, HARD_MAX_SECONDS)),
                      max(1, min(self.max_value, HARD_MAX_VALUE)))


def size_text(n: int) -> str:
    """64 KB, 16 MB, 100 bytes."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


class Budget:
    """Counts steps and watches the clock for one evaluation."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = (limits or Limits()).clamped()
        self.clock = clock
        self.steps = 0
        self.hits: list[BudgetHit] = []
        self._deadline = clock() + self.limits.max_seconds
        self._next_check = min(_CHECK_EVERY, self.limits.max_steps)

    @property
    def value_limit(self) -> int:
        return self.limits.max_value

    def value_what(self) -> str:
        return f"value over {size_text(self.limits.max_value)}"

    def step(self, path: str, line: int, detail: str = "", n: int = 1) -> None:
        """Count ``n`` steps at a place; raises ``BudgetExceeded`` when steps or time run out."""
        self.steps += n
        if self.steps >= self._next_check:
            self._check(path, line, detail)

    def _check(self, path: str, line: int, detail: str) -> None:
        if self.steps > self.limits.max_steps:
            raise BudgetExceeded(BudgetHit(f"step budget ({self.limits.max_steps:,} steps)", path, line, detail,
                                           True))
        if self.clock() > self._deadline:
            raise BudgetExceeded(BudgetHit(f"deadline ({self.limits.max_seconds:g} s)", path, line, detail, True))
        self._next_check = min(self.steps + _CHECK_EVERY, self.limits.max_steps + 1)

    def hit(self, what: str, path: str, line: int, detail: str = "") -> None:
        """Record a limit that made a value or a call unknown (the evaluation goes on)."""
        h = BudgetHit(what, path, line, detail[:80])
        if h not in self.hits and len(self.hits) < 100:
            self.hits.append(h)
