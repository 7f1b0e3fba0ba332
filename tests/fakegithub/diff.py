"""Unified-diff patches as GitHub's pull-request files endpoint returns them (``patch``), and the
line/side/position arithmetic GitHub applies to review comments on them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class DiffLine:
    """One line of a patch. ``position`` is GitHub's review-comment position: the number of lines
    below the file's first ``@@`` header (later hunk headers count as lines too)."""

    position: int
    kind: str  # "+", "-", " ", "@" (a later hunk header), "\\" (no newline marker)
    old: int | None  # line number on the LEFT side (base), if the line exists there
    new: int | None  # line number on the RIGHT side (head), if the line exists there
    hunk: int  # 0-based hunk index
    index: int  # index into Patch.raw


class Patch:
    """A parsed ``patch`` string (``None`` for binary or too-large files: no commentable lines)."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.raw: list[str] = text.split("\n") if text else []
        if self.raw and self.raw[-1] == "":
            self.raw.pop()
        self.lines: list[DiffLine] = []
        self.hunk_starts: list[int] = []
        self.additions = 0
        self.deletions = 0
        old = new = 0
        hunk = -1
        base = None  # index of the first hunk header; positions count from it
        for i, line in enumerate(self.raw):
            m = _HUNK.match(line)
            if m:
                hunk += 1
                self.hunk_starts.append(i)
                old, new = int(m.group(1)), int(m.group(3))
                if base is None:
                    base = i
                    continue
                self.lines.append(DiffLine(i - base, "@", None, None, hunk, i))
                continue
            if base is None:
                continue  # junk before the first header (e.g. "diff --git" lines): not part of the patch
            kind = line[:1] or " "
            if kind == "+":
                self.lines.append(DiffLine(i - base, "+", None, new, hunk, i))
                new += 1
                self.additions += 1
            elif kind == "-":
                self.lines.append(DiffLine(i - base, "-", old, None, hunk, i))
                old += 1
                self.deletions += 1
            elif kind == "\\":
                self.lines.append(DiffLine(i - base, "\\", None, None, hunk, i))
            else:
                self.lines.append(DiffLine(i - base, " ", old, new, hunk, i))
                old += 1
                new += 1

    def find(self, line: int, side: str) -> DiffLine | None:
        """The diff line a comment at (line, side) anchors to: RIGHT = an added or context line of
        the head, LEFT = a deleted or context line of the base. None when outside every hunk."""
        for dl in self.lines:
            if side == "RIGHT" and dl.kind in "+ " and dl.new == line:
                return dl
            if side == "LEFT" and dl.kind in "- " and dl.old == line:
                return dl
        return None

    def at_position(self, position: int) -> DiffLine | None:
        for dl in self.lines:
            if dl.position == position:
                return dl if dl.kind in "+- " else None
        return None

    def diff_hunk(self, dl: DiffLine) -> str:
        """GitHub's ``diff_hunk``: the hunk header through the commented line."""
        start = self.hunk_starts[dl.hunk]
        return "\n".join(self.raw[start : dl.index + 1])
