"""A run: one (entry, search-space point, launcher) resolved to what it dispatches, the record
``bot.repo.facts.gather`` fills ``Facts.runs`` with, below Facts so that the gatherers and the
rules can name it without importing Facts."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.repo.load.configs import Entry, Point
from bot.shell.evaluator.budget import BudgetHit
from bot.shell.evaluator.evaluate import Dispatch, Loc, Ran, Result


@dataclass(frozen=True)
class Run:
    """One (entry, point, launcher) resolved to what it dispatches."""

    entry: Entry
    point: Point
    label: str
    node: str
    launcher: str  # the launcher path the workflow runs
    real: str  # the file that path resolves to (links followed)
    dispatches: tuple[Dispatch, ...]
    exits_early: bool  # every path exits before dispatching anything
    bound_hit: bool
    exits: tuple[Loc, ...] = ()  # where paths that dispatch nothing end with ``exit``
    handoffs: tuple[Ran, ...] = ()  # external job tools the launcher runs (srtctl)
    copies: tuple[Ran, ...] = ()  # ``cp`` commands on the same paths (recipes into the tool's checkout)
    # Budgets the evaluation ran out of (bot.shell.evaluator.budget): with a fatal one (steps,
    # deadline) ``dispatches`` is empty and what the entry runs is unknown.
    budget_hits: tuple[BudgetHit, ...] = ()
    result: Result | None = field(default=None, compare=False, repr=False)  # the evaluation (reads, hand-offs)
