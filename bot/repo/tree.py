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
import subprocess
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


class GitTree(Tree):
    """A git revision, read with ``git ls-tree`` and ``git cat-file --batch``."""

    def __init__(self, repo: str, rev: str) -> None:
        self.repo = repo
        self.rev = rev
        self.root = f"{repo}@{rev}"
        try:
            self.commit = self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
        except TreeError as exc:
            raise TreeError(f"{rev}: not a revision of {repo} ({exc})") from None
        self._blobs: dict[str, str] = {}
        self._cache: dict[str, bytes] = {}

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        try:
            proc = subprocess.run(["git", "-C", self.repo, *args], input=data, capture_output=True, check=False)
        except OSError as exc:
            raise TreeError(f"cannot run git: {exc}") from None
        if proc.returncode != 0:
            raise TreeError(proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
        return proc.stdout

    @cached_property
    def _entries(self) -> dict[str, str | None]:
        raw = self._git("ls-tree", "-r", "-z", "--full-tree", self.commit)
        out: dict[str, str | None] = {}
        links: list[str] = []
        for rec in raw.split(b"\0"):
            if not rec:
                continue
            meta, _, path_b = rec.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            if kind != "blob":
                continue
            path = path_b.decode("utf-8", "surrogateescape")
            self._blobs[path] = sha
            out[path] = None
            if mode == "120000":
                links.append(path)
        if links:
            targets = self._cat([self._blobs[p] for p in links])
            for p, t in zip(links, targets):
                out[p] = (t or b"").decode("utf-8", "replace")
        return out

    def _cat(self, shas: list[str]) -> list[bytes | None]:
        data = self._git("cat-file", "--batch", data="".join(s + "\n" for s in shas).encode())
        out: list[bytes | None] = []
        pos = 0
        for _ in shas:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].split()
            if len(header) < 3 or header[1] == b"missing":
                out.append(None)
                pos = nl + 1
                continue
            size = int(header[2])
            out.append(data[nl + 1 : nl + 1 + size])
            pos = nl + 1 + size + 1
        return out

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read many blobs with one git process."""
        want = [p for p in paths if p in self._blobs and p not in self._cache and self._entries.get(p) is None]
        if not want:
            return
        for p, data in zip(want, self._cat([self._blobs[p] for p in want])):
            if data is not None:
                self._cache[p] = data

    def _read(self, path: str) -> bytes | None:
        _ = self._entries
        if path not in self._cache:
            sha = self._blobs.get(path)
            if sha is None:
                return None
            data = self._cat([sha])[0]
            if data is None:
                return None
            self._cache[path] = data
        return self._cache[path]


def open_tree(path: str, rev: str | None = None) -> Tree:
    if rev:
        return GitTree(path, rev)
    return WorkTree(path)


# ------------------------------------------------------------------ the index, renames

STAGED = "--cached"  # ``renames(repo, rev, STAGED)``: compare with the index


def _run_git(repo: str, *args: str, data: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], input=data, capture_output=True, check=False)
    except OSError as exc:
        raise TreeError(f"cannot run git: {exc}") from None
    if proc.returncode != 0:
        raise TreeError(proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return proc.stdout


def _batch(repo: str, shas: list[str]) -> list[bytes | None]:
    """Many blobs with one ``git cat-file --batch``; None for a missing one."""
    if not shas:
        return []
    data = _run_git(repo, "cat-file", "--batch", data="".join(s + "\n" for s in shas).encode())
    out: list[bytes | None] = []
    pos = 0
    for _ in shas:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        if len(header) < 3 or header[1] == b"missing":
            out.append(None)
            pos = nl + 1
            continue
        size = int(header[2])
        out.append(data[nl + 1 : nl + 1 + size])
        pos = nl + 1 + size + 1
    return out


def has_commit(repo: str, rev: str) -> bool:
    """Whether ``rev`` names a commit of ``repo`` (False for HEAD before the first commit)."""
    try:
        _run_git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except TreeError:
        return False
    return True


def renames(repo: str, old_rev: str, new: str | None = None) -> dict[str, str]:
    """Files renamed (old path -> new path) from ``old_rev`` to ``new``: a revision, the index
    (:data:`STAGED`) or, for None, the work tree; from ``git diff -M --name-status``."""
    for rev in (old_rev, new):
        if rev is not None and rev != STAGED and rev.startswith("-"):
            raise TreeError(f"{rev}: not a revision")
    args = ["-c", "core.quotePath=false", "diff", "-M", "--name-status", "-z", "--no-color", "--no-ext-diff",
            old_rev]
    if new is not None:
        args.append(new)
    raw = _run_git(repo, *args, "--").split(b"\0")
    out: dict[str, str] = {}
    i = 0
    while i < len(raw):
        status = raw[i].decode("ascii", "replace")
        if not status:
            i += 1
            continue
        if status[0] in "RC":  # R100 / C075: a score, then two paths
            if status[0] == "R" and i + 2 < len(raw):
                out[raw[i + 1].decode("utf-8", "surrogateescape")] = raw[i + 2].decode("utf-8", "surrogateescape")
            i += 3
        else:
            i += 2
    return out


class IndexTree(Tree):
    """What is staged: the git index of a work tree (``git ls-files -s``), so that a
    pre-commit hook lints what is about to be committed, not the work tree. Regular files
    and symlinks only: submodules (gitlinks) are not files of the tree."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        try:
            top = _run_git(repo, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip()
        except TreeError as exc:
            raise TreeError(f"{repo}: no git index to read ({exc})") from None
        self.root = top or os.path.abspath(repo)
        self._blobs: dict[str, str] = {}
        self._cache: dict[str, bytes] = {}

    @cached_property
    def _entries(self) -> dict[str, str | None]:
        raw = _run_git(self.root, "ls-files", "-s", "-z", "--full-name")
        out: dict[str, str | None] = {}
        links: list[str] = []
        unmerged: list[str] = []
        for rec in raw.split(b"\0"):
            if not rec:
                continue
            meta, _, path_b = rec.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            path = path_b.decode("utf-8", "surrogateescape")
            if stage != "0":
                unmerged.append(path)
                continue
            if mode == "160000":  # a gitlink (submodule): not a file
                continue
            self._blobs[path] = sha
            out[path] = None
            if mode == "120000":
                links.append(path)
        if unmerged:
            raise TreeError(f"{self.repo}: the index has unmerged paths ({', '.join(sorted(set(unmerged))[:3])}"
                            f"{', ...' if len(set(unmerged)) > 3 else ''}): resolve the conflicts first")
        for p, t in zip(links, _batch(self.root, [self._blobs[p] for p in links])):
            out[p] = (t or b"").decode("utf-8", "replace")
        return out

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read many staged blobs with one git process."""
        entries = self._entries
        want = [p for p in paths if p in self._blobs and p not in self._cache and entries.get(p) is None]
        for p, data in zip(want, _batch(self.root, [self._blobs[p] for p in want])):
            if data is not None:
                self._cache[p] = data

    def _read(self, path: str) -> bytes | None:
        _ = self._entries
        if path not in self._cache:
            sha = self._blobs.get(path)
            data = _batch(self.root, [sha])[0] if sha is not None else None
            if data is None:
                return None
            self._cache[path] = data
        return self._cache[path]


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
