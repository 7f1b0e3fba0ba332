"""Endpoints: users, repositories, rate limit, issues, issue comments, reactions, permissions."""

from __future__ import annotations

from .api import (
    NOT_INTEGRATION,
    ApiError,
    Ctx,
    Reply,
    comment_routes,
    found,
    not_found,
    paginate,
    route,
    validation_failed,
)
from .state import LEGACY, REACTIONS, Json, Repo

DOC_COMMENTS = "https://docs.github.com/rest/issues/comments"
DOC_REACTIONS = "https://docs.github.com/rest/reactions/reactions"


@route("GET", r"/user")
def get_authenticated_user(ctx: Ctx) -> Reply:
    if ctx.token.app:
        raise ApiError(403, NOT_INTEGRATION, doc="https://docs.github.com/rest/users/users#get-the-authenticated-user")
    out = ctx.state.render_user(ctx.login)
    out.update(name=None, email=None, created_at="2020-01-01T00:00:00Z")
    return Reply(200, out)


@route("GET", r"/users/(?P<login>[^/]+)")
def get_user(ctx: Ctx) -> Reply:
    login = ctx.arg("login")
    if login not in ctx.state.users:
        raise not_found()
    out = ctx.state.render_user(login)
    out.update(name=None, created_at="2020-01-01T00:00:00Z")
    return Reply(200, out)


@route("GET", r"/rate_limit")
def rate_limit(ctx: Ctx) -> Reply:
    s = ctx.state

    def res(limit: int, used: int) -> Json:
        return {"limit": limit, "used": used, "remaining": max(0, limit - used), "reset": s.rate_reset}

    core = res(s.rate_limit, s.rate_used)
    resources = {"core": core, "search": res(30, 0), "graphql": res(5000, 0), "integration_manifest": res(5000, 0)}
    return Reply(200, {"resources": resources, "rate": core})


@route("GET", r"{repo}")
def get_repo(ctx: Ctx) -> Reply:
    return Reply(200, ctx.state.render_repo(ctx.repo(), viewer=ctx.login))


@route("GET", r"{repo}/collaborators/(?P<login>[^/]+)/permission")
def get_permission(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    login = ctx.arg("login")
    if login not in ctx.state.users:
        raise not_found()
    role = ctx.state.role(repo, login)
    user = ctx.state.render_user(login)
    rank = ("admin", "maintain", "write", "triage", "read", "none").index(role)
    user["permissions"] = {
        "admin": rank <= 0,
        "maintain": rank <= 1,
        "push": rank <= 2,
        "triage": rank <= 3,
        "pull": rank <= 4,
    }
    user["role_name"] = role
    return Reply(200, {"permission": LEGACY[role], "role_name": role, "user": user})


@route("GET", r"{repo}/collaborators/(?P<login>[^/]+)")
def check_collaborator(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    if ctx.state.role(repo, ctx.arg("login")) == "none":
        raise not_found()
    return Reply(204)


# -- issues and issue comments ---------------------------------------------------------------------


@route("GET", r"{repo}/issues/(?P<number>\d+)")
def get_issue(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.state.render_issue(repo, ctx.issue(repo)))


@route("GET", r"{repo}/issues/(?P<number>\d+)/comments")
def list_issue_comments(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.issue(repo)
    since = ctx.query.get("since")
    items = [
        ctx.state.render_issue_comment(repo, c)
        for c in repo.issue_comments.values()
        if c.number == issue.number and (since is None or c.data["updated_at"] >= since)
    ]
    return paginate(ctx, items)


@route("POST", r"{repo}/issues/(?P<number>\d+)/comments")
def create_issue_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.issue(repo)
    body = ctx.text("body", "IssueComment", f"{DOC_COMMENTS}#create-an-issue-comment")
    stored = ctx.state.make_issue_comment(repo, issue.number, ctx.login, body)
    issue.updated_at = stored.data["created_at"]
    return Reply(201, ctx.state.render_issue_comment(repo, stored), {"Location": stored.data["url"]})


@route("GET", r"{repo}/issues/(?P<number>\d+)/timeline")
def list_timeline(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return paginate(ctx, ctx.state.render_timeline(repo, ctx.issue(repo)))


comment_routes(r"{repo}/issues/comments/(?P<id>\d+)", "issue_comment", "comment", "IssueComment",
               f"{DOC_COMMENTS}#update-an-issue-comment")


# -- reactions --------------------------------------------------------------------------------------


def _reaction_target(ctx: Ctx, repo: Repo) -> tuple[str, int]:
    """The reactions key for the matched subject: an issue comment, an issue, or a review comment."""
    if "id" in ctx.match.groupdict() and ctx.match.group("id") is not None:
        if "/pulls/comments/" in ctx.path:
            found(repo.review_comments, ctx.num("id"))
            return ("review_comment", ctx.num("id"))
        found(repo.issue_comments, ctx.num("id"))
        return ("comment", ctx.num("id"))
    return ("issue", ctx.issue(repo).number)


def list_reactions(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    key = _reaction_target(ctx, repo)
    content = ctx.query.get("content")
    items = [dict(r) for r in repo.reactions.get(key, []) if content is None or r["content"] == content]
    return paginate(ctx, items)


def create_reaction(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    key = _reaction_target(ctx, repo)
    doc = f"{DOC_REACTIONS}#create-reaction-for-an-issue-comment"
    content = ctx.text("content", "Reaction", doc)
    if content not in REACTIONS:
        raise validation_failed("Reaction", "content", "content is not included in the list", doc=doc)
    existing = repo.reactions.setdefault(key, [])
    for r in existing:
        if r["user"]["login"] == ctx.login and r["content"] == content:
            return Reply(200, dict(r))
    rid = ctx.state.new_id()
    reaction: Json = {
        "id": rid,
        "node_id": f"REA_fake{rid}",
        "user": ctx.state.render_user(ctx.login),
        "content": content,
        "created_at": ctx.state.now(),
    }
    existing.append(reaction)
    return Reply(201, dict(reaction))


def delete_reaction(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    key = _reaction_target(ctx, repo)
    rs = repo.reactions.get(key, [])
    keep = [r for r in rs if r["id"] != ctx.num("reaction")]
    if len(keep) == len(rs):
        raise not_found()
    repo.reactions[key] = keep
    return Reply(204)


_SUBJECTS = (
    r"{repo}/issues/comments/(?P<id>\d+)",
    r"{repo}/issues/(?P<number>\d+)",
    r"{repo}/pulls/comments/(?P<id>\d+)",
)
for _subject in _SUBJECTS:
    route("GET", _subject + "/reactions")(list_reactions)
    route("POST", _subject + "/reactions")(create_reaction)
    route("DELETE", _subject + r"/reactions/(?P<reaction>\d+)")(delete_reaction)
