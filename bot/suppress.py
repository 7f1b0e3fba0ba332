"""Inline suppressions, parsed by one regex in one place.

```
vllm serve "$MODEL" --ep 8   # benchbot: ignore[unused-config-field] EP is set by the image
# benchbot: ignore[dead-script, BB101]: kept for manual runs
bash "$SCRIPT"
# benchbot: ignore-file[dead-script] reason...
```

``ignore[...]`` at the end of a line covers that line; on a line of its own it covers the
next line that is not blank and not a comment. ``ignore-file[...]`` covers the whole
file. Rule ids or codes, comma-separated; the text after the bracket is the reason. The
same syntax works in shell and YAML files (both use ``#`` comments).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# A ``#`` that starts a comment (line start or after whitespace), then the directive.
SUPPRESSION = re.compile(
    r"(?:^|(?<=\s))#\s*benchbot:\s*(?P<kind>ignore-file|ignore)\s*\[(?P<rules>[^\]\n]*)\]"
    r"[ \t]*(?:--|[:\-\u2014])?[ \t]*(?P<reason>[^\n]*)")
_CHEAP = "benchbot:"


@dataclass(frozen=True)
class Suppression:
    path: str
    line: int  # where the comment is
    column: int
    covers: int  # the line it covers; 0 = the whole file
    rules: tuple[str, ...]  # as written (ids or codes)
    reason: str
    standalone: bool  # the comment is alone on its line
    text: str  # the whole source line


def parse(path: str, text: str) -> list[Suppression]:
    """Every suppression comment in one file."""
    if _CHEAP not in text:
        return []
    out: list[Suppression] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _CHEAP not in line:
            continue
        m = SUPPRESSION.search(line)
        if m is None:
            continue
        rules = tuple(r.strip() for r in m.group("rules").split(",") if r.strip())
        standalone = not line[: m.start()].strip()
        if m.group("kind") == "ignore-file":
            covers = 0
        elif standalone:
            covers = _next_code_line(lines, i)
        else:
            covers = i + 1
        out.append(Suppression(path, i + 1, m.start() + 1, covers, rules, m.group("reason").strip(), standalone,
                               line))
    return out


def _next_code_line(lines: list[str], i: int) -> int:
    for j in range(i + 1, len(lines)):
        stripped = lines[j].strip()
        if stripped and not stripped.startswith("#"):
            return j + 1
    return i + 1


def parse_files(files: Iterable[tuple[str, str]]) -> dict[str, list[Suppression]]:
    out: dict[str, list[Suppression]] = {}
    for path, text in files:
        found = parse(path, text)
        if found:
            out[path] = found
    return out


def without_rules(s: Suppression, drop: set[str]) -> str | None:
    """The source line with the rules in ``drop`` taken out of the comment; None deletes
    the line (a standalone comment left with no rule)."""
    keep = [r for r in s.rules if r not in drop]
    m = SUPPRESSION.search(s.text)
    if m is None:  # pragma: no cover - the line was matched when parsed
        return s.text
    if keep:
        return s.text[: m.start("rules")] + ", ".join(keep) + s.text[m.end("rules"):]
    if s.standalone:
        return None
    return s.text[: m.start()].rstrip()
