"""Trees and facts read from git: a revision (``GitTree``), the index (``IndexTree``) and the
renames between two of them. One ``git`` runner and one ``cat-file --batch`` reader serve all."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable
from functools import cached_property

from bot.repo.files.tree import Tree, TreeError, WorkTree, too_large

STAGED = "--cached"  # ``renames(repo, rev, STAGED)``: compare with the index


def run_git(repo: str, *args: str, data: bytes | None = None) -> bytes:
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
    data = run_git(repo, "cat-file", "--batch", data="".join(s + "\n" for s in shas).encode())
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
        run_git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
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
    return name_status_renames(run_git(repo, *args, "--").split(b"\0"))


def name_status_renames(raw: list[bytes]) -> dict[str, str]:
    """The renames (old -> new) of ``--name-status -z`` output split at NUL."""
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


class _BlobTree(Tree):
    """A tree whose files are git blobs (``_blobs``: path -> sha), read through one
    ``git cat-file --batch`` per call and cached. A git tree holds only regular files,
    links and submodules (not files here), so only the size budget applies: a blob over
    it is never read (its size comes from ``ls-tree -l`` or ``cat-file --batch-check``)."""

    repo: str
    _blobs: dict[str, str]
    _cache: dict[str, bytes]

    _known: dict[str, bytes] | None = None  # blobs by sha read before (``history``: the last commit's)

    def _cat(self, shas: list[str]) -> list[bytes | None]:
        known = self._known
        if not known:
            return _batch(self.repo, shas)
        missing = [s for s in dict.fromkeys(shas) if s not in known]
        got = dict(zip(missing, _batch(self.repo, missing)))
        return [known[s] if s in known else got[s] for s in shas]

    def content_key(self) -> str:
        """Every path with its blob id (git hashed the bytes) or link target, and the size budget."""
        entries = self._entries
        h = hashlib.blake2b(digest_size=32)
        h.update(f"blobs {self.max_bytes}\0".encode())
        for path in sorted(entries):
            target = entries[path]
            h.update(b"%s\0%s\0%s\0" % (path.encode("utf-8", "surrogateescape"), self._blobs[path].encode(),
                                         b"" if target is None else target.encode("utf-8", "surrogateescape")))
        return h.hexdigest()

    def blobs_read(self) -> dict[str, bytes]:
        """The blobs read so far, by sha (for the next tree of a walk over commits)."""
        return {self._blobs[p]: data for p, data in self._cache.items() if p in self._blobs}

    @cached_property
    def _sizes(self) -> dict[str, int]:
        """Path -> blob size, for every blob (one ``git cat-file --batch-check``)."""
        _ = self._entries
        paths = list(self._blobs)
        data = run_git(self.repo, "cat-file", "--batch-check",
                        data="".join(self._blobs[p] + "\n" for p in paths).encode())
        out: dict[str, int] = {}
        for p, line in zip(paths, data.splitlines()):
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                out[p] = int(parts[2])
        return out

    def _check(self, path: str) -> str | None:
        if path in self._cache:
            return None
        return too_large(self._sizes.get(path, 0), self.max_bytes)

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read many blobs with one git process."""
        entries = self._entries
        want = [p for p in paths if p in self._blobs and p not in self._cache and entries.get(p) is None
                and self._check(p) is None]
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
            if data is None:  # the tree names it, the object store lacks it
                raise TreeError(f"{path}: git has no object {sha} (a damaged or partial clone)")
            self._cache[path] = data
        return self._cache[path]


class IndexTree(_BlobTree):
    """What is staged: the git index of a work tree (``git ls-files -s``), so that a
    pre-commit hook lints what is about to be committed, not the work tree. Regular files
    and symlinks only: submodules (gitlinks) are not files of the tree."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        try:
            top = run_git(repo, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip()
        except TreeError as exc:
            raise TreeError(f"{repo}: no git index to read ({exc})") from None
        self.root = top or os.path.abspath(repo)
        self._blobs: dict[str, str] = {}
        self._cache: dict[str, bytes] = {}

    @cached_property
    def _entries(self) -> dict[str, str | None]:
        raw = run_git(self.root, "ls-files", "-s", "-z", "--full-name")
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
        for p, t in zip(links, self._cat([self._blobs[p] for p in links])):
            out[p] = (t or b"").decode("utf-8", "replace")
        return out


class GitTree(_BlobTree):
    """A git revision, read with ``git ls-tree`` and ``git cat-file --batch``."""

    def __init__(self, repo: str, rev: str, known: dict[str, bytes] | None = None) -> None:
        self.repo = repo
        self.rev = rev
        self._known = known
        self.root = f"{repo}@{rev}"
        try:
            self.commit = self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
        except TreeError as exc:
            raise TreeError(f"{rev}: not a revision of {repo} ({exc})") from None
        self._blobs: dict[str, str] = {}
        self._cache: dict[str, bytes] = {}

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        return run_git(self.repo, *args, data=data)

    @cached_property
    def _entries(self) -> dict[str, str | None]:
        raw = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", self.commit)
        out: dict[str, str | None] = {}
        links: list[str] = []
        sizes: dict[str, int] = {}
        for rec in raw.split(b"\0"):
            if not rec:
                continue
            meta, _, path_b = rec.partition(b"\t")
            mode, kind, sha, size = meta.decode().split()
            if kind != "blob":  # a submodule (commit) is not a file of this tree
                continue
            path = path_b.decode("utf-8", "surrogateescape")
            self._blobs[path] = sha
            sizes[path] = int(size) if size.isdigit() else 0
            out[path] = None
            if mode == "120000":
                links.append(path)
        if links:
            targets = self._cat([self._blobs[p] for p in links])
            for p, t in zip(links, targets):
                out[p] = (t or b"").decode("utf-8", "replace")
        self.__dict__["_sizes"] = sizes  # ls-tree -l told them: no batch-check needed
        return out


def open_tree(path: str, rev: str | None = None) -> Tree:
    """The work tree at ``path``, or its git revision ``rev`` (an empty ``rev`` is no revision)."""
    if rev is not None:
        return GitTree(path, rev)
    return WorkTree(path)
