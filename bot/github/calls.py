"""Library and transport errors as :class:`bot.github.port.GitHubError`, for every adapter module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import requests
from github import GithubException

from bot.github.port import GitHubError


@contextmanager
def call(operation: str) -> Iterator[None]:
    """Turn library and transport errors into :class:`GitHubError`."""
    try:
        yield
    except GithubException as exc:
        message = exc.data.get("message") if isinstance(exc.data, dict) else None
        raise GitHubError(exc.status, str(message or exc.data or "error"), operation) from None
    except requests.exceptions.RetryError as exc:
        raise GitHubError(0, f"gave up after retries ({_reason(exc)})", operation) from None
    except requests.exceptions.RequestException as exc:
        raise GitHubError(0, f"no response ({_reason(exc)})", operation) from None


def _reason(exc: Exception) -> str:
    inner = exc.args[0] if exc.args else exc
    return str(getattr(inner, "reason", inner))
