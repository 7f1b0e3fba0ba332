"""Endpoints that read a repository's files, as ``bot.github.adapter_contents`` uses them: a
branch (GET /branches/{b}), a commit (GET /commits/{ref}), the recursive tree of a commit
(GET /git/trees/{sha}?recursive=1), a file (GET /contents/{path}?ref=, without its content over
1 MB, as GitHub answers) and a blob (GET /git/blobs/{sha}); GET /repos/{o}/{r} (its
``default_branch``) is issues.py's. Test-side helpers: ``add_files`` (a commit of files on a
branch), ``rate_limit`` (every repository read answers 403 "API rate limit exceeded" or 429,
until turned off) and ``truncate`` (trees say ``truncated: true``)."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING

from .api import ApiError, Ctx, Reply, not_found, route
from .state import Json, Repo, fake_sha

if TYPE_CHECKING:
    from .server import FakeGitHub, Fault

CONTENTS_MAX = 1024 * 1024  # the contents API inlines files up to this size
_LIMITS: dict[int, Fault] = {}  # id(fake) -> its rate-limit fault (rate_limit)
_TRUNCATED: set[tuple[int, str]] = set()  # (id(state), repo) whose trees say truncated


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _b64(data: bytes) -> str:
    """Base64 in lines of 60 characters, as GitHub sends it."""
    text = base64.b64encode(data).decode()
    return "".join(text[i:i + 60] + "\n" for i in range(0, len(text), 60))


def _sha_of(repo: Repo, ref: str) -> str | None:
    """The commit a ref names: a branch, HEAD (the default branch), a commit SHA or its prefix."""
    if ref == "HEAD":
        ref = repo.default_branch
    if ref in repo.branches:
        return repo.branches[ref]
    if ref == repo.default_branch:
        return repo.default_sha
    if ref in repo.commits or ref == repo.default_sha:
        return ref
    found = [s for s in repo.commits if len(ref) >= 7 and s.startswith(ref)]
    return found[0] if len(found) == 1 else None


def _files(repo: Repo, sha: str) -> dict[str, bytes]:
    return repo.commits.get(sha, {})


def _render_commit(ctx: Ctx, repo: Repo, sha: str) -> Json:
    api = f"{ctx.state.api}/repos/{repo.full_name}"
    person = {"name": "octocat", "email": "octocat@example.com", "date": "2024-01-01T00:00:00Z"}
    return {
        "sha": sha, "node_id": f"C_fake{sha[:12]}", "url": f"{api}/commits/{sha}",
        "html_url": f"{ctx.state.web}/{repo.full_name}/commit/{sha}", "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {"author": person, "committer": person, "message": "recipes", "comment_count": 0,
                   "url": f"{api}/git/commits/{sha}",
                   "tree": {"sha": fake_sha("tree", sha), "url": f"{api}/git/trees/{sha}"}},
        "author": None, "committer": None, "parents": [],
    }


@route("GET", r"{repo}/branches/(?P<branch>.+)")
def get_branch(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    name = ctx.arg("branch")
    if name not in repo.branches and name != repo.default_branch:
        raise ApiError(404, "Branch not found")
    sha = repo.branches.get(name, repo.default_sha)
    api = f"{ctx.state.api}/repos/{repo.full_name}"
    return Reply(200, {"name": name, "commit": _render_commit(ctx, repo, sha), "protected": False,
                       "_links": {"self": f"{api}/branches/{name}",
                                  "html": f"{ctx.state.web}/{repo.full_name}/tree/{name}"},
                       "protection_url": f"{api}/branches/{name}/protection"})


@route("GET", r"{repo}/commits/(?P<ref>.+)")
def get_commit(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    sha = _sha_of(repo, ctx.arg("ref"))
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.arg('ref')}")
    out = _render_commit(ctx, repo, sha)
    out.update(stats={"total": 0, "additions": 0, "deletions": 0}, files=[])
    return Reply(200, out)


def _tree_entries(ctx: Ctx, repo: Repo, sha: str, recursive: bool) -> list[Json]:
    api = f"{ctx.state.api}/repos/{repo.full_name}/git"
    files = _files(repo, sha)
    folders = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
    out: list[Json] = []
    for d in folders:
        if recursive or "/" not in d:
            t = fake_sha("tree", sha, d)
            out.append({"path": d, "mode": "040000", "type": "tree", "sha": t, "url": f"{api}/trees/{t}"})
    for p, data in sorted(files.items()):
        if recursive or "/" not in p:
            b = blob_sha(data)
            out.append({"path": p, "mode": "100644", "type": "blob", "sha": b, "size": len(data),
                        "url": f"{api}/blobs/{b}"})
    return sorted(out, key=lambda e: str(e["path"]))


@route("GET", r"{repo}/git/trees/(?P<sha>[^/]+)")
def get_tree(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    sha = _sha_of(repo, ctx.arg("sha"))
    if sha is None:
        raise not_found()
    recursive = ctx.query.get("recursive", "") not in ("", "0", "false")
    return Reply(200, {"sha": fake_sha("tree", sha), "url": f"{ctx.state.api}/repos/{repo.full_name}/git/trees/{sha}",
                       "tree": _tree_entries(ctx, repo, sha, recursive),
                       "truncated": (id(ctx.state), repo.full_name) in _TRUNCATED})


def _content_entry(ctx: Ctx, repo: Repo, sha: str, path: str, data: bytes | None) -> Json:
    api = f"{ctx.state.api}/repos/{repo.full_name}"
    kind = "file" if data is not None else "dir"
    obj = blob_sha(data) if data is not None else fake_sha("tree", sha, path)
    git = f"{api}/git/{'blobs' if data is not None else 'trees'}/{obj}"
    html = f"{ctx.state.web}/{repo.full_name}/{'blob' if data is not None else 'tree'}/{sha}/{path}"
    return {
        "type": kind, "size": len(data) if data is not None else 0, "name": path.rsplit("/", 1)[-1], "path": path,
        "sha": obj, "url": f"{api}/contents/{path}?ref={sha}", "git_url": git, "html_url": html,
        "download_url": f"{ctx.state.web}/raw/{repo.full_name}/{sha}/{path}" if data is not None else None,
        "_links": {"self": f"{api}/contents/{path}?ref={sha}", "git": git, "html": html},
    }


@route("GET", r"{repo}/contents/(?P<path>.*)")
def get_contents(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    sha = _sha_of(repo, ctx.query.get("ref") or repo.default_branch)
    if sha is None:
        raise ApiError(404, f"No commit found for the ref {ctx.query.get('ref')}")
    files = _files(repo, sha)
    path = ctx.arg("path").strip("/")
    if path in files:
        data = files[path]
        out = _content_entry(ctx, repo, sha, path, data)
        if len(data) <= CONTENTS_MAX:
            out.update(encoding="base64", content=_b64(data))
        else:  # GitHub: 1-100 MB files come without their content
            out.update(encoding="none", content="")
        return Reply(200, out)
    prefix = path + "/" if path else ""
    below = [p for p in files if p.startswith(prefix)]
    if not below:
        raise not_found()
    names = sorted({p[len(prefix):].split("/", 1)[0] for p in below})
    items = [_content_entry(ctx, repo, sha, prefix + n, files.get(prefix + n)) for n in names]
    return Reply(200, items)


@route("GET", r"{repo}/git/blobs/(?P<sha>[0-9a-f]{40})")
def get_blob(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    for files in repo.commits.values():
        for data in files.values():
            if blob_sha(data) == ctx.arg("sha"):
                return Reply(200, {"sha": ctx.arg("sha"), "node_id": f"B_fake{ctx.arg('sha')[:12]}",
                                   "size": len(data), "url": f"{ctx.state.api}/repos/{repo.full_name}/git/blobs/"
                                   f"{ctx.arg('sha')}", "content": _b64(data), "encoding": "base64"})
    raise not_found()


# -- test-side helpers ---------------------------------------------------------------------------------


def add_files(fake: FakeGitHub, repo: str, files: dict[str, bytes | str], *, branch: str | None = None,
              sha: str | None = None) -> str:
    """A commit holding exactly ``files`` (path -> content) at the head of ``branch`` (default:
    the default branch); its SHA (``sha`` or one made from the content)."""
    data = {p.strip("/"): (v.encode() if isinstance(v, str) else v) for p, v in files.items()}
    with fake.state.lock:
        r = fake.state.repo(repo)
        name = branch or r.default_branch
        commit = sha or fake_sha(repo, name, *sorted((p, blob_sha(v)) for p, v in data.items()))
        r.commits[commit] = data
        r.branches[name] = commit
        if name == r.default_branch:
            r.default_sha = commit
        return commit


def rate_limit(fake: FakeGitHub, on: bool = True, *, status: int = 403, reset_in: int = 3600,
               repos: tuple[str, ...] = ()) -> None:
    """From now on every GET of a repository (``/repos/...``; ``repos``: of these only) answers
    ``status``: 403 with GitHub's primary rate-limit message and ``x-ratelimit-remaining: 0``
    (reset ``reset_in`` seconds from now), or 429; ``on=False`` ends it."""
    import time

    from .server import Fault

    with fake.state.lock:
        old = _LIMITS.pop(id(fake), None)
        if old is not None and old in fake._faults:
            fake._faults.remove(old)
        if not on:
            return
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + reset_in)}
        body = {"message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated "
                           "requests get a higher rate limit.)",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}
        if status == 429:
            headers["Retry-After"] = "0"
        which = "|".join(re.escape(r) for r in repos) if repos else ".*"
        fault = Fault("GET", re.compile(rf"/repos/(?:{which})(?:/.*)?"), status, 10**9, headers, body)
        fake._faults.append(fault)
        _LIMITS[id(fake)] = fault


def truncate(fake: FakeGitHub, repo: str, on: bool = True) -> None:
    """The repository's trees say ``truncated: true`` (GitHub's answer over 100,000 entries)."""
    key = (id(fake.state), repo)
    if on:
        _TRUNCATED.add(key)
    else:
        _TRUNCATED.discard(key)
