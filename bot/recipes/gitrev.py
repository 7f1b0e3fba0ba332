"""The commit a local checkout is at, read as text from its ``.git`` (``git_revision``): the
directory is input, so no git command is run on it (``bot.recipes.sources.LocalSource``)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_GIT_REF = re.compile(r"refs/[A-Za-z0-9._/+@-]+\Z")
_SMALL = 4096
_PACKED_MAX = 64 << 20


def _small_text(path: Path, limit: int = _SMALL) -> str | None:
    """A regular file's text when it holds at most ``limit`` bytes (a FIFO is not waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit + 1).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def git_revision(root: Path) -> str | None:
    """The commit checked out in the work tree ``root``, read as text: ``.git/HEAD`` (a SHA, or
    ``ref: refs/...``), then that ref's file, then ``packed-refs``. ``.git`` may be a file
    (``gitdir: PATH``: a worktree, a submodule). None when it is not a checkout or says nothing
    clear (no commit yet). No git command is run: the directory is input."""
    dotgit = root / ".git"
    gitdir = dotgit
    if dotgit.is_file():
        text = _small_text(dotgit)
        if text is None or not text.startswith("gitdir:"):
            return None
        gitdir = Path(text[len("gitdir:"):].strip())
        gitdir = gitdir if gitdir.is_absolute() else root / gitdir
    head = _small_text(gitdir / "HEAD")
    if head is None:
        return None
    head = head.strip()
    if _HEX.match(head):
        return head
    ref = head[len("ref:"):].strip() if head.startswith("ref:") else ""
    if not _GIT_REF.match(ref) or ".." in ref:
        return None
    common = gitdir
    pointer = _small_text(gitdir / "commondir")
    if pointer is not None and pointer.strip():
        common = gitdir / pointer.strip()
    for base in dict.fromkeys((gitdir, common)):
        got = _small_text(base / ref)
        if got is not None and _HEX.match(got.strip()):
            return got.strip()
    packed = _small_text(common / "packed-refs", _PACKED_MAX)
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _HEX.match(sha):
            return sha
    return None
