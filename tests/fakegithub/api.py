"""Routing plumbing shared by the endpoint modules: the route table, the request context, errors
shaped like GitHub's, and pagination with GitHub-style ``Link`` headers."""

from __future__ import annotations

import json
import math
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .state import Issue, Json, Pull, Repo, State, Stored, Token

DOCS = "https://docs.github.com/rest"
T = TypeVar("T")
NOT_INTEGRATION = "Resource not accessible by integration"
BODY_MAX = 65536


class ApiError(Exception):
    """Raised by a handler: answered as ``status`` with a GitHub-shaped JSON error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        doc: str = DOCS,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.payload: Json = {"message": message}
        if errors is not None:
            self.payload["errors"] = errors
        self.payload["documentation_url"] = doc
        self.headers = headers or {}


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def found(table: dict[Any, T], key: Any) -> T:
    """``table[key]``, or GitHub's 404."""
    if key not in table:
        raise not_found()
    return table[key]


def missing(name: str, doc: str = DOCS) -> ApiError:
    return ApiError(422, f"Invalid request.\n\n\"{name}\" wasn't supplied.", doc=doc)


def wrong_type(name: str, value: Any, kind: str, doc: str = DOCS) -> ApiError:
    return ApiError(422, f"Invalid request.\n\nFor 'properties/{name}', {json.dumps(value)} is not {kind}.", doc=doc)


def validation_failed(resource: str, field_: str, message: str, code: str = "custom", doc: str = DOCS) -> ApiError:
    err = {"resource": resource, "code": code, "field": field_, "message": message}
    return ApiError(422, "Validation Failed", errors=[err], doc=doc)


def unprocessable(messages: list[str], doc: str = DOCS) -> ApiError:
    """GitHub joins several review-thread problems into one sentence ("A, B, and C")."""
    uniq = list(dict.fromkeys(messages))
    if len(uniq) <= 2:
        text = " and ".join(uniq)
    else:
        text = ", ".join(uniq[:-1]) + ", and " + uniq[-1]
    return ApiError(422, "Unprocessable Entity", errors=[text], doc=doc)


@dataclass
class Reply:
    status: int = 200
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Ctx:
    state: State
    method: str
    path: str  # decoded, without the /api/v3 prefix
    raw_path: str  # as sent (percent-encoded), without the prefix
    query: dict[str, str]
    body: Any
    token: Token
    match: re.Match[str]

    @property
    def login(self) -> str:
        return self.token.login

    def arg(self, name: str) -> str:
        return self.match.group(name)

    def num(self, name: str) -> int:
        return int(self.match.group(name))

    def repo(self) -> Repo:
        return found(self.state.repos, f"{self.arg('owner')}/{self.arg('repo')}")

    def issue(self, repo: Repo, name: str = "number") -> Issue:
        return found(repo.issues, self.num(name))

    def pull(self, repo: Repo, name: str = "number") -> tuple[Issue, Pull]:
        i = self.issue(repo, name)
        if i.pull is None:
            raise not_found()
        return i, i.pull

    def obj(self) -> Json:
        if self.body is None:
            return {}
        if not isinstance(self.body, dict):
            raise ApiError(400, "Problems parsing JSON")
        return self.body

    def text(self, name: str, resource: str, doc: str = DOCS, *, required: bool = True) -> str:
        """A string field of the JSON body (``body`` fields are length-checked like GitHub)."""
        obj = self.obj()
        if name not in obj or obj[name] is None:
            if required:
                raise missing(name, doc)
            return ""
        value = obj[name]
        if not isinstance(value, str):
            raise wrong_type(name, value, "a string", doc)
        if name == "body" and len(value) > BODY_MAX:
            raise validation_failed(resource, "body", f"body is too long (maximum is {BODY_MAX} characters)", doc=doc)
        return value


Handler = Callable[[Ctx], Reply]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []
REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    """Register a handler; ``{repo}`` in the pattern stands for ``/repos/OWNER/REPO``."""
    compiled = re.compile(pattern.replace("{repo}", REPO))

    def deco(fn: Handler) -> Handler:
        ROUTES.append((method, compiled, fn))
        return fn

    return deco


def resolve(method: str, path: str) -> tuple[Handler, re.Match[str]] | None:
    """The handler for (method, path); a path known under another method is still a 404, as on GitHub."""
    for m, pattern, fn in ROUTES:
        if m == method:
            match = pattern.fullmatch(path)
            if match:
                return fn, match
    return None


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def paginate(ctx: Ctx, items: list[Any], key: str | None = None) -> Reply:
    """One page of ``items`` (``per_page`` default 30, max 100; ``page`` 1-based) and a ``Link``
    header with absolute URLs carrying the original query, as GitHub sends it. With ``key`` the page
    is wrapped as ``{"total_count": N, key: [...]}`` (workflows, runs)."""
    per_page = _int(ctx.query.get("per_page"), 30)
    per_page = 30 if per_page < 1 else min(per_page, 100)
    page = max(1, _int(ctx.query.get("page"), 1))
    last = max(1, math.ceil(len(items) / per_page))
    chunk = items[(page - 1) * per_page : page * per_page]

    def link(p: int, rel: str) -> str:
        q = dict(ctx.query)
        q["page"] = str(p)
        return f'<{ctx.state.api}{ctx.raw_path}?{urllib.parse.urlencode(q)}>; rel="{rel}"'

    links = []
    if page > 1:
        links.append(link(min(page - 1, last), "prev"))
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links.append(link(1, "first"))
    headers = {"Link": ", ".join(links)} if links else {}
    payload: Any = {"total_count": len(items), key: chunk} if key else chunk
    return Reply(200, payload, headers)


def comment_routes(path: str, kind: str, reactions_key: str, resource: str, doc: str) -> None:
    """GET, PATCH (body) and DELETE of one comment, the same for issue comments and review
    comments: ``kind`` names the Repo table (``{kind}s``) and the renderer (``render_{kind}``)."""
    table = f"{kind}s"

    def lookup(ctx: Ctx) -> tuple[Repo, Stored]:
        repo = ctx.repo()
        return repo, found(getattr(repo, table), ctx.num("id"))

    def render(ctx: Ctx, repo: Repo, c: Stored) -> Json:
        fn: Callable[[Repo, Stored], Json] = getattr(ctx.state, f"render_{kind}")
        return fn(repo, c)

    @route("GET", path)
    def get_comment(ctx: Ctx) -> Reply:
        repo, c = lookup(ctx)
        return Reply(200, render(ctx, repo, c))

    @route("PATCH", path)
    def update_comment(ctx: Ctx) -> Reply:
        repo, c = lookup(ctx)
        c.data.update(body=ctx.text("body", resource, doc), updated_at=ctx.state.now())
        return Reply(200, render(ctx, repo, c))

    @route("DELETE", path)
    def delete_comment(ctx: Ctx) -> Reply:
        repo, c = lookup(ctx)
        del getattr(repo, table)[c.data["id"]]
        repo.reactions.pop((reactions_key, c.data["id"]), None)
        return Reply(204)
