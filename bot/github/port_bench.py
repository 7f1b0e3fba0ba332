"""The GitHub operations of the bench handlers, as a Protocol that :class:`bot.github.port.Port` extends."""

from __future__ import annotations

from typing import Protocol


class BenchPort(Protocol):
    pass
