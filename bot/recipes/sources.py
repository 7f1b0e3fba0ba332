"""Recipe sources (``bot.recipes.model.Source``): where the official recipes are read from.

- ``LocalSource``: a directory (a checkout or an unpacked archive); ``detect(dir)`` recognises
  the collections a directory holds by their layout. Its revision is the checkout's commit,
  read as text from ``.git`` (no program is run), else a digest of the content.
- ``GitHubSource`` (``bot.github.recipe_sources``, the GitHub layer): a GitHub repository at a
  ref: the ref resolved to a commit once, the file list from one recursive git-trees call, each
  file from the contents API.
- ``CachedSource``: any source through benchbot's persistent cache (``bot.cache``, kind
  ``recipes``); ``offline`` reads the cache only.
- ``bot.github.recipe_sources.open_sources``: the sources a run asked for, and a note for each
  that cannot be reached.

``SourceUnavailable`` (a reason for a note, never a crash) is raised by the ``revision``,
``get`` and ``list`` of the GitHub and cached sources: GitHub's rate limit, no network, an
offline run without a cached copy (``bot.recipes.model``). ``open_sources`` resolves every revision, so a source it
returns is reachable then; a later ``get``/``list`` can still raise it (a rate limit reached
in the middle of a run, a file an offline run never read online): callers catch it and note.

Cache entries (kind ``recipes``, keys by ``bot.cache.key``, so benchbot's code hash too):
``("ref", kind, name, ref)`` -> ``{"sha"}`` the commit a ref last resolved to (what
``--offline`` reads; no time limit); ``("tree", kind, name, sha)`` -> ``{"paths", "complete"}``;
``("file", kind, name, sha, path)`` -> ``{"text"}`` or ``{"missing": true}``. Entries are
untrusted input: decoded by ``bot.cachejson`` within budgets and checked for shape; anything
else is a miss (fetched again online, unavailable offline).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from bot import cache, cachejson
from bot.recipes.gitrev import git_revision
from bot.recipes.model import Source, SourceUnavailable

MAX_FILE_BYTES = 4 * 1024 * 1024  # a recipe file larger than this is not read
CACHE_KIND = "recipes"
GITHUB = "github"  # the ``--source`` value that means the configured GitHub repositories
LAYOUTS = {"vllm": ("models", "strategies"), "sglang": ("docs_new/src/snippets/configs",)}
FOLDERS = {"vllm": "", "sglang": "docs_new/src/snippets/configs"}  # where each kind's recipes live
TITLES = {"vllm": "vLLM recipes", "sglang": "SGLang cookbook"}
MAX_PATHS = 500_000  # a cached file list longer than this is refused
HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


def clean_path(path: str) -> str | None:
    """``path`` as a repository-relative file path (no ``/`` around it), or None when it could
    leave the collection or name nothing: absolute, ``..`` or ``.`` parts, empty parts, NUL."""
    p = path.strip("/") if not path.startswith("/") else ""
    parts = p.split("/")
    if not p or "\0" in p or any(part in ("", ".", "..") for part in parts):
        return None
    return p


# ------------------------------------------------------------------ local directories


class LocalSource:
    """A recipe collection in a local directory; ``kind`` is "vllm" or "sglang". ``folder``: the
    directory-relative folder its recipes live in (``FOLDERS``)."""

    def __init__(self, root: str | Path, kind: str, revision: str | None = None, *, folder: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.kind = kind
        self.name = str(root)
        self.folder = FOLDERS.get(kind, "") if folder is None else folder
        self._revision = revision

    @property
    def revision(self) -> str:
        """The checkout's commit (``git_revision``), else "local:" and a digest of the files."""
        if self._revision is None:
            self._revision = git_revision(self.root)
        if self._revision is None:
            h = hashlib.sha1()
            for p in self.list(""):
                h.update(p.encode() + b"\0" + (self.get(p) or "").encode("utf-8", "surrogatepass") + b"\0")
            self._revision = "local:" + h.hexdigest()[:12]
        return self._revision

    @revision.setter
    def revision(self, value: str) -> None:
        self._revision = value

    def _inside(self, path: str) -> Path | None:
        p = (self.root / path).resolve()
        return p if p == self.root or self.root in p.parents else None

    def get(self, path: str) -> str | None:
        p = self._inside(path)
        if p is None or not p.is_file() or p.stat().st_size > MAX_FILE_BYTES:
            return None
        return p.read_text("utf-8", errors="replace")

    def list(self, prefix: str) -> list[str]:
        """Regular files under ``prefix``; symlinks (to files or folders) and ``.git`` are left out."""
        base = self._inside(prefix)
        if base is None or not base.is_dir():
            return []
        out: list[str] = []
        for dirpath, dirs, files in os.walk(base):  # does not follow symlinked folders
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                p = Path(dirpath) / name
                if not p.is_symlink() and p.is_file():
                    out.append(p.relative_to(self.root).as_posix())
        return sorted(out)


def detect(directory: str | Path) -> list[LocalSource]:
    """The recipe collections in ``directory``, by layout: ``models/`` and ``strategies/`` are
    vLLM recipes (vllm-project/recipes), ``docs_new/src/snippets/configs/`` the SGLang cookbook
    (sgl-project/sglang); both can be there. ValueError when neither is."""
    d = Path(directory)
    looked = "models/ and strategies/ (vLLM recipes) or docs_new/src/snippets/configs/ (SGLang cookbook)"
    if not d.is_dir():
        raise ValueError(f"{directory}: not a directory; a recipe source is a directory holding {looked}")
    found = [LocalSource(d, kind) for kind, need in LAYOUTS.items() if all((d / n).is_dir() for n in need)]
    if not found:
        raise ValueError(f"{directory}: no recipe collection found; looked for {looked}")
    return found


# ------------------------------------------------------------------ the persistent cache


def _load(k: str, max_bytes: int) -> dict[str, Any] | None:
    """The cached object under ``k``; None on a miss or an entry of another shape."""
    try:
        return cachejson.obj(cache.get_json(CACHE_KIND, k, max_bytes=max_bytes, max_depth=3))
    except cachejson.Refused:
        return None


def _store(k: str, value: dict[str, Any]) -> None:
    cache.put(CACHE_KIND, k, json.dumps(value, separators=(",", ":")).encode())


class CachedSource:
    """``inner`` through the persistent cache: a file is fetched once per (source, revision,
    path). ``offline``: ``inner`` is never asked; the revision is the commit ``ref`` last resolved
    to (a full SHA ref is itself), files are those cached under it. Online, a revision that
    cannot be resolved falls back to that cached commit, with a note in ``notes``."""

    def __init__(self, inner: Source, offline: bool = False) -> None:
        self.inner = inner
        self.kind, self.name, self.offline = inner.kind, inner.name, offline
        ref, folder = getattr(inner, "ref", None), getattr(inner, "folder", "")
        self.ref: str | None = ref if isinstance(ref, str) else None
        self.folder: str = folder if isinstance(folder, str) else ""
        self._sha: str | None = self.ref if self.ref is not None and HEX.match(self.ref) else None
        self._tree: tuple[frozenset[str], bool] | None = None
        self.notes: list[str] = []

    def _ref_key(self) -> str:
        return cache.key("ref", self.kind, self.name, self.ref or "")

    def _cached_sha(self) -> str | None:
        got = _load(self._ref_key(), 1024)
        sha = got.get("sha") if got is not None else None
        return sha if isinstance(sha, str) and HEX.match(sha) else None

    @property
    def revision(self) -> str:
        if self._sha is None:
            if self.offline:
                self._sha = self._cached_sha()
                if self._sha is None:
                    what = f"{TITLES.get(self.kind, self.kind)} {self.name}@{self.ref or 'default branch'}"
                    raise SourceUnavailable(f"offline and no cached copy of {what} (run once online to fill the cache)")
                return self._sha
            try:
                sha = self.inner.revision
            except SourceUnavailable as exc:
                cached = self._cached_sha()
                if cached is None:
                    raise
                self.notes.append(f"{exc.reason}; using the copy of {self.name} at {cached[:12]} cached when "
                                  f"{self.ref or 'its default branch'} last resolved")
                sha = cached
                self._pin(sha)  # should GitHub answer again, the files are read at the commit cached
            else:
                _store(self._ref_key(), {"sha": sha})
            self._sha = sha
        return self._sha

    @revision.setter
    def revision(self, value: str) -> None:
        self._sha, self._tree = value, None
        self._pin(value)

    def _pin(self, sha: str) -> None:
        """Read ``inner`` at ``sha`` from now on (a source whose revision cannot be set reads its own)."""
        try:
            setattr(self.inner, "revision", sha)  # noqa: B010 - Source's protocol declares it read-only
        except AttributeError:
            pass

    def _files(self, required: bool) -> tuple[frozenset[str], bool] | None:
        """(paths, complete) at the revision: cached, else listed by ``inner`` and cached. None
        when offline and not cached, unless ``required`` (then SourceUnavailable)."""
        if self._tree is None:
            sha = self.revision
            k = cache.key("tree", self.kind, self.name, sha)
            got = _load(k, 64 << 20)
            try:
                if got is None:
                    raise cachejson.Refused("miss")
                paths = [cachejson.string(p) for p in cachejson.array(got.get("paths"))]
                if len(paths) > MAX_PATHS or any(clean_path(p) != p for p in paths):
                    raise cachejson.Refused("not a file list")
                self._tree = (frozenset(paths), cachejson.boolean(got.get("complete")))
            except cachejson.Refused:
                if self.offline:
                    if required:
                        raise SourceUnavailable(f"offline and no cached copy of the file list of "
                                                f"{self.name}@{sha[:12]}") from None
                    return None
                listed = [p for p in self.inner.list("") if clean_path(p) == p]
                complete = bool(getattr(self.inner, "complete", True))
                notes = getattr(self.inner, "notes", None)
                self.notes.extend(str(n) for n in notes or () if str(n) not in self.notes)
                _store(k, {"paths": listed, "complete": complete})
                self._tree = (frozenset(listed), complete)
        return self._tree

    def list(self, prefix: str) -> list[str]:
        files = self._files(required=True)
        assert files is not None
        pre = prefix.strip("/")
        return sorted(p for p in files[0] if not pre or p.startswith(pre + "/"))

    def get(self, path: str) -> str | None:
        p = clean_path(path)
        if p is None:
            return None
        sha = self.revision
        k = cache.key("file", self.kind, self.name, sha, p)
        got = _load(k, 6 * MAX_FILE_BYTES + 1024)  # JSON escapes take at most 6 bytes a character
        if got is not None:
            text = got.get("text")
            if isinstance(text, str) and len(text) <= MAX_FILE_BYTES and set(got) == {"text"}:
                return text
            if got == {"missing": True}:
                return None
        files = self._files(required=False)
        if files is not None and files[1] and p not in files[0]:
            return None
        if self.offline:
            raise SourceUnavailable(f"offline and no cached copy of {self.name}@{sha[:12]}:{p}")
        text = self.inner.get(p)
        _store(k, {"text": text} if text is not None else {"missing": True})
        return text
