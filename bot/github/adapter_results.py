"""PyGithub calls of the results port (:class:`bot.github.port_results.ResultsPort`), mixed into
:class:`bot.github.adapter.PyGithubPort`."""

from __future__ import annotations

from typing import Any


class ResultsAdapter:
    repo: Any  # the PyGithub Repository (set by PyGithubPort)
    gh: Any  # the PyGithub client
