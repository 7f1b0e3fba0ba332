"""Which head a ``/bench`` may run: the one the commenter saw, never one pushed after.

A command is bound to a commit in one of two ways (pure functions; :mod:`bot.github.benchrun`
reads the timeline, the workflow runs and the pull request):

1. **Named**: ``/bench mi325x @5ca31cc``. The prefix (7 to 40 hex digits) must match the pull
   request's head when the bot acts; otherwise nothing runs. This is the way to approve a head,
   and the review's summary comment shows the command with the head it checked.
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


def bind(head_sha: str, named: str | None, comment_at: float, events: Sequence[TimelineEvent] | None,
         retry: str, *, runs: Sequence[RunInfo] | None = (), head_repo: str = "",
         head_ref: str = "") -> Binding:
    """``retry``: the command with ``@<sha>`` to suggest (markdown, already inert). ``runs``: the
    workflow runs for ``head_sha`` (None: they could not be read); ``head_repo`` (owner/name) and
    ``head_ref``: the pull request's head repository and branch, which a run must match."""
    short = head_sha[:12]
    if named is not None:
        if head_sha.lower().startswith(named.lower()):
            return Binding(head_sha, "named")
        return Binding(None, f"the command names `{named}`, but the pull request's head is `{short}`; nothing "
                             f"was run. To run the current head, comment {retry}.")
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
