"""What to post on a pull request, as pure functions of findings and what is already there.

Nothing here talks to GitHub: :func:`plan` takes the findings of the PR's head and base,
the PR's changed lines and the bot's existing comments, and returns every write to make.
Every write is idempotent: the bot's comments carry hidden markers (the summary's, and each
inline comment's finding fingerprint) and are recognised by marker AND author, so running
the same event twice posts nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from bot import rules
from bot.findings import Finding
from bot.github.diff import Changes, hunk_start
from bot.github.port import ChangedFile, Comment, DraftComment, ReviewComment
from bot.newonly import Comparison, compare
from bot.report import Stats, checked_text, count_text, paragraph, plural, rule_sections
from bot.report import markdown as md

SUMMARY_MARKER = "<!-- benchbot:summary -->"
_FINDING_MARKER = re.compile(r"<!-- benchbot:finding ([0-9a-f]{8,64})( resolved)? -->")
MAX_COMMENT = 60000  # GitHub refuses bodies over 65,536 characters
MAX_INLINE = 25  # inline comments per run; the rest are in the summary (a flood helps nobody)
Link = Callable[[str, int], str]


def finding_marker(fp: str, resolved: bool = False) -> str:
    return f"<!-- benchbot:finding {fp}{' resolved' if resolved else ''} -->"


# new: on the head, not on the base (what the PR introduces); old: on both (reported in the
# summary only, collapsed); fixed: base findings the head no longer has (counted).
Split = Comparison


def split(head: list[Finding], base: list[Finding], renames: Mapping[str, str] | None = None) -> Split:
    """New, pre-existing and fixed findings, by stable fingerprint (line numbers move), the base
    mapped through the PR's renames (bot/newonly.py)."""
    return compare(head, base, renames)


def renamed(files: Iterable[ChangedFile]) -> dict[str, str]:
    """The PR's renames (old path -> new path), from the files API (``status: renamed``)."""
    return {f.previous_path: f.path for f in files if f.status == "renamed" and f.previous_path}


@dataclass(frozen=True)
class Suggestion:
    start: int
    end: int
    text: str  # the replacement for lines start..end


def suggestion(f: Finding, path: str, visible: frozenset[int]) -> Suggestion | None:
    """The finding's fix as a GitHub suggestion on ``path``: only a one-file, one-block
    change whose lines are all inside the diff."""
    if f.fix is None:
        return None
    diff = f.fix.diff.splitlines()
    files = [ln for ln in diff if ln.startswith("+++ ")]
    if len(files) != 1 or files[0][4:].strip() != f"b/{path}":
        return None
    hunks = [i for i, ln in enumerate(diff) if ln.startswith("@@")]
    if len(hunks) != 1:
        return None
    header = hunk_start(diff[hunks[0]])
    if header is None:
        return None
    old = header[0]
    removed: list[int] = []
    added: list[str] = []
    before: tuple[int, str] | None = None  # the context line just above the change
    block_done = False
    for ln in diff[hunks[0] + 1:]:
        if ln.startswith("\\"):
            continue
        tag, text = ln[:1], ln[1:]
        if tag in "+-" and block_done:
            return None  # two separate changes: not one suggestion
        if tag == "-":
            removed.append(old)
            old += 1
        elif tag == "+":
            added.append(text)
        else:
            if removed or added:
                block_done = True
            else:
                before = (old, text)
            old += 1
    if removed:
        start, end, replacement = removed[0], removed[-1], added
    elif before is not None:
        start = end = before[0]
        replacement = [before[1], *added]
    else:
        return None
    if not all(n in visible for n in range(start, end + 1)):
        return None
    return Suggestion(start, end, "\n".join(replacement))


def anchor(f: Finding, changes: Changes, taken: frozenset[tuple[str, int]] = frozenset()) -> tuple[str, int] | None:
    """Where on the PR's own lines a finding belongs: its own line if the PR added it, else
    the first related line the PR added (the new script, the new entry), preferring a line no
    other comment of this review sits on; None: summary only."""
    if changes.added(f.path, f.line):
        return f.path, f.line
    lines = [(r.path, r.line) for r in f.related if changes.added(r.path, r.line)]
    free = [at for at in lines if at not in taken]
    return (free or lines)[0] if lines else None


def inline_body(f: Finding, at: tuple[str, int], sug: Suggestion | None, link: Link | None) -> str:
    out = [finding_marker(f.fingerprint),
           f"{md.ICON[f.severity]} **{md.escape(f.code)} {md.code(f.rule)}** ({f.severity.label})", "",
           md.escape(f.message)]
    if (f.path, f.line) != at:
        out += ["", f"Reported at {md.where(f.path, f.line, link)} (\"this line\" above), a line this pull "
                    "request does not change; this comment sits on the pull request's own line it involves."]
    others = [r for r in f.related if (r.path, r.line) != at]
    if others:
        out.append("")
        out += [f"- {md.where(r.path, r.line, link)}: {md.escape(r.note)}" for r in others]
    if sug is not None:
        fence = md.code_fence(sug.text)
        out += ["", f"Suggested fix: {md.escape(f.fix.description if f.fix else '')}", "",
                f"{fence}suggestion", sug.text, fence]
    elif f.fix is not None:
        out += ["", "The proposed fix is in the summary comment."]
    module = rules.RULES.get(f.rule)
    why = rule_sections(module).get("Why is this bad?") if module else None
    if why:
        out += ["", f"<details><summary>Why is this bad?</summary>\n\n{md.escape(paragraph(why))}\n\n</details>"]
    out += ["", f"<sub>`benchbot explain {f.rule}` · silence with `# benchbot: ignore[{f.rule}] reason`</sub>"]
    return "\n".join(out)


@dataclass(frozen=True)
class Resolve:
    comment: ReviewComment
    reply: str
    body: str  # the comment's new body, marked resolved


@dataclass
class Plan:
    review: list[DraftComment] = field(default_factory=list)
    review_body: str = ""
    inline: list[Finding] = field(default_factory=list)  # findings that go on the PR's lines this run
    posted: list[Finding] = field(default_factory=list)  # new findings already commented on before
    resolve: list[Resolve] = field(default_factory=list)
    summary: str = ""
    summary_id: int | None = None  # edit this comment; None: create one
    summary_changed: bool = True


def own(author: str, bot_login: str) -> bool:
    return author.lower() == bot_login.lower()


def find_summary(comments: list[Comment], bot_login: str) -> Comment | None:
    """The bot's summary comment: the oldest with the marker AND the bot's own login."""
    mine = [c for c in comments if own(c.author, bot_login) and SUMMARY_MARKER in c.body]
    return min(mine, key=lambda c: c.id) if mine else None


def posted_fingerprints(comments: list[ReviewComment], bot_login: str) -> dict[str, tuple[ReviewComment, bool]]:
    """fingerprint -> (the bot's inline comment for it, resolved?); replies are skipped."""
    out: dict[str, tuple[ReviewComment, bool]] = {}
    for c in sorted(comments, key=lambda c: c.id):
        if c.in_reply_to is not None or not own(c.author, bot_login):
            continue
        m = _FINDING_MARKER.search(c.body)
        if m:
            out[m.group(1)] = (c, bool(m.group(2)))
    return out


@dataclass(frozen=True)
class Context:
    head_sha: str
    base_sha: str
    base_ref: str
    bot_login: str
    stats: Stats
    reminder: str | None = None  # the recipe reminder, when the PR calls for it
    inline_comments: bool = True
    link: Link | None = None
    policy: str | None = None  # what the PR changes in benchbot's configuration (``bot.github.policy``)


def plan(split_: Split, changes: Changes, comments: list[Comment], review_comments: list[ReviewComment],
         ctx: Context) -> Plan:
    p = Plan()
    existing = posted_fingerprints(review_comments, ctx.bot_login)
    seen: set[str] = set()
    taken: set[tuple[str, int]] = set()
    # findings on the PR's own lines first: they keep their line; the others anchor around them
    for f in sorted(split_.new, key=lambda f: not changes.added(f.path, f.line)):
        if f.fingerprint in seen:
            continue
        seen.add(f.fingerprint)
        at = anchor(f, changes, frozenset(taken)) if ctx.inline_comments and len(p.review) < MAX_INLINE else None
        if at is None:
            continue
        taken.add(at)
        known = existing.get(f.fingerprint)
        if known is not None and not known[1]:
            p.posted.append(f)
            continue
        fl = changes.files.get(at[0])
        sug = suggestion(f, at[0], fl.visible) if fl is not None and at[0] == f.path else None
        if sug is not None:  # a suggestion sits on the lines it replaces
            at = (at[0], sug.end)
            line, start = sug.end, (sug.start if sug.start < sug.end else None)
        else:
            line, start = at[1], None
        p.review.append(DraftComment(at[0], line, inline_body(f, at, sug, ctx.link), start))
        p.inline.append(f)
    if p.review:
        p.review_body = (f"benchbot: {plural(len(p.review), 'new finding')} on lines this pull request changed; "
                         "the summary comment lists everything it introduces.")
    # a finding that is now the consequence of another is not fixed: its comment stays open
    current = {f.fingerprint for f in [*split_.new, *split_.old]} | {
        r.fingerprint for f in [*split_.new, *split_.old] for r in f.consequences}
    for fp, (c, resolved) in existing.items():
        if resolved or fp in current:
            continue
        short = ctx.head_sha[:7]
        old = _FINDING_MARKER.sub("", c.body, count=1).strip()
        body = (f"{finding_marker(fp, resolved=True)}\n\u2705 **Resolved** in `{short}`: benchbot no longer "
                f"reports this.\n\n<details><summary>Original comment</summary>\n\n{old}\n\n</details>")
        p.resolve.append(Resolve(c, f"\u2705 Fixed in `{short}`: benchbot no longer reports this.", body))
    summary = find_summary(comments, ctx.bot_login)
    p.summary_id = summary.id if summary else None
    p.summary = summary_body(split_, p, sum(1 for _, done in existing.values() if done), ctx)
    p.summary_changed = summary is None or summary.body.strip() != p.summary.strip()
    return p


def summary_body(split_: Split, p: Plan, resolved_before: int, ctx: Context) -> str:
    inline = len(p.inline) + len(p.posted)
    resolved = resolved_before + len(p.resolve)
    head = ["### benchbot", ""]
    if split_.new:
        worst = max(f.severity for f in split_.new)
        line = f"{md.ICON[worst]} **This pull request introduces {count_text(split_.new)}**"
        if inline:
            line += f"; {_inline_text(inline)} on its lines"
        head.append(line + ".")
    else:
        head.append("\u2705 **This pull request introduces no findings.**")
    if split_.fixed:
        head.append(f"It fixes {plural(len(split_.fixed), 'finding')} that "
                    f"{'is' if len(split_.fixed) == 1 else 'are'} on `{md.escape(ctx.base_ref)}`.")
    if resolved:
        head.append(f"{plural(resolved, 'earlier inline comment')} on fixed findings marked resolved.")
    tail = []
    if ctx.policy:
        tail += ["", ctx.policy]
    if ctx.reminder:
        quoted = "\n".join(f"> {ln}" if ln else ">" for ln in ctx.reminder.strip().splitlines())
        tail += ["", "> **Recipe reminder**", ">", quoted]
    tail += ["", "---", f"<sub>benchbot · base `{ctx.base_sha[:12]}` ({md.escape(ctx.base_ref)}) · "
                        f"{checked_text(ctx.stats)} checked</sub>", "",
             f"Checked at head `{ctx.head_sha}`", "", bench_line(ctx.head_sha)]
    new_md = md.render(split_.new, ctx.stats, link=ctx.link, header=False).strip() if split_.new else ""
    old_md = md.render(split_.old, ctx.stats, link=ctx.link, header=False).strip() if split_.old else ""
    for attempt in range(3):
        body = [SUMMARY_MARKER, *head]
        if new_md:
            body += ["", "#### New in this pull request", "", new_md]
        if split_.old:
            label = f"{count_text(split_.old)} already on `{md.escape(ctx.base_ref)}` (not introduced here)"
            body += ["", f"<details><summary>{label}</summary>", "", old_md or "(left out: too long)", "",
                     "</details>"]
        body += tail
        text = "\n".join(body) + "\n"
        if len(text) <= MAX_COMMENT:
            return text
        if attempt == 0:
            old_md = ""  # drop the pre-existing details first
        else:
            new_md = _cut(new_md, MAX_COMMENT - (len(text) - len(new_md)) - 200)
    return text[:MAX_COMMENT]


def bench_line(head_sha: str) -> str:
    """How a maintainer approves this head for a GPU run (the command binds to the commit)."""
    return f"To benchmark this head: `/bench <gpu> @{head_sha[:7]}`"


def failure_summary(head_sha: str, base_sha: str, base_ref: str, reason: str) -> str:
    """The summary when benchbot could not analyse the head: it replaces the last head's results
    (they no longer apply) and names the one-line reason, escaped; never a traceback."""
    return "\n".join([
        SUMMARY_MARKER, "### benchbot", "",
        f"\u274c **benchbot could not analyse head `{head_sha[:12]}`**: {md.escape(reason)}", "",
        "Nothing is reported for this head, and the results of earlier heads no longer apply. This is a bug in "
        "benchbot, not a finding: the job log names the place (`BENCHBOT_DEBUG=1` shows the traceback).", "",
        "---", f"<sub>benchbot · base `{base_sha[:12]}` ({md.escape(base_ref)})</sub>", "",
        f"Not analysed: head `{head_sha}`"]) + "\n"


def _inline_text(n: int) -> str:
    return f"{n} {'is an inline comment' if n == 1 else 'are inline comments'}"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n- ", 0, max(0, limit))
    kept = text[:cut] if cut > 0 else ""
    return kept + "\n\n\u2026 (cut to fit a comment: the job's annotations and SARIF report have the full list)"
