"""Which head a ``/bench`` may run: the one the commenter saw, never one pushed after.

A command is bound to a commit in one of two ways (pure functions; :mod:`bot.github.benchrun`
reads the timeline, the workflow runs and the pull request):

1. **Named**: ``/bench mi325x @<sha>``. The full 40-digit SHA of the pull request's head binds by
   itself: this is the way to approve a head, and the review's summary comment and every refusal
   show the command with the full SHA. A shorter prefix names a commit only together with proof:
   it must have at least :data:`MIN_PREFIX` hex digits, name no other commit the bot knows of
   this pull request (its timeline's commits, force pushes and the head's workflow runs), and the
   server-time proof of form 2 must hold. A prefix is not an identity: a lookalike commit with the
   same 28-bit (7-digit) prefix takes minutes to make, so an author could push one right after a
   maintainer's ``/bench ... @5ca31cc``; with the proof, a head pushed after the comment never
   binds, and 48 bits put a lookalike made in advance out of reach. Under 12 digits nothing binds.
2. **Proven from server times**: the bot runs the current head H without a named SHA only if
   GitHub's own clocks prove H was the head when the comment was written (its ``created_at``).
   Commit dates never count (an author sets them). Two sources say "the head became S at time t":

   - the timeline's ``head_ref_force_pushed`` events (``commit_id`` S; the other head-moving
     kinds, such as ``head_ref_restored``, move the head to a commit the bot does not know);
   - the repository's workflow runs for H (``GET /actions/runs?head_sha=H``, the newest
     :data:`MAX_RUNS` in the API's order, newest first): a run with event ``pull_request`` or
     ``pull_request_target`` whose head branch and head repository are this pull request's
     (a run for H from another branch or fork says nothing about this one), at its server-set
     ``created_at``. The review workflow runs on every push to a PR, so a plain push, which the
     timeline records only as a ``committed`` event without a server time, gets one within seconds.

   The rule, at whole seconds (evidence in the comment's own second counts as after it): refuse
   if any evidence (a force push, or a run for this branch) is at or after the comment; otherwise
   bind H only if the latest evidence before the comment sets the head to H (evidence of two heads
   in the same second is refused). Why that is enough: a push the bot cannot see (no run, as when
   the pull request edits the review workflow away) can only fast-forward, and a fast-forward never
   returns to a commit the head already had; returning to H takes a force push, which the timeline
   always records. So when the head is still H, nothing moved it between the proof and the bot.

   A run is created a little after the push it reports, so a run for H proves only that H was the
   head at some moment within :data:`RUN_LAG` seconds before its ``created_at``. A timeline event
   moving the head elsewhere in that window could have come after the push of H (push H, force-push
   back to A at once, the run for H is created after): then the run does not prove H, and the
   command is refused.

Anything else is refused with the command to type: a push after the comment, a timeline that cannot
be read, a head nothing proves (no force push to it and no run for it: with the runs unreadable,
only the timeline can prove it), or a latest push before the comment to another commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.github.port import RunInfo, TimelineEvent

HEAD_MOVES = frozenset({"head_ref_force_pushed", "head_ref_restored", "head_ref_deleted", "base_ref_force_pushed"})
PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
MIN_PREFIX = 12  # hex digits a named prefix needs (with the server-time proof); 40 bind alone
FULL = 40
MAX_RUNS = 100  # runs read for the head SHA: the API's first page, newest first
RUN_LAG = 300.0  # seconds a run may be created after the push it reports


@dataclass(frozen=True)
class Binding:
    sha: str | None  # the commit to run; None: refused
    how: str  # "named", "timeline" or "run" when bound; else why not (one markdown sentence)


@dataclass(frozen=True)
class Evidence:
    """GitHub's server says the head became ``sha`` (None: a commit not known) at ``at``."""

    at: float
    sha: str | None
    source: str  # "timeline" or "run"


def evidence(events: Sequence[TimelineEvent], runs: Sequence[RunInfo], head_repo: str,
             head_ref: str) -> list[Evidence]:
    """The server-timed head-setting events, oldest first."""
    out = [Evidence(e.at, e.sha if e.kind == "head_ref_force_pushed" else None, "timeline")
           for e in events if e.at is not None and e.kind in HEAD_MOVES]
    if head_repo and head_ref:
        out += [Evidence(r.at, r.head_sha, "run") for r in runs
                if r.event in PR_EVENTS and r.head_branch == head_ref and r.head_repo == head_repo]
    return sorted(out, key=lambda e: e.at)


def needs_proof(named: str | None) -> bool:
    """Whether binding ``named`` reads the timeline and the runs (a full SHA binds alone; a prefix
    under :data:`MIN_PREFIX` digits is refused whatever they say)."""
    return named is None or MIN_PREFIX <= len(named) < FULL


def bind(head_sha: str, named: str | None, comment_at: float, events: Sequence[TimelineEvent] | None,
         retry: str, *, runs: Sequence[RunInfo] | None = (), head_repo: str = "",
         head_ref: str = "") -> Binding:
    """``retry``: the command with ``@<full sha>`` to suggest (markdown, already inert). ``runs``: the
    workflow runs for ``head_sha`` (None: they could not be read); ``head_repo`` (owner/name) and
    ``head_ref``: the pull request's head repository and branch, which a run must match."""
    short = head_sha[:12]
    head = head_sha.lower()
    if named is not None:
        named = named.lower()
        if named == head and len(named) == FULL:
            return Binding(head_sha, "named")
        if not head.startswith(named):
            return Binding(None, f"the command names `{named}`, but the pull request's head is `{short}`; nothing "
                                 f"was run. To run the current head, comment {retry}.")
        if len(named) < MIN_PREFIX:
            return Binding(None, f"`@{named}` has {len(named)} hex digits: another commit with the same short "
                                 "prefix can be made in minutes, so a short SHA binds nothing; nothing was run. "
                                 f"The head is `{short}`: review it and, to run it, comment {retry}.")
        known = {e.sha.lower() for e in events or () if e.sha} | {r.head_sha.lower() for r in runs or ()}
        if any(s != head and s.startswith(named) for s in known):
            return Binding(None, f"`@{named}` names more than one commit of this pull request; nothing was run. "
                                 f"The head is `{short}`: review it and, to run it, comment {retry}.")
    proven = _proof(head_sha, comment_at, events, retry, runs, head_repo, head_ref)
    if proven.sha is None or named is None:
        return proven
    return Binding(head_sha, f"named+{proven.how}")


def _proof(head_sha: str, comment_at: float, events: Sequence[TimelineEvent] | None, retry: str,
           runs: Sequence[RunInfo] | None, head_repo: str, head_ref: str) -> Binding:
    """Form 2: GitHub's server times prove ``head_sha`` was the head when the comment was written."""
    short = head_sha[:12]
    if events is None:
        return Binding(None, "the pull request's timeline could not be read, so the bot cannot tell whether "
                             f"`{short}` is the head you saw. To run it, comment {retry}.")
    timed = evidence(events, runs or (), head_repo, head_ref)
    # GitHub's times have whole seconds: evidence in the comment's own second may be after it
    after = [e for e in timed if e.at >= comment_at]
    if any(e.source == "timeline" for e in after):
        return Binding(None, "the head was force-pushed after your comment, so it is not the commit you saw; "
                             f"nothing was run. Review `{short}` and comment {retry}.")
    if after:
        return Binding(None, "a push to the pull request started a workflow run after your comment, so the head "
                             f"may not be the commit you saw; nothing was run. Review `{short}` and comment {retry}.")
    before = [e for e in timed if e.at < comment_at]
    if not before:
        unread = " (its workflow runs could not be read)" if runs is None else ""
        return Binding(None, f"GitHub records no server time for the push of `{short}`{unread}, so the bot "
                             f"cannot prove it is the head you saw. To run it, comment {retry}.")
    last = before[-1]
    if any(e.at == last.at and e.sha != last.sha for e in before):
        return Binding(None, f"GitHub records two heads in the same second before your comment, so the bot "
                             f"cannot tell whether `{short}` is the head you saw. To run it, comment {retry}.")
    if last.sha != head_sha:
        was = f"`{last.sha[:12]}`" if last.sha else "a commit the bot cannot name"
        return Binding(None, f"the last push GitHub timed before your comment set the head to {was}, not "
                             f"`{short}`; nothing was run. Review `{short}` and comment {retry}.")
    if last.source == "run" and any(e.source == "timeline" and e.sha != head_sha and e.at >= last.at - RUN_LAG
                                    for e in before):
        return Binding(None, f"the head was force-pushed elsewhere shortly before the workflow run for `{short}`, "
                             f"so the run does not prove it is the head you saw. To run it, comment {retry}.")
    return Binding(head_sha, last.source)
