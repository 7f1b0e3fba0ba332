"""``path:line:col: severity CODE message [rule]``, one per line, then a one-line summary.

With ``frames=True`` and a ``source`` callable, each finding is followed by a code frame
(one line of context, the line, a caret under the column), as ruff and rustc print them.
With ``color=True`` the output carries ANSI colours; the CLI decides when (TTY, NO_COLOR,
FORCE_COLOR), this module never looks at the terminal or the environment.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from bot.findings import Finding, Severity
from bot.report import Source, Stats, checked_text, count_text, unchecked_text, visible

if TYPE_CHECKING:
    from bot.newonly import Comparison

_RESET = "\x1b[0m"
_SEVERITY_COLOR = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}{_RESET}" if self.color and text else text


def render(findings: list[Finding], stats: Stats, show_fixes: bool = False, *, source: Source | None = None,
           frames: bool = False, color: bool = False, compared: Comparison | None = None) -> str:
    style = _Style(color)
    lines: list[str] = []
    cache: dict[str, list[str] | None] = {}
    # causes in severity order (errors first), then by place
    for f in sorted(findings, key=lambda f: (-f.severity, f.sort_key())):
        lines.append(_headline(f, style))
        if frames and source is not None:
            if f.path not in cache:
                text = source(f.path)
                cache[f.path] = text.split("\n") if text is not None else None
            src = cache[f.path]
            if src is not None:
                block = frame(src, f.line, f.column, severity=f.severity, color=color)
                if block:
                    lines.extend(block)
                    lines.append("")
        if show_fixes and f.fix is not None:
            lines.append(f"  fix ({'safe' if f.fix.safe else 'review'}): {_clean(f.fix.description)}")
            lines.extend("    " + _diff_line(line, style) for line in f.fix.diff.rstrip("\n").splitlines())
    lines.append(style(summary(findings, stats, compared=compared), "1"))
    return "\n".join(lines) + "\n"


def statistics(findings: list[Finding]) -> str:
    """``--statistics``: one line per rule with its count, most frequent first (as ruff
    prints it), then the total; consequences folded into their causes are counted apart."""
    from collections import Counter

    counts = Counter((f.code, f.rule, f.severity) for f in findings)
    folded = Counter(r.rule for f in findings for r in f.consequences)
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [f"{n:>{width}}  {code}  {rule:<24} {sev.label}"
             for (code, rule, sev), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))]
    lines.append(f"{len(findings)} finding{'' if len(findings) == 1 else 's'}")
    if folded:
        lines[-1] += ("; carried as consequences: "
                      + ", ".join(f"{n} {rule}" for rule, n in sorted(folded.items())))
    return "\n".join(lines) + "\n"


def frame(source_lines: list[str], line: int, column: int, *, context: int = 1,
          severity: Severity = Severity.ERROR, color: bool = False) -> list[str]:
    """The code frame of a 1-based (line, column): ``context`` lines above, the line, a caret.

    Empty when the line is not in the source (a finding about a whole file at line 0, or a
    file that changed since). Tabs are expanded and wide characters counted twice so that the
    caret lands under the column on a terminal; control characters are shown escaped.
    """
    if not 1 <= line <= len(source_lines):
        return []
    style = _Style(color)
    width = len(str(line))
    gutter = style(" " * width + " |", "1;34")
    out = [gutter]
    for n in range(max(1, line - context), line + 1):
        text = _display(source_lines[n - 1])
        out.append(f"{style(str(n).rjust(width) + ' |', '1;34')} {text}".rstrip())
    target = source_lines[line - 1]
    col = max(1, min(column, len(target) + 1))
    pad = _width(_display(target[: col - 1]))
    out.append(f"{gutter} {' ' * pad}{style('^', '1;' + _SEVERITY_COLOR[severity])}")
    return out


def summary(findings: list[Finding], stats: Stats, *, compared: Comparison | None = None) -> str:
    """``1 finding (1 error); 18 findings already on HEAD not shown; fixes 5; ... checked in 0.30s``:
    with ``compared``, ``findings`` are the new ones and the comparison's counts follow."""
    what = count_text(findings)
    fixable = sum(1 for f in findings if f.fix is not None)
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe and f.fix.edits)
    if fixable:
        applies = f"; {safe} safe: --fix applies {'it' if safe == 1 else 'them'}" if safe else ""
        what += f", {fixable} with a fix (--show-fixes{applies})"
    if compared is not None and compared.summary():
        what += f"; {compared.summary()}"
    unchecked = unchecked_text(stats)
    return f"{what}; {checked_text(stats)} checked in {stats.seconds:.2f}s" + (f"; {unchecked}" if unchecked else "")


def _headline(f: Finding, style: _Style) -> str:
    if not style.color:
        return _clean(f.text())
    where = style(_clean(f"{f.path}:{f.line}:{f.column}:"), "1")
    severity = style(f.severity.label, "1;" + _SEVERITY_COLOR[f.severity])
    code = style(f.code, "1")
    return f"{where} {severity} {code} {_clean(f.message)} {style(f'[{f.rule}]', '2')}"


def _diff_line(line: str, style: _Style) -> str:
    line = _clean(line)
    if line.startswith(("+++", "---")):
        return style(line, "1")
    if line.startswith("@@"):
        return style(line, "36")
    if line.startswith("+"):
        return style(line, "32")
    if line.startswith("-"):
        return style(line, "31")
    return line


def _clean(text: str) -> str:
    """Repository text must not drive the terminal or reorder the line: controls and bidi
    characters are shown escaped (``bot.report.visible``)."""
    return visible(text)


def _display(text: str) -> str:
    return _clean(text.rstrip("\r").expandtabs(4))


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1
               for ch in text)
