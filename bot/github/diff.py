"""Which lines of a pull request's files a review comment may sit on.

GitHub's pull-request files API gives each file's unified-diff hunks (``patch``). A review
comment sits on a line of a hunk: benchbot comments on lines the pull request added or changed
(``+`` lines, the right side), on lines it deleted (``-`` lines, the left side, numbered as on
the base) when the cause is a deletion, or on a whole file it changed; never on context it did
not touch.
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
    deleted: tuple[tuple[int, str], ...] = ()  # left-side (base) lines with a '-', and their text
    status: str = "modified"
    previous: str | None = None  # a renamed file's old path


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
    added, visible, _ = parse_sides(patch)
    return added, visible


def parse_sides(patch: str) -> tuple[frozenset[int], frozenset[int], tuple[tuple[int, str], ...]]:
    """(added, visible) right-side line numbers of a unified diff's hunks, and its deleted
    left-side lines with their text."""
    added: set[int] = set()
    visible: set[int] = set()
    deleted: list[tuple[int, str]] = []
    line = old = 0
    in_hunk = False
    for text in patch.splitlines():
        start = hunk_start(text)
        if start is not None:
            old, line = start
            in_hunk = True
            continue
        if not in_hunk or text.startswith("\\"):  # "\ No newline at end of file"
            continue
        if text.startswith("+"):
            added.add(line)
            visible.add(line)
            line += 1
        elif text.startswith("-"):
            deleted.append((old, text[1:]))
            old += 1
        else:  # context (' ', or an empty line where a tool stripped the space)
            visible.add(line)
            line += 1
            old += 1
    return frozenset(added), frozenset(visible), tuple(deleted)


def changes(files: list[ChangedFile]) -> Changes:
    """Every file the pull request changed, removed ones included (their lines are all deleted)."""
    out = Changes()
    for f in files:
        if f.patch is None:
            # GitHub leaves the patch out of large or binary files: no line to anchor on.
            out.files[f.path] = FileLines(whole=f.status == "added", status=f.status, previous=f.previous_path)
            continue
        added, visible, deleted = parse_sides(f.patch)
        if f.status == "removed":
            added = visible = frozenset()
        out.files[f.path] = FileLines(added, visible, whole=f.status == "added", deleted=deleted, status=f.status,
                                      previous=f.previous_path)
    return out
