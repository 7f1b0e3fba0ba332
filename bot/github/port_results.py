"""The GitHub operations of the results handler (:mod:`bot.github.results`), as a Protocol that
:class:`bot.github.port.Port` extends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Artifact:
    """One artifact of a workflow run (GET /actions/runs/{id}/artifacts)."""

    id: int
    name: str
    size: int  # size_in_bytes, as GitHub says (the zip is checked again while downloading)
    expired: bool


class TooLarge(Exception):
    """A download went over its byte limit (it was stopped there)."""


class ResultsPort(Protocol):
    def run_artifacts(self, run_id: int, limit: int) -> list[Artifact]:
        """The run's artifacts, at most ``limit`` (the first ones in the API's order)."""
        ...

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        """The artifact's zip (GET /actions/artifacts/{id}/zip, following its redirect); raises
        :class:`TooLarge` past ``max_bytes`` without reading the rest."""
        ...

    def open_pulls(self, limit: int) -> list[int]:
        """Numbers of the open pull requests, most recently updated first, at most ``limit``."""
        ...
