"""GitHub Actions workflow commands: one annotation per finding, then a plain summary line.

``::error file=PATH,line=L,col=C,title=CODE rule-id::message`` (``::warning`` for
warnings, ``::notice`` for info), escaped as the Actions runner unescapes them: ``%``,
CR and LF in the message; those and ``:`` and ``,`` in property values. Escaping keeps
repository text (file names, messages quoting it) from ending a command or starting another;
other control characters (ESC) and bidi overrides are shown as ``\\x1b`` / ``\\u202e``
(``bot.report.visible``), so that they reach neither the job log's terminal nor the page.
"""

from __future__ import annotations

from bot.findings import Finding, Severity
from bot.report import Stats, checked_text, count_text, visible

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render(findings: list[Finding], stats: Stats) -> str:
    lines = [command(f) for f in findings]
    lines.append(f"benchbot: {count_text(findings)}; {checked_text(stats)} checked in {stats.seconds:.2f}s")
    return "\n".join(lines) + "\n"


def command(f: Finding) -> str:
    props = [("file", f.path)]
    if f.line >= 1:
        props.append(("line", str(f.line)))
        if f.column >= 1:
            props.append(("col", str(f.column)))
    props.append(("title", f"{f.code} {f.rule}"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{COMMAND[f.severity]} {joined}::{escape_data(f.message)}"


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF (and control and bidi characters made visible)."""
    return visible(text, lines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command property's value: as data, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
