"""Exactly once on a pull request, under redelivered events and concurrent runs.

GitHub offers no compare-and-swap on comments, but it numbers comments in the order it creates
them, and a run that re-reads the list after its own comment landed sees every comment created
before it. So among comments of one kind, **the lowest id wins**, and every run agrees which that is.

- **The summary** (:func:`write_summary`): the living summary is the bot's oldest comment with the
  summary marker. A run that finds none creates one, re-reads, and if another run's came first,
  deletes its own and edits the older one. Every run deletes the other extras (a race's, or ones
  older versions of benchbot left): deleted rather than edited into a pointer, so that exactly one
  comment carries the marker, nothing stale is left to read, and nothing needs a second edit later.
- **The claim on a head** (:func:`take`): a review and its replies cannot be posted again, so
  before posting them a run posts a claim (a hidden marker with the head and the run), re-reads,
  and the lowest live claim on that head holds it. A loser deletes its claim and writes nothing:
  the holder does the same work for the same head. The holder re-reads the review comments under
  the claim (fingerprints already posted are skipped), posts, and deletes the claim. A claim is
  only made when there is something to post, so a run with nothing new posts no claim. Dead
  claims (older than :data:`STALE`, longer than a review job may run, or of an earlier attempt
  of the same workflow run) bind nobody and are deleted: a killed run does not block a head.

Nothing here decides what to say; :mod:`bot.github.review` does.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from bot.github import markers
from bot.github.port import Comment, Port
from bot.github.review import SUMMARY_MARKER, own

STALE = 30 * 60.0  # seconds; the review workflow's job times out after 15 minutes
_CLAIM = re.compile(r"<!-- benchbot:claim ([0-9a-f]{7,64}) run ([A-Za-z0-9_.-]{1,64}) -->")
_RUN = re.compile(r"[^A-Za-z0-9_.-]")


def run_name(env: Mapping[str, str]) -> str:
    """This run's name in claims: the workflow run id and attempt from Actions
    (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT), else a random one."""
    run_id = _RUN.sub("", env.get("GITHUB_RUN_ID", ""))[:40]
    if not run_id:
        return "local-" + uuid.uuid4().hex[:12]
    attempt = _RUN.sub("", env.get("GITHUB_RUN_ATTEMPT", "")).replace(".", "")[:8] or "1"
    return f"{run_id}.{attempt}"


def claim_marker(head_sha: str, run: str) -> str:
    return f"<!-- benchbot:claim {head_sha} run {run} -->"


@dataclass(frozen=True)
class Claim:
    id: int
    head_sha: str
    run: str
    at: float  # the server's created_at, POSIX seconds


def claims(comments: list[Comment], bot_login: str) -> list[Claim]:
    """The bot's claim comments, oldest first."""
    out = []
    for c in sorted(comments, key=lambda c: c.id):
        m = markers.search(_CLAIM, c.body) if own(c.author, bot_login) else None
        if m:
            out.append(Claim(c.id, m.group(1), m.group(2), c.created_at))
    return out


def _attempt(run: str) -> tuple[str, int]:
    name, _, attempt = run.rpartition(".")
    return (name, int(attempt)) if name and attempt.isdigit() else (run, 0)


def dead(c: Claim, mine: Claim) -> bool:
    """Seen from ``mine``: a claim nobody works under any more."""
    if c.id == mine.id:
        return False
    run, attempt = _attempt(c.run)
    my_run, my_attempt = _attempt(mine.run)
    if run == my_run and attempt < my_attempt:
        return True  # a re-run: the earlier attempt has ended
    return bool(c.at and mine.at and mine.at - c.at > STALE)


def holder(comments: list[Comment], bot_login: str, mine: Claim) -> Claim:
    """Who holds ``mine.head_sha``: the lowest live claim on it."""
    live = [c for c in claims(comments, bot_login) if c.head_sha == mine.head_sha and not dead(c, mine)]
    return min(live, key=lambda c: c.id, default=mine)


@dataclass(frozen=True)
class Taken:
    held: Claim | None  # ours: act, then release(); None: another run holds the head
    holder: Claim | None  # who holds it
    comments: list[Comment]  # the conversation as re-read after claiming


def take(port: Port, number: int, bot_login: str, head_sha: str, run: str) -> Taken:
    """Claim ``head_sha`` for this run. Posts one comment and deletes it again if it lost."""
    body = (f"{claim_marker(head_sha, run)}\nbenchbot is posting its review of `{head_sha[:12]}`; "
            "this comment goes away when it is done.")
    created = port.create_issue_comment(number, body)
    comments = port.issue_comments(number)
    found = [c for c in claims(comments, bot_login) if c.id == created.id]
    if not found:  # our claim is gone already (deleted by hand): hold nothing
        return Taken(None, None, comments)
    mine = found[0]
    for c in claims(comments, bot_login):
        if dead(c, mine):
            port.delete_issue_comment(c.id)
    first = holder(comments, bot_login, mine)
    if first.id != mine.id:
        port.delete_issue_comment(mine.id)
        return Taken(None, first, comments)
    return Taken(mine, mine, comments)


def release(port: Port, claim: Claim) -> None:
    port.delete_issue_comment(claim.id)


def summaries(comments: list[Comment], bot_login: str) -> list[Comment]:
    """The bot's summary comments, oldest (the living one) first."""
    return sorted((c for c in comments if own(c.author, bot_login) and markers.has(c.body, SUMMARY_MARKER)),
                  key=lambda c: c.id)


def write_summary(port: Port, number: int, bot_login: str, body: str, comments: list[Comment]) -> str:
    """Make the living summary say ``body`` (``comments``: the conversation as last read) and fold
    every other summary of the bot's into it; returns what was done, for the log."""
    mine = summaries(comments, bot_login)
    created: Comment | None = None
    if not mine:
        created = port.create_issue_comment(number, body)
        mine = summaries(port.issue_comments(number), bot_login) or [created]
    living = mine[0]
    if created is not None and living.id == created.id:
        done = f"posted the summary comment {living.id}"
    else:
        if created is not None:
            port.delete_issue_comment(created.id)  # another run's came first: it is the one
        if living.body.strip() != body.strip():
            port.edit_issue_comment(living.id, body)
            done = f"updated the summary comment {living.id}"
        else:
            done = f"the summary comment {living.id} is up to date"
    extras = [c for c in mine[1:] if created is None or c.id != created.id]
    for c in extras:
        port.delete_issue_comment(c.id)
    if extras:
        ids = ", ".join(str(c.id) for c in extras)
        done += f"; deleted {len(extras)} duplicate{'s' if len(extras) > 1 else ''} ({ids})"
    return done
