"""Findings: small frozen records, one canonical text form, a stable fingerprint.

A finding is a *cause*. What the cause brings about elsewhere (the scripts it leaves dead,
the entries it strands, a launcher nobody runs any more) are its *consequences*: they are
listed in ``related`` as :class:`Related` records that carry the rule and fingerprint they
would have had as findings of their own, so that a consumer (the PR bot, a baseline) can
match them, but they are not reported separately.
"""

from __future__ import annotations

import difflib
import enum
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.repo.jobs import Coverage


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
    # Set on a consequence: the rule and the key (stable subject) it would have as a finding
    # of its own; its fingerprint is the one that finding would have.
    rule: str = ""
    key: str = ""

    @property
    def is_consequence(self) -> bool:
        return bool(self.rule)

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.rule, self.key or self.path) if self.rule else ""


@dataclass(frozen=True)
class Edit:
    """One file's whole text before and after a fix (applied only if ``old`` still matches)."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Fix:
    description: str
    given: str  # the diff when there are no edits to make it from
    safe: bool = False
    edits: tuple[Edit, ...] = ()

    @classmethod
    def of(cls, description: str, edits: tuple[Edit, ...] | list[Edit], safe: bool = False) -> Fix:
        """A fix from whole-file edits; the diff is made from them when it is first asked for
        (a lint that prints no diff, ``history``, never makes one)."""
        return cls(description, "", safe, tuple(edits))

    @cached_property
    def diff(self) -> str:
        """A unified diff with a/ and b/ paths, ``git apply`` ready."""
        if not self.edits:
            return self.given
        return "".join(file_diff(e.path, e.old, e.new) for e in self.edits)


_NO_EOL = "\\ No newline at end of file\n"


def file_diff(path: str, old: str, new: str) -> str:
    """The unified diff turning one file's text ``old`` into ``new``, ``git apply`` ready:
    a last line without a newline gets git's ``\\ No newline at end of file`` marker."""
    out: list[str] = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"a/{path}", f"b/{path}"):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + _NO_EOL)
    return "".join(out)


def fingerprint_of(rule: str, key: str) -> str:
    return hashlib.sha256(f"{rule}\0{key}".encode()).hexdigest()[:20]


# A key is made of parts separated by | and , (paths, entry names, constructs); a rename
# maps each part that is a path.
_KEY_SPLIT = re.compile(r"([|,])")


def rename_key(key: str, renames: Mapping[str, str]) -> str:
    if not renames:
        return key
    return "".join(renames.get(part, part) for part in _KEY_SPLIT.split(key))


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
    # The stable subject of the finding: what identifies the problem independently of line
    # numbers and wording (``launcher|variant|construct``, ``entry|script``). Parts are
    # separated by ``|`` or ``,`` so that renames can be followed. Without a key the
    # fingerprint falls back to path and message.
    key: str = field(default="", compare=False)

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.rule, self.key or f"{self.path}|{self.message}")

    @property
    def consequences(self) -> tuple[Related, ...]:
        return tuple(r for r in self.related if r.is_consequence)

    def moved(self, renames: Mapping[str, str]) -> Finding:
        """The same finding with renamed paths (old -> new): how a base finding is matched
        against the head after ``git mv``."""
        if not renames:
            return self
        key = rename_key(self.key, renames) if self.key else f"{renames.get(self.path, self.path)}|{self.message}"
        related = tuple(replace(r, path=renames.get(r.path, r.path), key=rename_key(r.key, renames))
                        for r in self.related)
        return replace(self, path=renames.get(self.path, self.path), related=related, key=key)

    def text(self) -> str:
        """The canonical one-line form: ``path:line:col: error BB103 message [rule]``."""
        return f"{self.path}:{self.line}:{self.column}: {self.severity.label} {self.code} {self.message} [{self.rule}]"

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.rule, self.message)


@dataclass(frozen=True)
class Stats:
    """The figures of one lint: what it read, how long it took, how far it got."""

    files: int
    entries: int
    launchers: int
    scripts: int
    seconds: float
    # how far the analysis got (entries analysed, handed to external tools, unknown; recipes)
    coverage: Coverage | None = None


def plural(n: int, word: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {word}{'' if n == 1 else 's'}"
