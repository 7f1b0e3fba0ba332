"""Output formats. Each renders findings and stats to a string; only the CLI prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stats:
    files: int
    entries: int
    launchers: int
    scripts: int
    seconds: float
