"""Markdown for pull-request comments: a summary line, then the findings grouped by rule.

Everything that comes from the repository (paths, messages, notes, entry names, diffs, labels,
payload strings) goes through this module, the one escaping path: inline text (:func:`escape`) is
backslash-escaped for markdown, HTML-escaped, ``@name`` gets a zero-width joiner so that a crafted
file name cannot ping anyone, and a bare URL gets one after its scheme (or ``www``) so that GitHub
does not link it; paths and entry names go into code spans (:func:`code`), diffs into fenced blocks
longer than any backtick run they contain (:func:`fenced`), text inside HTML elements through
:func:`html_text`, and a table cell through :func:`cell` (``|`` escaped, code spans included).
Everywhere, ``<!--`` and ``-->`` get a zero-width joiner (:func:`inert`): the bot's hidden markers
(:mod:`bot.github.markers`) cannot be forged by text it shows. The output is deterministic (no
timings), so a comment can be compared before it is updated.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Callable

from bot.findings import Finding, Severity
from bot.report import Stats, checked_text, count_text, plural, unread_text, visible

Link = Callable[[str, int], str]

ICON = {Severity.ERROR: "\u274c", Severity.WARNING: "\u26a0\ufe0f", Severity.INFO: "\u2139\ufe0f"}
ZWJ = "\u200d"
# Characters with an inline meaning in GitHub-flavoured markdown (``$`` starts math).
_INLINE = re.compile(r"([\\`*_{}\[\]()#+!|~$^])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_])")
_NEWLINES = re.compile(r"\r\n|[\r\n\u2028\u2029\x85]")
_URL_SAFE = "/:?#[]@!$&'*+,;=%-._~"
# GitHub's extended autolinks: a scheme and ``:`` (``https://``, ``mailto:``, ``xmpp:``) or ``www.``
_AUTOLINK = re.compile(r"(?i)(?<![a-z0-9])(https?|ftp|mailto|xmpp)(?=:)|(?<![a-z0-9])(www)(?=\.)")
_COMMENT = re.compile(r"<(?=!--)|-(?=->)")


def render(findings: list[Finding], stats: Stats, *, link: Link | None = None, title: str | None = None,
           header: bool = True) -> str:
    """``header=False`` leaves out the counts line (for a comment that states them already)."""
    out: list[str] = []
    if title is not None:
        out += [f"### {escape(title)}", ""]
    unread = unread_text(stats, code)
    unread = f" {unread[:1].upper()}{unread[1:]}." if unread else ""
    if not findings:
        out.append(f"\u2705 No findings: {checked_text(stats)} checked.{unread}")
        return "\n".join(out) + "\n"
    fixable = sum(1 for f in findings if f.fix is not None)
    counts = count_text(findings)
    head, _, rest = counts.partition(" (")
    line = f"**{head}**" + (f" ({rest}" if rest else "")
    if fixable:
        line += f", {fixable} with a proposed fix"
    if header:
        out.append(f"{line}; {checked_text(stats)} checked.{unread}")
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.rule, []).append(f)
    order = sorted(groups, key=lambda rid: (-max(f.severity for f in groups[rid]), groups[rid][0].code, rid))
    for rid in order:
        group = groups[rid]
        out += ["", _heading(group), ""]
        for f in group:
            out += _finding(f, link)
    return "\n".join(out) + "\n"


def _heading(group: list[Finding]) -> str:
    first = group[0]
    worst = max(f.severity for f in group)
    severities = {f.severity for f in group}
    count = plural(len(group), worst.label) if len(severities) == 1 else count_text(group)
    return f"#### {ICON[worst]} {escape(first.code)} {code(first.rule)}: {count}"


def _finding(f: Finding, link: Link | None) -> list[str]:
    out = [f"- {where(f.path, f.line, link)}: {escape(f.message)}"]
    for r in f.related:
        out.append(f"  - {where(r.path, r.line, link)}: {escape(r.note)}")
    if f.entries:
        label = "entry" if len(f.entries) == 1 else "entries"
        out.append(f"  - {label}: " + ", ".join(code(e) for e in f.entries))
    if f.fix is not None:
        kind = "safe to apply" if f.fix.safe else "review before applying"
        out += ["", f"  <details><summary>Fix: {html_text(f.fix.description)} \u2014 {kind}</summary>", ""]
        out += [f"  {line}".rstrip() for line in fenced(f.fix.diff, "diff").split("\n")]
        out += ["", "  </details>", ""]
    return out


def code_fence(text: str) -> str:
    """Backticks that open and close a fenced block holding ``text``: longer than any run in it."""
    return "`" * max(3, _longest_run(text, "`") + 1)


def fenced(text: str, info: str = "") -> str:
    """A fenced code block holding ``text`` literally (lines kept, markers inert)."""
    body = inert(text.rstrip("\n").replace("\r\n", "\n").replace("\r", "\n"))
    fence = code_fence(body)
    return f"{fence}{info}\n{body}\n{fence}"


def inert(text: str) -> str:
    """``text`` with every ``<!--`` and ``-->`` broken by a zero-width joiner: no HTML comment,
    hence no marker of the bot's, can start or end in it."""
    return _COMMENT.sub(lambda m: m.group() + ZWJ, text)


def cell(text: str) -> str:
    """Markdown (from :func:`escape` and :func:`code`) made safe inside a table cell: every ``|``
    escaped, in code spans too (GitHub splits cells before it reads code spans)."""
    return text.replace("|", "\\|")


def where(path: str, line: int, link: Link | None) -> str:
    """``path:line`` as a code span, linked when ``link`` is given."""
    label = code(f"{path}:{line}" if line >= 1 else path)
    if link is None:
        return label
    return f"[{label}]({safe_url(link(path, line))})"


def escape(text: str) -> str:
    """Repository text as inline markdown that renders literally: no markup, HTML or mentions
    (and control and bidi characters shown escaped, ``bot.report.visible``)."""
    text = visible(_NEWLINES.sub(" ", text))
    text = _INLINE.sub(r"\\\1", text)
    text = html.escape(text, quote=False)
    text = _AUTOLINK.sub(lambda m: m.group() + ZWJ, text)
    return _MENTION.sub("@" + ZWJ, text)


def code(text: str) -> str:
    """A code span holding ``text`` literally, whatever backticks it contains."""
    text = inert(visible(_NEWLINES.sub(" ", text)))
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def safe_url(url: str) -> str:
    """A link target that cannot end the link: spaces, parentheses, brackets and quotes encoded."""
    return urllib.parse.quote(_NEWLINES.sub("", url), safe=_URL_SAFE.replace("[", "").replace("]", ""))


def html_text(text: str) -> str:
    """Text inside an HTML element (``<summary>``), where markdown is not processed."""
    return _MENTION.sub("@" + ZWJ, html.escape(visible(_NEWLINES.sub(" ", text)), quote=True))


def _longest_run(text: str, ch: str) -> int:
    return max((len(m) for m in re.findall(re.escape(ch) + "+", text)), default=0)
