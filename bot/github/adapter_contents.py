"""PyGithub code that reads files of another repository (the official recipe collections,
``bot.github.recipe_sources.GitHubSource``): resolve a ref to a commit, list a commit's files, read one.

``ContentsClient`` is a client of its own (not :class:`bot.github.adapter.PyGithubPort`): the
recipe repositories are public repositories on github.com, read with or without a token, while
the port acts on the repository the bot runs in. Its retries are PyGithub's ``GithubRetry``
(:func:`bot.github.adapter.make_retry`), kept short: a few attempts on 5xx and 429, and a wait
for a rate limit's reset of at most ``max_wait`` seconds; a longer one raises at once.

Errors cross as :class:`bot.github.port.GitHubError` (``bot.github.calls.call``): ``status`` 0
for no response (a network failure, a timeout, retries exhausted), ``rate_limited`` for a 403
or 429 rate limit, the HTTP status otherwise. A file or ref that does not exist is not an
error: ``blob`` answers None, ``resolve`` raises GitHubError 404 (the ref names nothing).
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping

import github
from github import Auth

from bot.github.adapter import DEFAULT_API_URL, Settings, make_retry
from bot.github.calls import call
from bot.github.port import GitHubError

log = logging.getLogger("benchbot.github")
MAX_BLOB_BYTES = 4 * 1024 * 1024  # a larger file is not downloaded (bot.recipes.sources.MAX_FILE_BYTES)
CONTENTS_MAX = 1024 * 1024  # the contents API inlines files up to 1 MB; larger ones are read as blobs
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")
_SYMLINK = "120000"


class ContentsClient:
    """Reads other repositories: ``resolve``, ``tree``, ``blob`` (see the module docstring).

    ``token`` None reads anonymously (GitHub allows 60 requests an hour). ``truncated`` holds
    the (repo, sha) pairs whose recursive tree GitHub cut short (over 100,000 entries or 7 MB):
    their listing misses files, which the caller says in a note."""

    def __init__(self, token: str | None, base_url: str = DEFAULT_API_URL, *, retries: int = 3,
                 backoff: float = 0.5, max_wait: float = 30.0, timeout: float = 20.0) -> None:
        settings = Settings(api_url=base_url.rstrip("/"), token=token or "", repository="",
                            retries=retries, backoff=backoff, max_wait=max_wait, write_interval=0.0)
        self.gh = github.Github(
            auth=Auth.Token(token) if token else None,
            base_url=settings.api_url,
            retry=make_retry(settings),
            timeout=int(max(1.0, timeout)),
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,
        )
        self.truncated: set[tuple[str, str]] = set()

    def _repo(self, repo: str) -> github.Repository.Repository:
        return self.gh.get_repo(repo)  # lazy (the client is): no call

    def resolve(self, repo: str, ref: str | None) -> str:
        """The commit SHA ``ref`` names in ``repo`` (None: the default branch's head). A full SHA
        is its own answer (no call); a branch is one call (two for the default branch: its name
        first); anything else (a tag, a short SHA) is looked up as a commit."""
        if ref is not None and _SHA.match(ref):
            return ref
        r = self._repo(repo)
        if ref is None:
            with call(f"read the repository {repo}"):
                ref = str(r.default_branch)
        try:
            with call(f"resolve {repo}@{ref}"):
                return str(r.get_branch(ref).commit.sha)
        except GitHubError as exc:
            if exc.status != 404:  # a 404: not a branch; a tag or a commit then
                raise
        with call(f"resolve {repo}@{ref}"):  # a lazy Commit takes its sha from the URL: read the answer's
            return str(r.get_commit(ref).raw_data.get("sha") or "")

    def tree(self, repo: str, sha: str) -> list[tuple[str, int]]:
        """(path, size) of every file of the commit ``sha``, from one recursive git-trees call:
        regular files only (no folders, symlinks or submodules), in GitHub's order."""
        with call(f"list the files of {repo}@{sha[:12]}"):
            t = self._repo(repo).get_git_tree(sha, recursive=True)
            entries = [(str(e.path), int(e.size or 0)) for e in t.tree if e.type == "blob" and e.mode != _SYMLINK]
            if t.raw_data.get("truncated") is True:
                log.warning("%s@%s: GitHub truncated the file list (%d files listed)", repo, sha[:12], len(entries))
                self.truncated.add((repo, sha))
        return entries

    def blob(self, repo: str, sha: str, path: str, max_bytes: int = MAX_BLOB_BYTES) -> bytes | None:
        """The bytes of ``path`` at the commit ``sha``: the contents API, or the file's git blob
        when it is over the contents API's 1 MB. None when there is no such file (or it is a
        folder, a symlink, a submodule) or it is larger than ``max_bytes`` (not downloaded)."""
        r = self._repo(repo)
        try:
            with call(f"read {repo}@{sha[:12]}:{path}"):
                got = r.get_contents(path, ref=sha)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        if isinstance(got, list) or got.type != "file":
            return None
        size = int(got.size or 0)
        if size > max_bytes:
            log.info("%s@%s:%s: %d bytes, over %d: not read", repo, sha[:12], path, size, max_bytes)
            return None
        what = f"read {repo}@{sha[:12]}:{path}"
        if got.encoding == "base64" and (got.content or size == 0):
            encoded = got.content or ""
        else:  # over 1 MB: GitHub sends no content ("encoding": "none"); the blob has it
            with call(what):
                b = r.get_git_blob(got.sha)
            if b.encoding != "base64":
                raise GitHubError(502, f"unexpected blob encoding {b.encoding!r}", what)
            encoded = b.content or ""
        if len(encoded) > max_bytes * 4 // 3 + max_bytes // 30 + 16:  # base64 plus GitHub's newlines
            return None
        try:
            data = base64.b64decode(encoded)
        except ValueError:
            raise GitHubError(502, "the content is not base64", what) from None
        return data if len(data) <= max_bytes else None


def from_env(env: Mapping[str, str]) -> ContentsClient:
    """The client the CLI uses: ``BENCHBOT_RECIPES_API_URL`` (default https://api.github.com)
    and ``BENCHBOT_RECIPES_TOKEN``, else ``GITHUB_TOKEN`` when it is a token for that same
    server (``GITHUB_API_URL`` unset or equal): a GitHub Enterprise token is never sent to
    github.com. No token reads anonymously."""
    base = (env.get("BENCHBOT_RECIPES_API_URL") or DEFAULT_API_URL).rstrip("/")
    token = env.get("BENCHBOT_RECIPES_TOKEN") or None
    if token is None and (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/") == base:
        token = env.get("GITHUB_TOKEN") or None
    return ContentsClient(token, base)
