"""The files of a benchmark repo: a work tree, or any git revision, behind one interface.

Paths are repo-relative POSIX strings. Symlinks inside the repo are resolved (a launcher
may be a link to another); links that leave the repo or loop resolve to nothing.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import os
import posixpath
from collections.abc import Iterable
from functools import cached_property


class TreeError(Exception):
    """The tree cannot be read at all (no such directory, not a git revision)."""


class Tree:
    """Base class: subclasses fill ``_entries`` (path -> link target or None)."""

    root: str

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

    def files(self) -> list[str]:
        """Every file path (links included), sorted."""
        return sorted(self._entries)

    def glob(self, patterns: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
        """Paths matching any pattern (``**`` crosses folders), minus excluded ones."""
        pats = [_compile(p) for p in patterns]
        excl = [_compile(p) for p in exclude]
        return [f for f in self.files() if any(m(f) for m in pats) and not any(m(f) for m in excl)]

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
        return self._read(real) if real is not None else None

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return data.decode("utf-8", "replace") if data is not None else None


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

    def __call__(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, v.replace("**", "*")) for v in self.variants)


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

    def _read(self, path: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, path), "rb") as fh:
                return fh.read()
        except OSError:
            return None


def open_tree(path: str, rev: str | None = None) -> Tree:
    if rev:
        from bot.repo.git import GitTree

        return GitTree(path, rev)
    return WorkTree(path)


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
