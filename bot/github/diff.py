"""Which lines of a pull request's files a review comment may sit on.

GitHub's pull-request files API gives each file's unified-diff hunks (``patch``). A review
comment must sit on the right side of a hunk; benchbot only comments on lines the pull
request added or changed (``+`` lines), never on context it did not touch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.github.port import ChangedFile

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def hunk_start(line: str) -> tuple[int, int] | None:
    """(left, right) first line numbers of a unified-diff hunk header, or None."""
    m = _HUNK.match(line)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class FileLines:
    added: frozenset[int] = frozenset()  # right-side lines with a '+'
    visible: frozenset[int] = frozenset()  # every right-side line inside a hunk ('+' and context)
    whole: bool = False  # a new file: every line is the pull request's


@dataclass
class Changes:
    files: dict[str, FileLines] = field(default_factory=dict)

    def added(self, path: str, line: int) -> bool:
        fl = self.files.get(path)
        return fl is not None and line in fl.added

    def touches(self, prefixes: tuple[str, ...]) -> bool:
        return any(p.startswith(prefixes) for p in self.files)


def parse_patch(patch: str) -> tuple[frozenset[int], frozenset[int]]:
    """(added, visible) right-side line numbers of a unified diff's hunks."""
    added: set[int] = set()
    visible: set[int] = set()
    line = 0
    in_hunk = False
    for text in patch.splitlines():
        start = hunk_start(text)
        if start is not None:
            line = start[1]
            in_hunk = True
            continue
        if not in_hunk or text.startswith("\\"):  # "\ No newline at end of file"
            continue
        if text.startswith("+"):
            added.add(line)
            visible.add(line)
            line += 1
        elif text.startswith("-"):
            continue
        else:  # context (' ', or an empty line where a tool stripped the space)
            visible.add(line)
            line += 1
    return frozenset(added), frozenset(visible)


def changes(files: list[ChangedFile]) -> Changes:
    out = Changes()
    for f in files:
        if f.status == "removed":
            continue
        if f.patch is None:
            # GitHub leaves the patch out of large or binary files: nothing to anchor on.
            out.files[f.path] = FileLines(whole=f.status == "added")
            continue
        added, visible = parse_patch(f.patch)
        out.files[f.path] = FileLines(added, visible, whole=f.status == "added")
    return out
