"""``benchbot history`` reports: when each root cause appeared and went, as text, JSON or
markdown. Deterministic (no timings): the same range gives the same bytes. What comes from
the repository (subjects, messages, paths, commit subjects) is shown with its control
characters escaped, and in markdown escaped as in the PR comments."""

from __future__ import annotations

import json
import re
import time

from bot.history import Commit, Episode, History
from bot.report import markdown, plural, visible

VERSION = 1


def _date(c: Commit) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(c.time))


# A part of a finding's key (parts are split by | and ,) that is a file of the repo: a path with
# a folder and an extension; constructs, labels, entry names and ``name=value`` pairs are not.
_PATH_PART = re.compile(r"[^\s|,=:]*/[^\s|,=:]*\.[A-Za-z0-9]+")


def subject(e: Episode) -> str:
    """What the cause is about, by a name a person knows: the file its stable key names (the
    dead script, the missing script or recipe, the launcher; ``+N`` when it names more), else
    where it is, as ``lint`` shows it (``path:line``, as last seen). Never cut short. The key
    itself (``entry|scenario|ep=8|...``) is internal: JSON has it whole, as ``key``."""
    f = e.finding
    named = [part for part in dict.fromkeys(re.split(r"[|,]", f.key)) if _PATH_PART.fullmatch(part)]
    if named:
        return named[0] + (f" +{len(named) - 1}" if len(named) > 1 else "")
    return f"{f.path}:{f.line}" if f.line > 0 else f.path


def _entries(e: Episode, limit: int = 2) -> str:
    names = e.finding.entries
    if not names:
        return "-"
    shown = ", ".join(names[:limit])
    return shown + (f" +{len(names) - limit}" if len(names) > limit else "")


def _days(h: History, e: Episode) -> str:
    days = e.days_open(h.start, h.end)
    text = f"{days:.1f}"
    return (">=" + text) if e.first_bad is None else text


def summary(h: History) -> str:
    """``500 commits, 37 root causes: 31 fixed, 6 still open at 843c6254f; 2 commits not linted``."""
    out = (f"{plural(len(h.commits), 'commit')}, {plural(len(h.episodes), 'root cause')}: "
           f"{len(h.fixed)} fixed, {len(h.open)} still open at {h.end.short}")
    if h.skipped:
        out += f"; {plural(len(h.skipped), 'commit')} not linted"
    return out


def text(h: History) -> str:
    rows = [("FIRST BAD", "FIXED BY", "DAYS", "RULE", "SUBJECT", "ENTRIES")]
    for e in h.episodes:
        rows.append((f"{e.first_bad.short} {_date(e.first_bad)}" if e.first_bad else "(before)",
                     f"{e.fixed_by.short} {_date(e.fixed_by)}" if e.fixed_by else "open",
                     _days(h, e), e.finding.rule, visible(subject(e)), visible(_entries(e))))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + "  " + r[5] for r in rows]
    out = [f"benchbot history {visible(h.spec)}" + (" --first-parent" if h.first_parent else "")]
    if h.start is not None:
        out.append(f"from {h.start.short} {_date(h.start)} (the start: what it has is \"(before)\") "
                   f"to {h.end.short} {_date(h.end)}")
    out += [""] + (lines if h.episodes else ["no root causes in this range"]) + [""]
    for c, why in h.skipped:
        out.append(f"not linted: {c.short} {visible(c.subject[:60])}: {visible(why)}")
    out.append(summary(h))
    return "\n".join(out) + "\n"


def _commit(c: Commit | None) -> dict[str, object] | None:
    if c is None:
        return None
    return {"sha": c.sha, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(c.time)), "subject": c.subject}


def as_json(h: History) -> str:
    doc = {
        "version": VERSION, "tool": "benchbot", "range": h.spec, "first_parent": h.first_parent,
        "start": _commit(h.start), "end": _commit(h.end), "commits": len(h.commits), "linted": h.linted,
        "skipped": [{"commit": _commit(c), "reason": why} for c, why in h.skipped],
        "root_causes": [{
            "rule": e.finding.rule, "code": e.finding.code, "severity": e.finding.severity.label,
            "subject": subject(e), "key": e.finding.key, "fingerprint": e.fingerprint, "path": e.finding.path,
            "line": e.finding.line,
            "message": e.finding.message, "entries": list(e.finding.entries),
            "first_bad": _commit(e.first_bad), "before_range": e.first_bad is None,
            "fixed_by": _commit(e.fixed_by), "open": e.fixed_by is None,
            "days_open": round(e.days_open(h.start, h.end), 2),
        } for e in h.episodes],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    """A code span in a table cell."""
    return markdown.cell(markdown.code(text))


def _md_commit(c: Commit | None, none: str) -> str:
    if c is None:
        return none
    return f"{markdown.code(c.short)} {_date(c)}"


def as_markdown(h: History) -> str:
    out = [f"### benchbot history {markdown.code(h.spec)}" + (" (first parent)" if h.first_parent else ""), "",
           markdown.escape(summary(h)) + ".", ""]
    if h.episodes:
        out += ["| First bad | Fixed by | Days | Rule | Subject | Entries |", "| --- | --- | ---: | --- | --- | --- |"]
        for e in h.episodes:
            out.append(f"| {_md_commit(e.first_bad, '(before)')} | {_md_commit(e.fixed_by, 'open')} | "
                       f"{markdown.escape(_days(h, e))} | {_cell(e.finding.rule)} | "
                       f"{_cell(subject(e))} | {markdown.cell(markdown.escape(_entries(e)))} |")
        out.append("")
    for c, why in h.skipped:
        out.append(f"- not linted: {markdown.code(c.short)}: {markdown.escape(why)}")
    return "\n".join(out).rstrip("\n") + "\n"
