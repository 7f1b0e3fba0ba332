"""Endpoints: pull requests, their files, review comments and reviews (with GitHub's validation of
review-comment anchors against the PR's diff)."""

from __future__ import annotations

from typing import Any

from .api import Ctx, Reply, comment_routes, missing, not_found, paginate, route, unprocessable, wrong_type
from .diff import Patch
from .state import Issue, Json, Pull, Repo, Stored

DOC_REVIEWS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
DOC_COMMENTS = "https://docs.github.com/rest/pulls/comments"
LINE_NOT_IN_DIFF = "Pull request review thread line must be part of the diff"
EVENTS = {"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}


@route("GET", r"{repo}/pulls")
def list_pulls(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    want = ctx.query.get("state", "open")
    head = ctx.query.get("head")
    base = ctx.query.get("base")
    items = []
    for issue in sorted(repo.issues.values(), key=lambda i: -i.number):
        p = issue.pull
        if p is None or (want != "all" and issue.state != want):
            continue
        if head is not None and head != f"{p.head_repo.partition('/')[0]}:{p.head_ref}":
            continue
        if base is not None and base != p.base_ref:
            continue
        items.append(ctx.state.render_pull(repo, issue))
    return paginate(ctx, items)


@route("GET", r"{repo}/pulls/(?P<number>\d+)")
def get_pull(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    return Reply(200, ctx.state.render_pull(repo, issue))


@route("GET", r"{repo}/pulls/(?P<number>\d+)/files")
def list_files(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, p = ctx.pull(repo)
    return paginate(ctx, [ctx.state.render_file(repo, p, f) for f in p.files])


# -- anchoring review comments -----------------------------------------------------------------------


def _int_field(c: Json, name: str, doc: str) -> int | None:
    value = c.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(f"comments/items/{name}", value, "an integer", doc)
    return value


def _side(c: Json, name: str, default: str, doc: str) -> str:
    value = c.get(name) or default
    if value not in ("LEFT", "RIGHT"):
        raise wrong_type(f"comments/items/{name}", value, 'one of ["LEFT", "RIGHT"]', doc)
    return str(value)


def anchor(p: Pull, c: Json, commit_id: str, doc: str, *, files_ok: bool = False) -> tuple[Json | None, list[str]]:
    """Where a requested review comment lands in the diff, or the problems GitHub would report.
    ``files_ok``: ``subject_type: file`` is honoured (the single-comment endpoint; a review's
    ``comments`` items have no such field, as on GitHub)."""
    path = c.get("path")
    if not isinstance(path, str):
        raise missing("path", doc) if path is None else wrong_type("comments/items/path", path, "a string", doc)
    files = {f["filename"]: f for f in p.files}
    if path not in files:
        return None, ["Path could not be resolved"]
    subject = (c.get("subject_type") or "line") if files_ok else "line"
    if subject not in ("line", "file"):
        raise wrong_type("comments/items/subject_type", subject, 'one of ["line", "file"]', doc)
    if subject == "file":  # a comment on the whole file: no line, no position
        return {"path": path, "line": None, "side": None, "position": None, "diff_hunk": "",
                "commit_id": commit_id, "start_line": None, "start_side": None, "subject_type": "file"}, []
    patch = Patch(files[path].get("patch"))
    position = _int_field(c, "position", doc)
    line = _int_field(c, "line", doc)
    start_line = _int_field(c, "start_line", doc)
    if line is None and position is not None:
        dl = patch.at_position(position)
        if dl is None:
            return None, ["Pull request review thread diff hunk can't be blank"]
        side = "LEFT" if dl.kind == "-" else "RIGHT"
        line = dl.old if side == "LEFT" else dl.new
        start_line = None
    elif line is not None:
        side = _side(c, "side", "RIGHT", doc)
        dl = patch.find(line, side)
        if dl is None:
            return None, [LINE_NOT_IN_DIFF]
    else:
        return None, [LINE_NOT_IN_DIFF]
    out: Json = {
        "path": path,
        "line": line,
        "side": side,
        "position": dl.position,
        "diff_hunk": patch.diff_hunk(dl),
        "commit_id": commit_id,
        "start_line": None,
        "start_side": None,
    }
    if start_line is not None:
        start_side = _side(c, "start_side", side, doc)
        sdl = patch.find(start_line, start_side)
        if sdl is None:
            return None, [LINE_NOT_IN_DIFF]
        if sdl.hunk != dl.hunk:
            return None, ["Pull request review thread start line must be part of the same hunk as the line."]
        if sdl.position >= dl.position:
            return None, ["Pull request review thread start line must precede the end line."]
        out.update(start_line=start_line, start_side=start_side)
    return out, []


def _commit(ctx: Ctx, p: Pull, doc: str, *, required: bool = False) -> str:
    commit_id = ctx.obj().get("commit_id")
    if commit_id is None:
        if required:
            raise missing("commit_id", doc)
        return p.head_sha
    if not isinstance(commit_id, str):
        raise wrong_type("commit_id", commit_id, "a string", doc)
    if commit_id not in p.shas:
        raise unprocessable(["Pull request review thread end commit oid is not part of the pull request"], doc)
    return commit_id


# -- review comments -----------------------------------------------------------------------------------


@route("GET", r"{repo}/pulls/(?P<number>\d+)/comments")
def list_review_comments(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    since = ctx.query.get("since")
    items = [
        ctx.state.render_review_comment(repo, c)
        for c in repo.review_comments.values()
        if c.number == issue.number and (since is None or c.data["updated_at"] >= since)
    ]
    return paginate(ctx, items)


def _reply(ctx: Ctx, repo: Repo, issue: Issue, parent_id: int, body: str) -> Reply:
    parent = repo.review_comments.get(parent_id)
    if parent is None or parent.number != issue.number:
        raise not_found()
    root = parent.data.get("in_reply_to_id") or parent_id  # replies to replies join the thread's root
    src = repo.review_comments.get(root, parent).data
    keys = ("path", "line", "side", "start_line", "start_side", "position", "diff_hunk", "commit_id")
    anchor_ = {k: src[k] for k in keys}
    for k in ("original_line", "original_position", "original_commit_id", "original_start_line"):
        anchor_[k] = src[k]
    review = ctx.state.make_review(repo, issue.number, ctx.login, "", "COMMENTED", src["commit_id"])
    c = ctx.state.make_review_comment(repo, issue.number, ctx.login, review.data["id"], body, anchor_, root)
    return Reply(201, ctx.state.render_review_comment(repo, c), {"Location": c.data["url"]})


@route("POST", r"{repo}/pulls/(?P<number>\d+)/comments/(?P<id>\d+)/replies")
def reply_review_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    body = ctx.text("body", "PullRequestReviewComment", f"{DOC_COMMENTS}#create-a-reply-for-a-review-comment")
    return _reply(ctx, repo, issue, ctx.num("id"), body)


@route("POST", r"{repo}/pulls/(?P<number>\d+)/comments")
def create_review_comment(ctx: Ctx) -> Reply:
    """A single review comment (its own one-comment review), or a reply with ``in_reply_to``."""
    repo = ctx.repo()
    issue, p = ctx.pull(repo)
    doc = f"{DOC_COMMENTS}#create-a-review-comment-for-a-pull-request"
    body = ctx.text("body", "PullRequestReviewComment", doc)
    obj = ctx.obj()
    if obj.get("in_reply_to") is not None:
        return _reply(ctx, repo, issue, int(obj["in_reply_to"]), body)
    commit_id = _commit(ctx, p, doc, required=True)
    where, problems = anchor(p, obj, commit_id, doc, files_ok=True)
    if where is None:
        raise unprocessable(problems, doc)
    review = ctx.state.make_review(repo, issue.number, ctx.login, "", "COMMENTED", commit_id)
    c = ctx.state.make_review_comment(repo, issue.number, ctx.login, review.data["id"], body, where, None)
    return Reply(201, ctx.state.render_review_comment(repo, c), {"Location": c.data["url"]})


comment_routes(r"{repo}/pulls/comments/(?P<id>\d+)", "review_comment", "review_comment", "PullRequestReviewComment",
               f"{DOC_COMMENTS}#update-a-review-comment-for-a-pull-request")


# -- reviews -----------------------------------------------------------------------------------------


@route("GET", r"{repo}/pulls/(?P<number>\d+)/reviews")
def list_reviews(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    items = [dict(r.data) for r in repo.reviews.values() if r.number == issue.number]
    return paginate(ctx, items)


def _review(ctx: Ctx, repo: Repo, issue: Issue) -> Stored:
    r = repo.reviews.get(ctx.num("id"))
    if r is None or r.number != issue.number:
        raise not_found()
    return r


@route("GET", r"{repo}/pulls/(?P<number>\d+)/reviews/(?P<id>\d+)")
def get_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    return Reply(200, dict(_review(ctx, repo, issue).data))


@route("GET", r"{repo}/pulls/(?P<number>\d+)/reviews/(?P<id>\d+)/comments")
def list_review_comments_of_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, _ = ctx.pull(repo)
    rid = _review(ctx, repo, issue).data["id"]
    items = [
        ctx.state.render_review_comment(repo, c)
        for c in repo.review_comments.values()
        if c.data["pull_request_review_id"] == rid
    ]
    return paginate(ctx, items)


@route("POST", r"{repo}/pulls/(?P<number>\d+)/reviews")
def create_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, p = ctx.pull(repo)
    doc = DOC_REVIEWS
    obj = ctx.obj()
    body = ctx.text("body", "PullRequestReview", doc, required=False)
    event = obj.get("event")
    if event is not None and event not in EVENTS:
        raise wrong_type("event", event, 'one of ["APPROVE", "REQUEST_CHANGES", "COMMENT"]', doc)
    commit_id = _commit(ctx, p, doc)
    raw_comments: Any = obj.get("comments") or []
    if not isinstance(raw_comments, list) or not all(isinstance(c, dict) for c in raw_comments):
        raise wrong_type("comments", raw_comments, "an array of objects", doc)
    anchors: list[tuple[Json, str]] = []
    problems: list[str] = []
    for c in raw_comments:
        text = c.get("body")
        if not isinstance(text, str):
            raise missing("comments/items/body", doc) if text is None else wrong_type("body", text, "a string", doc)
        where, errs = anchor(p, c, commit_id, doc)
        problems += errs
        if where is not None:
            anchors.append((where, text))
    if problems:
        raise unprocessable(problems, doc)
    if event == "REQUEST_CHANGES" and not body:
        raise unprocessable(["You need to leave a comment indicating the requested changes."], doc)
    if event == "COMMENT" and not body and not raw_comments:
        raise unprocessable(["You need to leave a comment."], doc)
    if event in ("APPROVE", "REQUEST_CHANGES") and ctx.login == issue.user:
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise unprocessable([f"Can not {verb} your own pull request"], doc)
    state = EVENTS[event] if event else "PENDING"
    if state == "PENDING" and any(
        r.number == issue.number and r.data["state"] == "PENDING" and r.data["user"]["login"] == ctx.login
        for r in repo.reviews.values()
    ):
        raise unprocessable(["User can only have one pending review per pull request"], doc)
    review = ctx.state.make_review(repo, issue.number, ctx.login, body, state, commit_id)
    for where, text in anchors:
        ctx.state.make_review_comment(repo, issue.number, ctx.login, review.data["id"], text, where, None)
    return Reply(200, dict(review.data))
