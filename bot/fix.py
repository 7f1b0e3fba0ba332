"""``lint --fix``: choose the fixes to apply (pure) and write them (the one I/O step).

A fix carries whole-file edits (``Edit(path, old, new)``). An edit is applied only when
the file still holds exactly ``old`` (so a stale finding never clobbers newer work), one
fix per file per round: the linter runs again after each round, because a fix may change
the line numbers or the findings of the next. Files are replaced atomically (temp file in
the same folder, then ``os.replace``), keeping their mode; nothing outside the repo root,
and nothing but regular files, is ever written.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.findings import Edit, Finding

MAX_ROUNDS = 4


@dataclass
class Plan:
    chosen: list[Finding] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, why not)
    deferred: int = 0  # fixes for a file another fix of this round edits: next round


def plan(findings: list[Finding], unsafe: bool, current: Callable[[str], str | None]) -> Plan:
    """The fixes to apply now. ``current(path)`` is the file's text as it is on disk
    (None when it is not a readable UTF-8 regular file)."""
    out = Plan()
    taken: set[str] = set()
    for f in sorted(findings, key=lambda f: (-f.severity, f.sort_key())):
        if f.fix is None:
            continue
        if not f.fix.edits:
            out.skipped.append((f, "the fix has no edits to apply (apply its diff by hand)"))
            continue
        if not f.fix.safe and not unsafe:
            out.skipped.append((f, "unsafe fix (--unsafe-fixes applies it)"))
            continue
        paths = {e.path for e in f.fix.edits}
        if paths & taken:
            out.deferred += 1
            continue
        stale = [e.path for e in f.fix.edits if current(e.path) != e.old]
        if stale:
            out.skipped.append((f, f"{', '.join(stale)} changed since it was read"))
            continue
        out.chosen.append(f)
        out.edits.extend(f.fix.edits)
        taken |= paths
    return out


class FixError(Exception):
    pass


def _target(root: str, path: str) -> str:
    full = os.path.realpath(os.path.join(root, path))
    base = os.path.realpath(root)
    if os.path.commonpath([full, base]) != base:
        raise FixError(f"{path}: outside the repo")
    return full


def read_current(root: str) -> Callable[[str], str | None]:
    """``current`` for :func:`plan` over a work tree."""
    def current(path: str) -> str | None:
        try:
            full = _target(root, path)
            st = os.stat(full)
            if not stat.S_ISREG(st.st_mode):
                return None
            with open(full, "rb") as fh:
                return fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError, FixError):
            return None
    return current


def write(root: str, edits: list[Edit]) -> list[str]:
    """Write the edits (atomically, mode kept); the paths written."""
    done = []
    for e in edits:
        full = _target(root, e.path)
        st = os.stat(full)
        if not stat.S_ISREG(st.st_mode):
            raise FixError(f"{e.path}: not a regular file")
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(full), prefix=".benchbot-fix-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(e.new.encode("utf-8"))
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            os.replace(tmp, full)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise FixError(f"{e.path}: {exc.strerror}") from None
        done.append(e.path)
    return done
