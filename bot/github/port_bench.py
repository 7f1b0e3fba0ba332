"""The GitHub operations of the bench handlers, as a Protocol that :class:`bot.github.port.Port` extends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

ACTIVE = frozenset({"queued", "in_progress", "waiting", "requested", "pending"})  # a run cancel can still stop


@dataclass(frozen=True)
class BenchRun:
    """A workflow_dispatch run of the benchmark workflow (GET /actions/workflows/{w}/runs)."""

    id: int
    title: str  # display_title: the run-name the dispatch set
    status: str  # queued, in_progress, completed, ...
    conclusion: str | None
    html_url: str

    @property
    def active(self) -> bool:
        return self.status in ACTIVE


class BenchPort(Protocol):
    def bench_runs(self, workflow: str, titles: frozenset[str], limit: int) -> list[BenchRun]:
        """The workflow_dispatch runs of ``workflow`` whose title is one of ``titles``, newest first,
        among the newest ``limit`` runs."""
        ...

    def cancel_run(self, run_id: int) -> bool:
        """POST /actions/runs/{id}/cancel: True if GitHub took it, False if the run had finished
        (409); repeating it after a lost answer is harmless."""
        ...

    def remove_label(self, number: int, name: str) -> None:
        """DELETE /issues/{n}/labels/{name}; a label already gone (404) is not an error."""
        ...
