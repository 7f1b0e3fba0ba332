"""The bot's hidden markers, and the one place that finds them.

Every comment the bot writes starts with its markers (``<!-- benchbot:KIND ARGS -->``, one after
another, nothing before them), and the bot recognises a marker only there, and only on a comment
whose author is the bot. Text from the repository, a pull request or a payload never comes first
in a comment, and the markdown layer (:mod:`bot.report.markdown`) makes ``<!--`` and ``-->`` in it
inert wherever it lands, code spans and fenced blocks included: a runner label, a run name or a
file name holding ``<!-- benchbot:summary -->`` is shown, never obeyed.
"""

from __future__ import annotations

import re

# A marker's arguments: fingerprints, SHAs, ids, run names, urlsafe base64 titles
_ONE = r"<!-- benchbot:[a-z]+(?:-[a-z]+)*(?: [A-Za-z0-9_.=-]+)* -->"
_HEAD = re.compile(f"(?:{_ONE})+")


def head(body: str) -> str:
    """The markers at the very start of ``body`` (empty when it does not start with one)."""
    m = _HEAD.match(body)
    return m.group(0) if m else ""


def has(body: str, marker: str) -> bool:
    """Whether ``marker`` (a whole marker) is among ``body``'s leading markers."""
    return marker in head(body)


def search(pattern: re.Pattern[str], body: str) -> re.Match[str] | None:
    """``pattern`` among ``body``'s leading markers."""
    return pattern.search(head(body))


def split(body: str) -> tuple[str, str]:
    """(the leading markers, the rest)."""
    h = head(body)
    return h, body[len(h):]
