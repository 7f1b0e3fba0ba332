"""Findings: small frozen records, one canonical text form, a stable fingerprint."""

from __future__ import annotations

import difflib
import enum
import hashlib
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None


@dataclass(frozen=True)
class Related:
    path: str
    line: int
    note: str


@dataclass(frozen=True)
class Fix:
    description: str
    diff: str  # a unified diff with a/ and b/ paths, ``git apply`` ready
    safe: bool = False


def file_diff(path: str, old: str, new: str) -> str:
    """The unified diff turning one file's text ``old`` into ``new``."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


@dataclass(frozen=True)
class Finding:
    rule: str
    code: str
    severity: Severity
    path: str
    line: int
    column: int
    message: str
    related: tuple[Related, ...] = ()
    entries: tuple[str, ...] = ()
    fix: Fix | None = None
    # What identifies the problem independently of line numbers (they move between
    # revisions); defaults to the message.
    key: str = field(default="", compare=False)

    @property
    def fingerprint(self) -> str:
        basis = "\0".join((self.rule, self.path, self.key or self.message))
        return hashlib.sha256(basis.encode()).hexdigest()[:20]

    def text(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message} [{self.rule}]"

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.rule, self.message)
