"""Review threads over GitHub's GraphQL API (PyGithub's requester), mixed into
:class:`bot.github.adapter.PyGithubPort`.

REST has no notion of a thread's resolution: ``reviewThreads`` lists them and
``resolveReviewThread`` resolves one. Both are POSTs to the GraphQL endpoint, which the urllib3
retry does not repeat; both are idempotent, so transient failures are retried here, bounded.
GitHub answers GraphQL errors with HTTP 200 and an ``errors`` list; they become
:class:`GitHubError` (FORBIDDEN: 403, NOT_FOUND: 404, anything else: 422).

Permissions: the token needs ``pull-requests: write`` to resolve a thread (reading needs
``pull-requests: read``); the review workflow template grants it.
"""

from __future__ import annotations

import time
from typing import Any

from github import GithubException

from bot.github.calls import call
from bot.github.port import GitHubError, ReviewThread

THREADS = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        nodes { id isResolved comments(first: 100) { nodes { databaseId } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""
RESOLVE = """
mutation($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } }
}
"""
MAX_PAGES = 50  # 5,000 threads: far beyond any pull request; a bound, not a limit anyone meets
_KINDS = {"FORBIDDEN": 403, "NOT_FOUND": 404}


class ThreadsAdapter:
    gh: Any  # the PyGithub client (set by PyGithubPort)
    repo: Any
    settings: Any

    def _graphql(self, operation: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                with call(operation):
                    try:
                        _, data = self.gh.requester.graphql_query(query, variables)
                    except GithubException as exc:
                        errors = exc.data.get("errors") if isinstance(exc.data, dict) else None
                        if not errors or not isinstance(errors, list):
                            raise
                        first = errors[0] if isinstance(errors[0], dict) else {}
                        raise GitHubError(_KINDS.get(str(first.get("type")), 422),
                                          str(first.get("message") or "GraphQL error"), operation) from None
                out = data.get("data") if isinstance(data, dict) else None
                if not isinstance(out, dict):
                    raise GitHubError(422, "the GraphQL answer has no data", operation)
                return out
            except GitHubError as exc:
                if not exc.transient or attempt >= self.settings.retries:
                    raise
                time.sleep(min(self.settings.backoff * 2 ** attempt, self.settings.max_wait))
                attempt += 1

    def review_threads(self, number: int) -> list[ReviewThread]:
        owner, name = str(self.settings.repository).split("/", 1)
        out: list[ReviewThread] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            data = self._graphql(f"list the review threads of #{number}", THREADS,
                                 {"owner": owner, "name": name, "number": number, "cursor": cursor})
            pr = ((data.get("repository") or {}).get("pullRequest") or {})
            conn = pr.get("reviewThreads") or {}
            for node in conn.get("nodes") or []:
                if not isinstance(node, dict) or not isinstance(node.get("id"), str):
                    continue
                ids = tuple(int(c["databaseId"]) for c in (node.get("comments") or {}).get("nodes") or []
                            if isinstance(c, dict) and isinstance(c.get("databaseId"), int))
                out.append(ReviewThread(node["id"], bool(node.get("isResolved")), ids))
            page = conn.get("pageInfo") or {}
            if not page.get("hasNextPage") or not isinstance(page.get("endCursor"), str):
                break
            cursor = page["endCursor"]
        return out

    def resolve_review_thread(self, thread_id: str) -> None:
        self._graphql(f"resolve review thread {thread_id}", RESOLVE, {"thread": thread_id})
