"""Recipe sources (``bot.recipes.model.Source``): where the official recipes are read from.

- ``LocalSource``: a directory (a checkout or an unpacked archive); ``detect(dir)`` recognises
  the collections a directory holds by their layout. Its revision is the checkout's commit,
  read as text from ``.git`` (no program is run), else a digest of the content.
- ``GitHubSource``: a GitHub repository at a ref, through a ``ContentsPort``
  (``bot.github.adapter_contents.ContentsClient``): the ref resolved to a commit once, the
  file list from one recursive git-trees call, each file from the contents API.
- ``CachedSource``: any source through benchbot's persistent cache (``bot.cache``, kind
  ``recipes``); ``offline`` reads the cache only.
- ``open_sources``: the sources a run asked for, and a note for each that cannot be reached.

``SourceUnavailable`` (a reason for a note, never a crash) is raised by the ``revision``,
``get`` and ``list`` of the GitHub and cached sources: GitHub's rate limit, no network, an
offline run without a cached copy. ``open_sources`` resolves every revision, so a source it
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot import cache, cachejson
from bot.github.port import GitHubError
from bot.recipes.gitrev import git_revision
from bot.recipes.model import KINDS, Source

if TYPE_CHECKING:
    from bot.config import RecipeSettings

MAX_FILE_BYTES = 4 * 1024 * 1024  # a recipe file larger than this is not read
CACHE_KIND = "recipes"
GITHUB = "github"  # the ``--source`` value that means the configured GitHub repositories
LAYOUTS = {"vllm": ("models", "strategies"), "sglang": ("docs_new/src/snippets/configs",)}
FOLDERS = {"vllm": "", "sglang": "docs_new/src/snippets/configs"}  # where each kind's recipes live
TITLES = {"vllm": "vLLM recipes", "sglang": "SGLang cookbook"}
MAX_PATHS = 500_000  # a cached file list longer than this is refused
_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
T = TypeVar("T")


class SourceUnavailable(Exception):
    """A source that cannot be read now; ``reason`` says why, for a note."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


# ------------------------------------------------------------------ GitHub


class ContentsPort(Protocol):
    """What ``GitHubSource`` asks of GitHub (``bot.github.adapter_contents.ContentsClient``);
    failures raise ``GitHubError``."""

    truncated: set[tuple[str, str]]  # (repo, sha) whose file list GitHub cut short

    def resolve(self, repo: str, ref: str | None) -> str: ...

    def tree(self, repo: str, sha: str) -> list[tuple[str, int]]: ...

    def blob(self, repo: str, sha: str, path: str, max_bytes: int = ...) -> bytes | None: ...


def _reason(exc: GitHubError, what: str) -> str:
    if exc.rate_limited or (exc.status == 0 and "429" in exc.message):  # 429s until the retries ran out
        return (f"{what}: GitHub's API rate limit is exhausted ({exc.message}); set BENCHBOT_RECIPES_TOKEN "
                f"(or GITHUB_TOKEN) for a higher limit, or use --offline with a cached copy")
    if exc.status == 0:
        return f"{what}: GitHub cannot be reached ({exc.message})"
    if exc.status == 401:
        return f"{what}: GitHub refused the token (401 {exc.message})"
    if exc.status in (404, 422):
        return f"{what}: no such repository or ref ({exc.status} {exc.message})"
    return f"{what}: GitHub answered {exc.status} {exc.message}"


class GitHubSource:
    """``repo`` (owner/name) at ``ref`` (None: the default branch) through ``client`` (None: no
    network, every read is ``SourceUnavailable``). ``folder``: where the recipes live."""

    def __init__(self, kind: str, repo: str, ref: str | None, client: ContentsPort | None, folder: str = "") -> None:
        self.kind, self.repo, self.ref, self.client, self.folder = kind, repo, ref, client, folder
        self.name = repo
        self._sha: str | None = ref if ref is not None and _HEX.match(ref) else None
        self._files: dict[str, int] | None = None
        self.notes: list[str] = []

    def _ask(self, what: str, question: Callable[[ContentsPort], T]) -> T:
        if self.client is None:
            raise SourceUnavailable(f"{what}: no connection to GitHub in this run")
        try:
            return question(self.client)
        except GitHubError as exc:
            raise SourceUnavailable(_reason(exc, what)) from None

    @property
    def revision(self) -> str:
        """The commit ``ref`` resolves to (asked once)."""
        if self._sha is None:
            what = f"resolve {self.repo}@{self.ref or 'default branch'}"
            sha = self._ask(what, lambda c: c.resolve(self.repo, self.ref))
            if not _HEX.match(sha):
                raise SourceUnavailable(f"{what}: GitHub answered {sha[:80]!r}, not a commit SHA")
            self._sha = sha
        return self._sha

    @revision.setter
    def revision(self, value: str) -> None:
        self._sha, self._files = value, None

    @property
    def complete(self) -> bool:
        """Whether the file list holds every file (GitHub did not truncate it)."""
        self.files()
        return self.client is None or (self.repo, self.revision) not in self.client.truncated

    def files(self) -> dict[str, int]:
        """path -> size of every file at the revision (one call, then kept)."""
        if self._files is None:
            sha = self.revision
            entries = self._ask(f"list the files of {self.repo}@{sha[:12]}", lambda c: c.tree(self.repo, sha))
            self._files = {p: s for p, s in entries if clean_path(p) == p}
            if not self.complete:  # (self._files is set: no recursion)
                self.notes.append(f"{self.repo}@{sha[:12]}: GitHub truncated the file list; "
                                  f"recipes missing from it are looked up one by one")
        return self._files

    def list(self, prefix: str) -> list[str]:
        pre = prefix.strip("/")
        return sorted(p for p in self.files() if not pre or p.startswith(pre + "/"))

    def get(self, path: str) -> str | None:
        p = clean_path(path)
        if p is None:
            return None
        files = self.files()
        if (p not in files and self.complete) or files.get(p, 0) > MAX_FILE_BYTES:
            return None
        sha = self.revision
        data = self._ask(f"read {self.repo}@{sha[:12]}:{p}", lambda c: c.blob(self.repo, sha, p, MAX_FILE_BYTES))
        return None if data is None else data.decode("utf-8", "replace")


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
        self._sha: str | None = self.ref if self.ref is not None and _HEX.match(self.ref) else None
        self._tree: tuple[frozenset[str], bool] | None = None
        self.notes: list[str] = []

    def _ref_key(self) -> str:
        return cache.key("ref", self.kind, self.name, self.ref or "")

    def _cached_sha(self) -> str | None:
        got = _load(self._ref_key(), 1024)
        sha = got.get("sha") if got is not None else None
        return sha if isinstance(sha, str) and _HEX.match(sha) else None

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
        if isinstance(self.inner, GitHubSource | LocalSource):
            self.inner.revision = sha

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


# ------------------------------------------------------------------ what a run reads


def _client_from_env() -> ContentsPort:
    from bot.github.adapter_contents import from_env

    return from_env(os.environ)


def open_sources(conf_recipes: RecipeSettings | None, dirs: Sequence[str], offline: bool,
                 client_factory: Callable[[], ContentsPort] | None = None) -> tuple[list[Source], list[str]]:
    """The sources of ``dirs`` (``--source``; none: ``github``), and one note per source that
    cannot be reached. A directory is ``detect``ed (ValueError when it holds no collection: a
    usage error, not a note); ``github`` is the repositories of ``conf_recipes`` (the
    ``recipes:`` configuration; None: the defaults), cached, their revisions resolved here.
    ``client_factory`` (None: ``bot.github.adapter_contents.from_env`` on the environment) is
    called once, and only when GitHub is asked (never ``offline``)."""
    if client_factory is None:
        client_factory = _client_from_env
    if conf_recipes is None:
        from bot.config import RecipeSettings

        conf_recipes = RecipeSettings()
    sources: list[Source] = []
    notes: list[str] = []
    client: ContentsPort | None = None
    for d in dirs or [GITHUB]:
        if d != GITHUB:
            sources.extend(detect(d))
            continue
        if not offline and client is None:
            client = client_factory()
        for kind in KINDS:
            where = conf_recipes.of(kind)
            src = CachedSource(GitHubSource(kind, where.repo, where.ref, client, where.path), offline=offline)
            try:
                _ = src.revision
            except SourceUnavailable as exc:
                notes.append(f"{TITLES[kind]} not compared: {exc.reason}")
                continue
            notes.extend(src.notes)
            sources.append(src)
    return sources, notes
