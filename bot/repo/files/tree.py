"""The files of a benchmark repo: a work tree, or any git revision, behind one interface.

Paths are repo-relative POSIX strings. Symlinks inside the repo are resolved (a launcher
may be a link to another); links that leave the repo or loop resolve to nothing.

Only regular files are read, and only up to a size budget (``max_bytes``, default 8 MB,
at most 64 MB): a FIFO, a device or a socket in a work tree is never opened (opening a
FIFO blocks), and a file over the budget is never parsed. ``problem(path)`` says why a
file that exists could not be read; ``read`` gives None for it.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Iterable
from functools import cached_property

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
HARD_MAX_BYTES = 64 * 1024 * 1024


class TreeError(Exception):
    """The tree cannot be read at all (no such directory, not a git revision)."""


class Tree:
    """Base class: subclasses fill ``_entries`` (path -> link target or None)."""

    root: str
    max_bytes: int = DEFAULT_MAX_BYTES  # a bigger file is not read (see ``problem``)

    @cached_property
    def _problems(self) -> dict[str, str]:
        """Real path -> why reading it failed (filled by ``_read``)."""
        return {}

    def _check(self, path: str) -> str | None:
        """Why a real path cannot be read, found without reading it (None: try)."""
        return None

    @cached_property
    def _entries(self) -> dict[str, str | None]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _read(self, path: str) -> bytes | None:  # pragma: no cover - abstract
        raise NotImplementedError

    @cached_property
    def _dirs(self) -> frozenset[str]:
        dirs: set[str] = set()
        for p in self._entries:
            d = posixpath.dirname(p)
            while d and d not in dirs:
                dirs.add(d)
                d = posixpath.dirname(d)
        return frozenset(dirs)

    @cached_property
    def _sorted(self) -> tuple[str, ...]:
        return tuple(sorted(self._entries))

    @cached_property
    def _globs(self) -> dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]:
        return {}

    def files(self) -> list[str]:
        """Every file path (links included), sorted."""
        return list(self._sorted)

    def glob(self, patterns: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
        """Paths matching any pattern (``**`` crosses folders), minus excluded ones."""
        key = (tuple(patterns), tuple(exclude))
        got = self._globs.get(key)
        if got is None:
            pats = [_compile(p) for p in key[0]]
            excl = [_compile(p) for p in key[1]]
            got = self._globs[key] = tuple(f for f in self._sorted if any(m(f) for m in pats)
                                           and not any(m(f) for m in excl))
        return list(got)

    def resolve(self, path: str) -> str | None:
        """The real file a path names, following links; None if it does not exist."""
        path = posixpath.normpath(path)
        for _ in range(40):
            if path not in self._entries:
                return None
            target = self._entries[path]
            if target is None:
                return path
            if target.startswith("/"):
                return None
            path = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if path.startswith("../"):
                return None
        return None

    def is_link(self, path: str) -> bool:
        return self._entries.get(posixpath.normpath(path)) is not None

    def is_file(self, path: str) -> bool:
        return self.resolve(path) is not None

    def is_dir(self, path: str) -> bool:
        path = posixpath.normpath(path)
        return path in ("", ".") or path in self._dirs

    def read(self, path: str) -> bytes | None:
        real = self.resolve(path)
        if real is None or real in self._problems:
            return None
        problem = self._check(real)
        if problem is not None:
            self._problems[real] = problem
            return None
        return self._read(real)

    def limit(self, max_bytes: int) -> None:
        """Set the file-size budget (at most HARD_MAX_BYTES); earlier verdicts are forgotten."""
        self.max_bytes = max(1, min(max_bytes, HARD_MAX_BYTES))
        self._problems.clear()

    def problem(self, path: str) -> str | None:
        """Why a file that exists cannot be read (``not a regular file (a FIFO)``, ``too
        large (50.0 MB; the limit is 8 MB)``, ``unreadable (Permission denied)``);
        None if it can be, or does not exist."""
        real = self.resolve(path)
        if real is None:
            return None
        if real not in self._problems:
            problem = self._check(real)
            if problem is not None:
                self._problems[real] = problem
        return self._problems.get(real)

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return data.decode("utf-8", "replace") if data is not None else None

    def content_key(self) -> str | None:
        """A key that changes whenever anything a lint could read of the tree does (paths,
        links, bytes, why a file cannot be read; under the current size budget); None: this
        kind of tree has none (``bot.lintcache`` does not keep its lint)."""
        return None


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> "_Matcher":
    return _Matcher(pattern)


def glob_match(pattern: str, path: str) -> bool:
    """Whether a repo-relative path matches a glob (``**/`` is zero or more folders)."""
    return _compile(pattern)(path)


class _Matcher:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        # "**/" matches zero or more folders
        self.variants = {pattern}
        if "**/" in pattern:
            self.variants.add(pattern.replace("**/", ""))

        # fnmatch's own translation (its ``*`` crosses ``/`` too), all variants in one pattern,
        # and the literal start every match has, looked at first
        self._match = re.compile("|".join(f"(?:{fnmatch.translate(v.replace('**', '*'))})"
                                          for v in sorted(self.variants))).match
        self._start = os.path.commonprefix([re.split(r"[*?\[]", v, maxsplit=1)[0] for v in self.variants])

    def __call__(self, path: str) -> bool:
        return path.startswith(self._start) and self._match(path) is not None


class WorkTree(Tree):
    """A directory on disk."""

    SKIP_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"})

    def __init__(self, root: str) -> None:
        if not os.path.isdir(root):
            raise TreeError(f"{root}: not a directory")
        self.root = os.path.abspath(root)

    @cached_property
    def _entries(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in self.SKIP_DIRS)
            rel = os.path.relpath(dirpath, self.root)
            rel = "" if rel == "." else rel.replace(os.sep, "/")
            names = list(filenames)
            # links to folders are listed as files only if they are links (we do not descend)
            names += [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            for name in names:
                full = os.path.join(dirpath, name)
                path = f"{rel}/{name}" if rel else name
                if os.path.islink(full):
                    out[path] = os.readlink(full).replace(os.sep, "/")
                else:
                    out[path] = None
        return out

    def content_key(self) -> str:
        """Every path with its link target, or its bytes' digest, or why it cannot be read:
        contents, not modification times (an edit within one tick of the file system's
        clock still changes the key)."""
        h = hashlib.blake2b(digest_size=32)
        h.update(f"work {self.max_bytes}\0".encode())
        for path in self._sorted:
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            target = self._entries[path]
            if target is not None:
                h.update(b"L" + target.encode("utf-8", "surrogateescape") + b"\0")
                continue
            data = self._read(path)
            if data is None:
                h.update(b"P" + self._problems.get(path, "unreadable").encode() + b"\0")
                continue
            h.update(b"F" + hashlib.blake2b(data, digest_size=32).digest())
        return h.hexdigest()

    def _check(self, path: str) -> str | None:
        try:
            st = os.stat(os.path.join(self.root, path))
        except OSError as exc:
            return f"unreadable ({exc.strerror})"
        return _not_regular(st.st_mode) or too_large(st.st_size, self.max_bytes)

    def _read(self, path: str) -> bytes | None:
        """The file's bytes: opened without blocking or following a link, and checked again
        on the open descriptor (the file may have been swapped since ``_check``)."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(os.path.join(self.root, path), flags)
        except OSError as exc:
            self._problems[path] = f"unreadable ({exc.strerror})"
            return None
        try:
            st = os.fstat(fd)
            problem = _not_regular(st.st_mode) or too_large(st.st_size, self.max_bytes)
            if problem is None:
                chunks: list[bytes] = []
                left = self.max_bytes + 1
                while left > 0:
                    chunk = os.read(fd, min(left, 1 << 20))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    left -= len(chunk)
                data = b"".join(chunks)
                if len(data) <= self.max_bytes:
                    return data
                problem = too_large(len(data), self.max_bytes)
        except OSError as exc:
            problem = f"unreadable ({exc.strerror})"
        finally:
            os.close(fd)
        self._problems[path] = problem or "unreadable"
        return None


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"))


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"not a regular file ({kind})"


def too_large(size: int, limit: int) -> str | None:
    """``too large (50.0 MB; the limit is 8 MB)`` when ``size`` is over ``limit`` bytes."""
    if size <= limit:
        return None
    return f"too large ({_mb(size)}; the limit is {_mb(limit)})"


def _mb(size: int) -> str:
    mb = size / (1024 * 1024)
    return f"{mb:.0f} MB" if mb == int(mb) else f"{mb:.1f} MB"



ROOT_MARKERS = (".benchbot.yml", ".benchbot.yaml", ".git")


def find_root(path: str, configs: Iterable[str] = ()) -> str:
    """The benchmark repo root that ``path`` is in, found as git and ruff find theirs.

    ``path`` itself when it looks like a root, else its nearest ancestor that does: a
    folder with master configs (any of the ``configs`` globs, relative to it), a
    ``.benchbot.yml``/``.benchbot.yaml`` or a ``.git``. The search stops at the first such
    folder (a ``.git`` is a repo's boundary); when there is none, ``path`` is returned as
    given and the caller reports what it lacks. Only a work tree has ancestors: the folder
    of a ``--rev`` lint is the git repo itself.
    """
    patterns = tuple(configs)
    here = os.path.abspath(path)
    while True:
        if _looks_like_root(here, patterns):
            return path if here == os.path.abspath(path) else here
        parent = os.path.dirname(here)
        if parent == here:
            return path
        here = parent


def _looks_like_root(folder: str, configs: tuple[str, ...]) -> bool:
    if any(os.path.lexists(os.path.join(folder, marker)) for marker in ROOT_MARKERS):
        return True
    # glob.escape: the folder's own name may contain [ or *; the profile's globs stay globs
    return any(glob.glob(os.path.join(glob.escape(folder), pattern)) for pattern in configs)
