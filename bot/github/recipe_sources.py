"""The official recipes read from GitHub: ``GitHubSource`` (a repository at a ref, through a
``ContentsPort``: ``bot.github.adapter_contents.ContentsClient``), and the sources a run reads
(``open_sources``, ``configured``): the configured repositories through the persistent cache
(``bot.recipes.sources.CachedSource``), the folders given, the repo's own ``recipes.local``.

This is the GitHub side of recipe parity: the comparison itself (``bot.recipes``) and the
``recipe-mismatch`` rule see only ``Source`` records, never GitHub.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from bot.github.port import GitHubError
from bot.recipes.attach import tree_sources
from bot.recipes.model import KINDS, Source, SourceUnavailable
from bot.recipes.sources import GITHUB, HEX, MAX_FILE_BYTES, TITLES, CachedSource, clean_path, detect
from bot.repo.files.tree import Tree
from bot.settings import RecipeSettings

T = TypeVar("T")


class ContentsPort(Protocol):
    """What ``GitHubSource`` asks of GitHub (``bot.github.adapter_contents.ContentsClient``);
    failures raise ``GitHubError``."""

    truncated: set[tuple[str, str]]  # (repo, sha) whose file list GitHub cut short

    def resolve(self, repo: str, ref: str | None) -> str: ...

    def tree(self, repo: str, sha: str) -> list[tuple[str, int]]: ...

    def blob(self, repo: str, sha: str, path: str, max_bytes: int = ...) -> bytes | None: ...


_TOO_MANY = re.compile(r"(?<![\w.:=])429(?![\w.])")


def _reason(exc: GitHubError, what: str) -> str:
    # 429s until the retries ran out ("too many 429 error responses"); a port such as 42963 in
    # a refused connection's message is not one
    if exc.rate_limited or (exc.status == 0 and _TOO_MANY.search(exc.message)):
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
        self._sha: str | None = ref if ref is not None and HEX.match(ref) else None
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
            if not HEX.match(sha):
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


def configured(tree: Tree, settings: RecipeSettings, wanted: Sequence[str] | None = None, offline: bool = False,
               client_factory: Callable[[], ContentsPort] | None = None) -> tuple[list[Source], list[str]]:
    """The sources to compare with, and a note per source that could not be read: ``wanted``
    (``--source``: folders, or ``github``), else the configuration's: its ``local`` folders of
    ``tree``, then its GitHub repositories (unless the section names only ``local`` ones).
    ValueError: a wanted folder of no known layout (a usage error, not a note)."""
    if wanted is not None:
        return open_sources(settings, list(wanted), offline, client_factory)
    sources, notes = tree_sources(tree, settings.local)
    if settings.github:
        more, more_notes = open_sources(settings, [GITHUB], offline, client_factory)
        sources, notes = sources + more, notes + more_notes
    return sources, notes
