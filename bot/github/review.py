"""What to post on a pull request, as pure functions of findings and what is already there.

Nothing here talks to GitHub: :func:`plan` takes the findings of the PR's head and base,
the PR's changed lines and the bot's existing comments, and returns every write to make.
Every write is idempotent: the bot's comments carry hidden markers (the summary's, and each
inline comment's cause fingerprints) and are recognised by marker AND author, so running
the same event twice posts nothing new.

Inline comments (:mod:`bot.github.inline`): one per root cause, at most one bot comment per
line. Causes that land on one line share one comment; a new cause on a line that already has
the bot's open comment is added to that comment (an edit), not posted beside it. A comment is
resolved when none of its causes is reported any more: one short reply, its body marked
resolved, and its review thread resolved (GraphQL, by the caller).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.findings import Finding
from bot.github import inline, markers
from bot.github.diff import Changes
from bot.github.inline import Anchor, Suggestion, suggestion
from bot.github.plans import Context, Plan, Posted, Resolve, Split, Update
from bot.github.port import ChangedFile, Comment, DraftComment, ReviewComment
from bot.github.summary import MAX_COMMENT, SUMMARY_MARKER, bench_line, failure_summary, summary_body
from bot.newonly import compare
from bot.report import plural

__all__ = ["MAX_COMMENT", "SUMMARY_MARKER", "Anchor", "Suggestion", "bench_line", "failure_summary", "suggestion",
           "anchor", "plan", "split"]

_FINDING_MARKER = re.compile(r"<!-- benchbot:finding ([0-9a-f]{8,64}(?: [0-9a-f]{8,64})*)( resolved)? -->")
_FIXED_MARKER = re.compile(r"<!-- benchbot:fixed (\d+) -->")
MAX_INLINE = 25  # inline comments per run; the rest are in the summary (a flood helps nobody)
anchor = inline.anchor


def finding_marker(fps: Iterable[str] | str, resolved: bool = False) -> str:
    ids = " ".join([fps] if isinstance(fps, str) else sorted(set(fps)))
    return f"<!-- benchbot:finding {ids}{' resolved' if resolved else ''} -->"


def fixed_marker(comment_id: int) -> str:
    return f"<!-- benchbot:fixed {comment_id} -->"




def split(head: list[Finding], base: list[Finding], renames: Mapping[str, str] | None = None) -> Split:
    """New, pre-existing and fixed findings, by stable fingerprint (line numbers move), the base
    mapped through the PR's renames (bot/newonly.py)."""
    return compare(head, base, renames)


def fixed_findings(base: list[Finding], parts: Split, renames: Mapping[str, str] | None = None) -> tuple[Finding, ...]:
    """The base findings behind ``parts.fixed`` (at their paths on the head, after renames), one per cause."""
    want = set(parts.fixed)
    out: dict[str, Finding] = {}
    for f in base:
        g = f.moved(renames or {})
        if g.fingerprint in want:
            out.setdefault(g.fingerprint, g)
    return tuple(sorted(out.values(), key=Finding.sort_key))


def renamed(files: Iterable[ChangedFile]) -> dict[str, str]:
    """The PR's renames (old path -> new path), from the files API (``status: renamed``)."""
    return {f.previous_path: f.path for f in files if f.status == "renamed" and f.previous_path}


def own(author: str, bot_login: str) -> bool:
    return author.lower() == bot_login.lower()


def find_summary(comments: list[Comment], bot_login: str) -> Comment | None:
    """The bot's summary comment: the oldest with the marker AND the bot's own login."""
    mine = [c for c in comments if own(c.author, bot_login) and markers.has(c.body, SUMMARY_MARKER)]
    return min(mine, key=lambda c: c.id) if mine else None


def posted(comments: list[ReviewComment], bot_login: str) -> list[Posted]:
    """The bot's inline comments (replies are skipped), oldest first."""
    out: list[Posted] = []
    for c in sorted(comments, key=lambda c: c.id):
        if c.in_reply_to is not None or not own(c.author, bot_login):
            continue
        m = markers.search(_FINDING_MARKER, c.body)
        if m:
            out.append(Posted(c, tuple(m.group(1).split()), bool(m.group(2))))
    return out


def posted_fingerprints(comments: list[ReviewComment], bot_login: str) -> dict[str, tuple[ReviewComment, bool]]:
    """fingerprint -> (the bot's inline comment for it, resolved?)."""
    return {fp: (p.comment, p.resolved) for p in posted(comments, bot_login) for fp in p.fingerprints}


def plan(split_: Split, changes: Changes, comments: list[Comment], review_comments: list[ReviewComment],
         ctx: Context) -> Plan:
    p = Plan()
    mine = posted(review_comments, ctx.bot_login)
    by_fp = {fp: q for q in mine for fp in q.fingerprints}
    open_at = {q.key: q for q in mine if not q.resolved}
    new_by_fp = {f.fingerprint: f for f in split_.new}
    groups: dict[tuple[str, int | None, str], tuple[Anchor, list[Finding]]] = {}
    additions: dict[int, list[Finding]] = {}
    taken = {q.key for q in mine if not q.resolved}
    # causes on the PR's own lines first: they keep their line; the others anchor around them
    for f in sorted(split_.new, key=lambda f: not changes.added(f.path, f.line)):
        known = by_fp.get(f.fingerprint)
        if known is not None and not known.resolved:
            p.posted.append(f)
            continue
        at = anchor(f, changes, frozenset(taken)) if ctx.inline_comments else None
        if at is None:
            if ctx.inline_comments:
                p.unanchored.append(f)
            continue
        there = open_at.get(at.key)
        if there is not None:  # the bot's open comment on this line takes the new cause
            additions.setdefault(there.comment.id, []).append(f)
            continue
        if at.key not in groups and len(groups) >= MAX_INLINE:
            continue
        taken.add(at.key)
        groups.setdefault(at.key, (at, []))[1].append(f)
    for at, causes in groups.values():
        p.review.append(_draft(at, causes, changes, ctx))
        p.inline += causes
    for q in mine:
        extra = additions.get(q.comment.id)
        if extra:
            causes = [new_by_fp[fp] for fp in q.fingerprints if fp in new_by_fp] + extra
            at = Anchor(*q.key)
            p.update.append(Update(q.comment, inline.body(causes, at, None, ctx.link,
                                                          finding_marker(f.fingerprint for f in causes))))
            p.inline += extra
    if p.review:
        lines = [d for d in p.review if d.line is not None]
        p.review_body = (f"benchbot: {plural(len(p.inline), 'new finding')} on this pull request's changes; "
                         "the summary comment lists everything it introduces.") if lines else ""
    p.resolve, p.recheck = _resolutions(split_, mine, review_comments, ctx)
    p.comments = len(p.review) + len({by_fp[f.fingerprint].comment.id for f in p.posted} |
                                     {u.comment.id for u in p.update})
    summary = find_summary(comments, ctx.bot_login)
    p.summary_id = summary.id if summary else None
    p.summary = summary_body(split_, p, sum(1 for q in mine if q.resolved), ctx, changes)
    p.summary_changed = summary is None or summary.body.strip() != p.summary.strip()
    return p


def _draft(at: Anchor, causes: list[Finding], changes: Changes, ctx: Context) -> DraftComment:
    fl = changes.files.get(at.path)
    sugs = [(f, s) for f in causes if at.side == "RIGHT" and at.line is not None and fl is not None
            and at.path == f.path and (s := suggestion(f, at.path, fl.visible)) is not None]
    own = sugs[0] if len(sugs) == 1 and inline.offered(sugs[0][1]) else None
    marker = finding_marker(f.fingerprint for f in causes)
    text = inline.body(causes, at, own, ctx.link, marker)
    if own is not None:  # a suggestion sits on the lines it replaces
        sug = own[1]
        return DraftComment(at.path, sug.end, text, sug.start if sug.start < sug.end else None)
    return DraftComment(at.path, at.line, text, None, at.side)


def _resolutions(split_: Split, mine: list[Posted], review_comments: list[ReviewComment],
                 ctx: Context) -> tuple[list[Resolve], list[ReviewComment]]:
    # a finding that is now the consequence of another is not fixed: its comment stays open
    current = {f.fingerprint for f in [*split_.new, *split_.old]} | {
        r.fingerprint for f in [*split_.new, *split_.old] for r in f.consequences}
    replied = {int(m.group(1)) for c in review_comments if own(c.author, ctx.bot_login) and c.in_reply_to
               for m in [markers.search(_FIXED_MARKER, c.body)] if m}
    out: list[Resolve] = []
    recheck: list[ReviewComment] = []
    short = ctx.head_sha[:7]
    for q in mine:
        if q.resolved:
            recheck.append(q.comment)
            continue
        if any(fp in current for fp in q.fingerprints):
            continue
        c = q.comment
        old = markers.split(c.body)[1].strip()
        body = (f"{finding_marker(q.fingerprints, resolved=True)}\n\u2705 **Resolved** in `{short}`: benchbot no "
                f"longer reports this.\n\n<details><summary>Original comment</summary>\n\n{old}\n\n</details>")
        reply = None if c.id in replied else f"{fixed_marker(c.id)}\u2705 Fixed in `{short}`."
        out.append(Resolve(c, reply, body))
    return out, recheck
