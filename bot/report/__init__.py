"""Output formats. Each renders findings and stats to a string; only the CLI prints.

Formats never read files or the environment: what they need from the repo (source text for
code frames, links) is passed in as callables by the CLI.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

from bot.findings import Finding, Severity

# The text of a repo-relative path, or None when it is not a (readable) file.
Source = Callable[[str], str | None]


@dataclass(frozen=True)
class Stats:
    files: int
    entries: int
    launchers: int
    scripts: int
    seconds: float


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def count_text(findings: Iterable[Finding]) -> str:
    """``4 findings (2 errors, 2 warnings)``; ``0 findings`` when there are none."""
    findings = list(findings)
    counts = Counter(f.severity for f in findings)
    parts = [plural(counts[s], s.label) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
    what = plural(len(findings), "finding")
    return f"{what} ({', '.join(parts)})" if parts else what


def checked_text(stats: Stats) -> str:
    """``6 entries, 3 launchers, 7 scripts``."""
    entries = f"{stats.entries} {'entry' if stats.entries == 1 else 'entries'}"
    return f"{entries}, {plural(stats.launchers, 'launcher')}, {plural(stats.scripts, 'script')}"


# ------------------------------------------------------------ rule documentation ----

SECTIONS = ("What it does:", "Why is this bad?", "Example:", "Fix:")
_SECTION_RE = re.compile(r"^(What it does:|Why is this bad\?|Example:|Fix:)\s*$")


def rule_doc(module: ModuleType) -> str:
    """The rule's whole docstring, dedented (what ``benchbot explain`` prints)."""
    return inspect.cleandoc(module.__doc__ or "")


def rule_sections(module: ModuleType) -> dict[str, str]:
    """The documented sections of a rule (keys from SECTIONS), each body dedented."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in rule_doc(module).splitlines():
        m = _SECTION_RE.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: inspect.cleandoc("\n".join(body)) for name, body in out.items()}


def paragraph(text: str) -> str:
    """The first paragraph of a text, its lines joined by single spaces."""
    first = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(line.strip() for line in first.splitlines())


def rule_markdown(module: ModuleType) -> str:
    """The rule's documentation as markdown: a title line, then one heading per section."""
    doc = rule_doc(module)
    title = doc.splitlines()[0] if doc else module.ID
    parts = [f"**{module.ID}** ({module.CODE}): {title.split(':', 1)[-1].strip()}"]
    for name, body in rule_sections(module).items():
        parts.append(f"### {name.rstrip(':')}\n\n{body}")
    return "\n\n".join(parts) + "\n"
