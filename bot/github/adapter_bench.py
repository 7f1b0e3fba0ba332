"""PyGithub calls of the bench port (:class:`bot.github.port_bench.BenchPort`), mixed into
:class:`bot.github.adapter.PyGithubPort`."""

from __future__ import annotations

from typing import Any


class BenchAdapter:
    repo: Any  # the PyGithub Repository (set by PyGithubPort)
    gh: Any  # the PyGithub client
