"""GitHub's GraphQL endpoint (``POST /api/graphql`` on GitHub Enterprise), the part the bot uses:
a pull request's review threads and the ``resolveReviewThread`` mutation.

Queries are parsed, validated and executed by graphql-core against a schema that is a faithful
subset of GitHub's (same type, field and argument names), so a misspelt field or a wrong argument
type fails here as it would on GitHub. A thread is a root review comment and its replies; its node
id is ``PRRT_fake<root id>``. Errors come back as GitHub sends them: HTTP 200 with an ``errors``
list (``type``: NOT_FOUND, FORBIDDEN), ``data`` null for the failed field.
"""

from __future__ import annotations

import base64
from typing import Any

from graphql import GraphQLError, build_schema, graphql_sync

from .api import NOT_INTEGRATION, ApiError, Ctx, Reply, route
from .state import Json, Repo, State, Stored

SDL = """
type Query {
  repository(owner: String!, name: String!): Repository
}
type Mutation {
  resolveReviewThread(input: ResolveReviewThreadInput!): ResolveReviewThreadPayload
  unresolveReviewThread(input: UnresolveReviewThreadInput!): UnresolveReviewThreadPayload
}
type Repository {
  nameWithOwner: String!
  pullRequest(number: Int!): PullRequest
}
type PullRequest {
  number: Int!
  reviewThreads(first: Int, after: String, last: Int, before: String): PullRequestReviewThreadConnection!
}
type PullRequestReviewThreadConnection {
  nodes: [PullRequestReviewThread]
  pageInfo: PageInfo!
  totalCount: Int!
}
type PageInfo {
  hasNextPage: Boolean!
  endCursor: String
  hasPreviousPage: Boolean!
  startCursor: String
}
type PullRequestReviewThread {
  id: ID!
  isResolved: Boolean!
  isOutdated: Boolean!
  path: String!
  line: Int
  comments(first: Int, after: String): PullRequestReviewCommentConnection!
}
type PullRequestReviewCommentConnection {
  nodes: [PullRequestReviewComment]
  totalCount: Int!
}
type PullRequestReviewComment {
  id: ID!
  databaseId: Int
  body: String!
  author: Actor
}
type Actor {
  login: String!
}
input ResolveReviewThreadInput {
  threadId: ID!
  clientMutationId: String
}
type ResolveReviewThreadPayload {
  thread: PullRequestReviewThread
  clientMutationId: String
}
input UnresolveReviewThreadInput {
  threadId: ID!
  clientMutationId: String
}
type UnresolveReviewThreadPayload {
  thread: PullRequestReviewThread
  clientMutationId: String
}
"""
SCHEMA = build_schema(SDL)
MAX_PAGE = 100


class _Problem(GraphQLError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message, extensions={"type": kind})


def _threads(repo: Repo, number: int) -> list[tuple[Stored, list[Stored]]]:
    """(root comment, replies) of the pull request's threads, oldest first."""
    mine = sorted((c for c in repo.review_comments.values() if c.number == number), key=lambda c: c.data["id"])
    roots = [c for c in mine if c.data.get("in_reply_to_id") is None]
    return [(r, [c for c in mine if c.data.get("in_reply_to_id") == r.data["id"]]) for r in roots]


def _thread_json(repo: Repo, root: Stored, replies: list[Stored]) -> Json:
    def comment(c: Stored) -> Json:
        return {"id": c.data["node_id"], "databaseId": c.data["id"], "body": c.data["body"],
                "author": {"login": c.data["user"]["login"]}}

    return {"id": f"PRRT_fake{root.data['id']}", "isResolved": root.data["id"] in repo.resolved_threads,
            "isOutdated": root.data.get("line") is None and root.data.get("subject_type") != "file",
            "path": root.data["path"], "line": root.data.get("line"),
            "_comments": [comment(c) for c in [root, *replies]]}


class _Root:
    """Resolvers (graphql-core's default resolver reads dict keys and attributes)."""

    def __init__(self, state: State, ctx: Ctx) -> None:
        self.state, self.ctx = state, ctx

    def repository(self, _info: Any, owner: str, name: str) -> Json | None:
        repo = self.state.repos.get(f"{owner}/{name}")
        if repo is None:
            raise _Problem("NOT_FOUND", f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        def pull_request(_info: Any, number: int) -> Json:
            issue = repo.issues.get(number)
            if issue is None or issue.pull is None:
                raise _Problem("NOT_FOUND", f"Could not resolve to a PullRequest with the number of {number}.")

            def review_threads(_info: Any, first: int | None = None, after: str | None = None,
                               last: int | None = None, before: str | None = None) -> Json:
                if first is None and last is None:
                    raise _Problem("MISSING_PAGINATION_BOUNDARIES", "You must provide a `first` or `last` value "
                                   "to properly paginate the `reviewThreads` connection.")
                size = first if first is not None else last
                if size is None or not 0 <= size <= MAX_PAGE:
                    raise _Problem("INVALID_ARGUMENT", f"Requesting {size} records on the `reviewThreads` "
                                   f"connection exceeds the `first` limit of {MAX_PAGE} records.")
                items = _threads(repo, number)
                start = int(base64.b64decode(after).decode().split(":")[1]) if after else 0
                page = items[start:start + size]
                end = start + len(page)
                nodes = []
                for root, replies in page:
                    t = _thread_json(repo, root, replies)
                    t["comments"] = _comments(t.pop("_comments"))
                    nodes.append(t)
                return {"nodes": nodes, "totalCount": len(items),
                        "pageInfo": {"hasNextPage": end < len(items), "hasPreviousPage": start > 0,
                                     "startCursor": _cursor(start) if page else None,
                                     "endCursor": _cursor(end) if page else None}}

            return {"number": number, "reviewThreads": review_threads}

        return {"nameWithOwner": repo.full_name, "pullRequest": pull_request}

    def resolveReviewThread(self, _info: Any, input: Json) -> Json:  # noqa: N802 (GitHub's field name)
        return self._set(input, True)

    def unresolveReviewThread(self, _info: Any, input: Json) -> Json:  # noqa: N802
        return self._set(input, False)

    def _set(self, data: Json, resolved: bool) -> Json:
        if self.ctx.token.read_only:
            raise _Problem("FORBIDDEN", NOT_INTEGRATION)
        thread_id = str(data["threadId"])
        for repo in self.state.repos.values():
            for number in {c.number for c in repo.review_comments.values()}:
                for root, replies in _threads(repo, number):
                    if f"PRRT_fake{root.data['id']}" == thread_id:
                        (repo.resolved_threads.add if resolved else repo.resolved_threads.discard)(root.data["id"])
                        t = _thread_json(repo, root, replies)
                        t["comments"] = _comments(t.pop("_comments"))
                        return {"thread": t, "clientMutationId": data.get("clientMutationId")}
        raise _Problem("NOT_FOUND", f"Could not resolve to a node with the global id of '{thread_id}'")


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:{index}".encode()).decode()


def _comments(items: list[Json]) -> Any:
    def resolve(_info: Any, first: int | None = None, after: str | None = None) -> Json:
        start = int(base64.b64decode(after).decode().split(":")[1]) if after else 0
        size = min(first if first is not None else MAX_PAGE, MAX_PAGE)
        return {"nodes": items[start:start + size], "totalCount": len(items)}

    return resolve


@route("POST", r"/graphql")
def graphql_endpoint(ctx: Ctx) -> Reply:
    obj = ctx.obj()
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ApiError(400, "A query attribute must be specified and must be a string.")
    variables = obj.get("variables") or {}
    if not isinstance(variables, dict):
        raise ApiError(400, "Variables must be a JSON object.")
    root = _Root(ctx.state, ctx)
    result = graphql_sync(SCHEMA, query, root_value=root, variable_values=variables)
    out: Json = {"data": result.data}
    if result.errors:
        out["errors"] = [{"message": e.message, "type": (e.extensions or {}).get("type", "INVALID"),
                          "path": e.path, "locations": [{"line": loc.line, "column": loc.column}
                                                        for loc in (e.locations or [])]}
                         for e in result.errors]
    return Reply(200, out)


def threads(state: State, repo: str, number: int) -> list[Json]:
    """For tests: the pull request's threads as the fake sees them (id, isResolved, comment ids)."""
    with state.lock:
        r = state.repos[repo]
        return [{"id": f"PRRT_fake{root.data['id']}", "isResolved": root.data["id"] in r.resolved_threads,
                 "comment_ids": [c.data["id"] for c in [root, *replies]]}
                for root, replies in _threads(r, number)]
