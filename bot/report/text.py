"""``path:line:col: CODE message [rule]``, one per line, then a one-line summary."""

from __future__ import annotations

from collections import Counter

from bot.findings import Finding, Severity
from bot.report import Stats


def render(findings: list[Finding], stats: Stats, show_fixes: bool = False) -> str:
    lines: list[str] = []
    for f in findings:
        lines.append(f.text())
        if show_fixes and f.fix is not None:
            lines.append(f"  fix ({'safe' if f.fix.safe else 'review'}): {f.fix.description}")
            lines.extend("    " + line for line in f.fix.diff.rstrip("\n").splitlines())
    lines.append(summary(findings, stats))
    return "\n".join(lines) + "\n"


def summary(findings: list[Finding], stats: Stats) -> str:
    counts = Counter(f.severity for f in findings)
    parts = [f"{counts[s]} {s.label}{'s' if counts[s] != 1 else ''}" for s in
             (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
    what = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if parts:
        what += f" ({', '.join(parts)})"
    fixable = sum(1 for f in findings if f.fix is not None)
    if fixable:
        what += f", {fixable} with a fix (--show-fixes)"
    return (f"{what}; {stats.entries} entries, {stats.launchers} launchers, {stats.scripts} scripts "
            f"checked in {stats.seconds:.2f}s")
