"""Exactly one answer per command, under redelivery and concurrency: claim first, then act.

Every answer to a command comment is one reply carrying ``<!-- benchbot:reply <comment id> -->``.
The bot **claims** the comment by creating that reply first (with ``<!-- benchbot:claim <id> -->``
and "working on it"), then re-reads the conversation: among the bot's replies carrying the
comment's reply marker the lowest comment id wins. A loser deletes its own claim and only logs;
the winner acts and then edits its claim into the answer (which drops the claim marker).

The key is the command comment's id, or, for the label trigger (:mod:`bot.github.labels`),
``label-<id>`` with the id of the timeline's ``labeled`` event: one answer per labelling, under
the same rules (the ``-->`` of a marker cannot be forged by a key: both kinds are digits after a
fixed prefix).

Before claiming, the state of earlier replies decides:

- an answer (reply marker, no claim marker): a redelivery; nothing is done.
- a claim younger than :data:`STALE_SECONDS` (longer than the commands job may run): another run
  is working on it; nothing is done (logged).
- an older claim: the run that made it died between claiming and answering. Nothing is
  dispatched again. If the claim says a dispatch was under way (``<!-- benchbot:dispatching ... -->``,
  written right before the dispatch) and the bot's 🚀 is on the comment or the run can be found,
  the claim is completed as dispatched; otherwise it is completed as interrupted (😕, "comment
  again to retry"). A claim never stays "working" after a later run of the bot sees it.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from bot.github import markers
from bot.github.port import Comment, Port
from bot.github.review import own

STALE_SECONDS = 15 * 60  # the commands job's timeout-minutes (10) plus margin
WORKING = "\u23f3 Working on it\u2026"
_DISPATCHING = re.compile(r"<!-- benchbot:dispatching ([A-Za-z0-9_=-]*) -->")


def reply_marker(comment_id: int | str) -> str:
    return f"<!-- benchbot:reply {comment_id} -->"


def claim_marker(comment_id: int | str) -> str:
    return f"<!-- benchbot:claim {comment_id} -->"


def _titled(kind: str, title: str) -> str:
    return f"<!-- benchbot:{kind} {base64.urlsafe_b64encode(title.encode()).decode()} -->"


def _title(pattern: re.Pattern[str], body: str) -> str | None:
    m = markers.search(pattern, body)
    if m is None:
        return None
    try:
        return base64.urlsafe_b64decode(m[1].encode()).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def dispatching_marker(title: str) -> str:
    return _titled("dispatching", title)


def dispatching_title(body: str) -> str | None:
    return _title(_DISPATCHING, body)


_RUN = re.compile(r"<!-- benchbot:run ([A-Za-z0-9_=-]*) -->")


def run_marker(title: str) -> str:
    """On a dispatch's final answer: the title of the run it started (the workflow_run handler
    finds the answer to edit by it)."""
    return _titled("run", title)


def run_title(body: str) -> str | None:
    return _title(_RUN, body)


@dataclass(frozen=True)
class State:
    answered: Comment | None = None
    claim: Comment | None = None  # the lowest open claim


def state(comments: list[Comment], comment_id: int | str, me: str) -> State:
    marker, claim = reply_marker(comment_id), claim_marker(comment_id)
    ours = sorted((c for c in comments if own(c.author, me) and markers.has(c.body, marker)), key=lambda c: c.id)
    answered = next((c for c in ours if not markers.has(c.body, claim)), None)
    if answered is not None:
        return State(answered=answered)
    return State(claim=ours[0] if ours else None)


def take(port: Port, number: int, comment_id: int | str, me: str) -> Comment | None:
    """Create a claim and keep it if it is the lowest; else delete it and return None."""
    mine = port.create_issue_comment(number, f"{reply_marker(comment_id)}{claim_marker(comment_id)}\n{WORKING}")
    marker = reply_marker(comment_id)
    ids = {c.id for c in port.issue_comments(number) if own(c.author, me) and markers.has(c.body, marker)}
    ids.add(mine.id)
    if min(ids) != mine.id:
        port.delete_issue_comment(mine.id)
        return None
    return mine
