"""The one summary comment of a pull request, as text.

Layout, top down: the verdict (what the pull request introduces, how many of those are inline
comments, what it fixes); "New in this pull request" (its causes, by rule); "Workflows: zizmor
and actionlint" (what the checkers find new in the workflows it changes, and what they could not
check); "Fixed by this pull request"; the findings already on the base, collapsed, listing only
those in files the pull request's hunks involve (the rest are a count: a clean pull request gets a
short comment); the accuracy evidence (for speculative changes); "Dispatch chains of the changed
entries" (a Mermaid flowchart of each one's chain before and after, collapsed); what it changes in
benchbot's configuration; the recipe parity section; the recipe reminder (when an entry the pull
request changes found no recipe); where the HTML map of the head is; the footer. Headings go
``##`` > ``###`` > ``####``; ``<summary>`` holds plain text (GitHub renders no markdown there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.external.names import is_external
from bot.findings import Finding
from bot.github import evidence
from bot.github.diff import Changes
from bot.report import checked_text, count_text, plural, unread_text
from bot.report import markdown as md

if TYPE_CHECKING:
    from bot.github.plans import Context, Plan, Split

SUMMARY_MARKER = "<!-- benchbot:summary -->"
MAX_COMMENT = 60000  # GitHub refuses bodies over 65,536 characters
MAX_FIXED = 30  # fixed findings listed one by one; the rest are counted


def summary_body(split_: Split, p: Plan, resolved_before: int, ctx: Context, changes: Changes | None = None) -> str:
    comments = p.comments
    resolved = resolved_before + len(p.resolve)
    base = md.escape(ctx.base_ref)
    head = [SUMMARY_MARKER, "## benchbot", ""]
    if split_.new:
        worst = max(f.severity for f in split_.new)
        line = f"{md.ICON[worst]} **This pull request introduces {count_text(split_.new)}**"
        if comments:
            line += f"; {plural(comments, 'inline comment')} on its changes"
        head.append(line + ".")
        if p.unanchored:
            n = len(p.unanchored)
            head.append(f"{n} of them {'is' if n == 1 else 'are'} on no line or file this pull request changes; "
                        f"this comment alone lists {'it' if n == 1 else 'them'}.")
    else:
        head.append("\u2705 **This pull request introduces no findings.**")
    if split_.fixed:
        head.append(f"It fixes {plural(len(split_.fixed), 'finding')} that {'is' if len(split_.fixed) == 1 else 'are'} "
                    f"on {md.code(ctx.base_ref)}.")
    if resolved:
        head.append(f"{plural(resolved, 'inline comment')} on fixed findings resolved.")
    tail = evidence.section(ctx.spec, ctx.description)  # accuracy evidence, for speculative changes
    if ctx.chains:
        tail += ["", ctx.chains.rstrip("\n")]
    if ctx.policy:
        tail += ["", ctx.policy]
    if ctx.recipes:
        tail += ["", *ctx.recipes]
    if ctx.reminder:
        quoted = "\n".join(f"> {ln}" if ln else ">" for ln in ctx.reminder.strip().splitlines())
        tail += ["", "> **Recipe reminder**", ">", quoted]
    if ctx.map_link:
        tail += ["", ctx.map_link]
    unread = unread_text(ctx.stats, md.code)  # entries of a config that did not load whole
    tail += ["", "---", f"<sub>benchbot · base `{ctx.base_sha[:12]}` ({base}) · {checked_text(ctx.stats)} "
                        f"checked{'; ' + unread if unread else ''}</sub>", "", f"Checked at head `{ctx.head_sha}`", "",
             bench_line(ctx.head_sha)]
    touched = [f for f in split_.old if changes is not None and _touches(f, changes)]
    own = [f for f in split_.new if not is_external(f.rule)]
    checkers = [f for f in split_.new if is_external(f.rule)]  # zizmor, actionlint: a section of their own
    new_md = md.render(own, ctx.stats, link=ctx.link, header=False).strip() if own else ""
    wf_md = md.render(checkers, ctx.stats, link=ctx.link, header=False).strip() if checkers else ""
    fixed_md = _fixed(list(ctx.fixed), ctx)
    old_md = md.render(touched, ctx.stats, link=ctx.link, header=False).strip() if touched else ""
    text = ""
    for attempt in range(3):
        body = list(head)
        if new_md:
            body += ["", f"### New in this pull request ({len(own)})", "", new_md]
        if wf_md or ctx.workflows:
            body += ["", f"### Workflows: zizmor and actionlint ({len(checkers)} new)", "", *ctx.workflows]
            body += ["", wf_md] if wf_md else []
        if fixed_md:
            body += ["", f"### Fixed by this pull request ({len(split_.fixed)})", "", fixed_md]
        if split_.old:
            label = f"Already on {ctx.base_ref}, not introduced here: {count_text(split_.old)}"
            if changes is not None:
                label += f", {len(touched)} near lines this pull request changes"
            inside = old_md or ("None of them is near a line this pull request changes; `benchbot lint` on the "
                                "base lists them." if changes is not None and not touched else "(left out: too long)")
            body += ["", f"<details><summary>{md.html_text(label)}</summary>", "", inside, "", "</details>"]
        body += tail
        text = "\n".join(body) + "\n"
        if len(text) <= MAX_COMMENT:
            return text
        if attempt == 0:
            old_md = ""  # drop the pre-existing details first
        else:
            new_md = _cut(new_md, MAX_COMMENT - (len(text) - len(new_md) - len(wf_md)) - 200 - min(len(wf_md), 8000))
            wf_md = _cut(wf_md, 8000)
    return text[:MAX_COMMENT]


def _touches(f: Finding, changes: Changes) -> bool:
    """Whether a finding sits on, or involves, a line inside the pull request's hunks."""
    def near(path: str, line: int) -> bool:
        fl = changes.files.get(path)
        return fl is not None and (fl.whole or line in fl.visible)

    return near(f.path, f.line) or any(near(r.path, r.line) for r in f.related)


def _fixed(fixed: list[Finding], ctx: Context) -> str:
    if not fixed:
        return ""
    rows = [f"- ~~{md.escape(f.code)} {md.code(f.rule)}~~ {md.code(f'{f.path}:{f.line}')}: {md.escape(f.message)}"
            for f in fixed[:MAX_FIXED]]
    if len(fixed) > MAX_FIXED:
        rows.append(f"- and {len(fixed) - MAX_FIXED} more")
    return "\n".join(rows)


def bench_line(head_sha: str) -> str:
    """How a maintainer approves this head for a GPU run (the command binds to the commit)."""
    return f"To benchmark this head: `/bench <gpu> @{head_sha}`"


def failure_summary(head_sha: str, base_sha: str, base_ref: str, reason: str) -> str:
    """The summary when benchbot could not analyse the head: it replaces the last head's results
    (they no longer apply) and names the one-line reason, escaped; never a traceback."""
    return "\n".join([
        SUMMARY_MARKER, "## benchbot", "",
        f"\u274c **benchbot could not analyse head `{head_sha[:12]}`**: {md.escape(reason)}", "",
        "Nothing is reported for this head, and the results of earlier heads no longer apply. This is a bug in "
        "benchbot, not a finding: the job log names the place (`BENCHBOT_DEBUG=1` shows the traceback).", "",
        "---", f"<sub>benchbot · base `{base_sha[:12]}` ({md.escape(base_ref)})</sub>", "",
        f"Not analysed: head `{head_sha}`"]) + "\n"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n- ", 0, max(0, limit))
    kept = text[:cut] if cut > 0 else ""
    return kept + "\n\n\u2026 (cut to fit a comment: the job's annotations and SARIF report have the full list)"
