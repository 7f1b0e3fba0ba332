"""The few GitHub operations the bot needs, as plain records and one Protocol.

The event handlers depend on :class:`Port` only; :class:`bot.github.adapter.PyGithubPort`
implements it over PyGithub. Errors cross the port as :class:`GitHubError` (with the HTTP
status), never as library exceptions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.github.port_bench import BenchPort
from bot.github.port_results import ResultsPort


class GitHubError(Exception):
    """A GitHub call failed after retries; ``status`` is the HTTP status (0: no response)."""

    def __init__(self, status: int, message: str, operation: str = "") -> None:
        super().__init__(f"{operation}: {status} {message}" if operation else f"{status} {message}")
        self.status = status
        self.message = message
        self.operation = operation

    @property
    def rate_limited(self) -> bool:
        return self.status == 429 or (self.status == 403 and "rate limit" in self.message.lower())

    @property
    def forbidden(self) -> bool:
        """The token may not do this (a read-only token, as on pull requests from forks)."""
        return self.status == 403 and not self.rate_limited

    @property
    def transient(self) -> bool:
        """Worth another try: no response, a server error or a rate limit."""
        return self.status == 0 or self.status >= 500 or self.rate_limited


@dataclass(frozen=True)
class PullRequest:
    number: int
    head_sha: str
    base_sha: str
    head_ref: str
    base_ref: str
    author: str
    draft: bool
    state: str
    html_url: str
    head_repo: str = ""  # owner/name of the head's repository (a fork's for a PR from a fork)


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # added, modified, removed, renamed, copied, changed, unchanged
    patch: str | None  # the unified diff hunks; None when GitHub leaves it out (binary, too large)
    previous_path: str | None = None


@dataclass(frozen=True)
class Comment:
    """A pull request's conversation comment (an issue comment)."""

    id: int
    author: str
    body: str
    html_url: str = ""
    created_at: float = 0.0  # POSIX seconds


@dataclass(frozen=True)
class ReviewComment:
    """An inline comment on a pull request's diff."""

    id: int
    author: str
    body: str
    path: str
    line: int | None  # None: outdated (the line is gone) or a file-level comment
    in_reply_to: int | None = None
    html_url: str = ""
    side: str | None = None  # RIGHT, LEFT; None for a file-level comment
    subject_type: str = "line"  # line or file


@dataclass(frozen=True)
class TimelineEvent:
    """One event of a pull request's timeline (GET /issues/{n}/timeline) that can move its head:
    ``committed`` (``sha``; GitHub gives no server time, only the git dates an author sets, so
    ``at`` is None), ``head_ref_force_pushed`` (``sha`` the new head if GitHub says, ``at`` its
    server time), and any other kind with its server time."""

    kind: str
    sha: str | None
    at: float | None  # POSIX seconds of the server's created_at; None when GitHub gives none
    id: int | None = None  # the event's id (``labeled`` and most others have one; ``committed`` does not)
    actor: str = ""  # who did it (``labeled``: who added the label)
    label: str = ""  # ``labeled``/``unlabeled``: the label's name


@dataclass(frozen=True)
class RunInfo:
    """A workflow run for a commit (GET /actions/runs?head_sha=...): the event that started it,
    its head branch and head repository (owner/name, "" when GitHub gives none) and ``at``, the
    POSIX seconds of its server-set created_at."""

    head_sha: str
    event: str
    head_branch: str
    head_repo: str
    at: float


@dataclass(frozen=True)
class ReviewThread:
    """A review thread (GraphQL ``PullRequestReviewThread``): its node id, whether it is
    resolved, and the REST ids of its comments (the first is the thread's root comment)."""

    id: str
    resolved: bool
    comment_ids: tuple[int, ...]


@dataclass(frozen=True)
class DraftComment:
    """An inline comment to post with a review: on a line of the diff (RIGHT: the head's added or
    context lines, LEFT: the base's deleted lines), or on the whole file (``line`` None)."""

    path: str
    line: int | None  # None: a file-level comment (``subject_type: file``)
    body: str
    start_line: int | None = None
    side: str = "RIGHT"  # LEFT: a line the pull request deletes (line numbers of the base)


class Port(BenchPort, ResultsPort, Protocol):
    def login(self) -> str | None:
        """The token's own login, or None when GitHub will not say (an Actions token)."""
        ...

    def pull(self, number: int) -> PullRequest: ...

    def pull_files(self, number: int) -> list[ChangedFile]: ...

    def issue_comments(self, number: int) -> list[Comment]: ...

    def create_issue_comment(self, number: int, body: str) -> Comment: ...

    def edit_issue_comment(self, comment_id: int, body: str) -> None: ...

    def review_comments(self, number: int) -> list[ReviewComment]: ...

    def create_review(self, number: int, commit: str, body: str, comments: list[DraftComment]) -> None: ...

    def reply_to_review_comment(self, number: int, comment_id: int, body: str) -> None: ...

    def edit_review_comment(self, number: int, comment_id: int, body: str) -> None: ...

    def review_threads(self, number: int) -> list[ReviewThread]:
        """The pull request's review threads (GraphQL ``reviewThreads``, every page)."""
        ...

    def resolve_review_thread(self, thread_id: str) -> None:
        """GraphQL ``resolveReviewThread``; resolving a resolved thread is not an error."""
        ...

    # comment commands
    def permission(self, login: str) -> str:
        """The collaborator's role: admin, maintain, write, triage, read or none."""
        ...

    def react(self, comment_id: int, content: str) -> None:
        """Add a reaction (eyes, rocket, confused, ...) to a conversation comment; idempotent."""
        ...

    def reactions(self, comment_id: int) -> list[tuple[str, str]]:
        """(login, content) of a conversation comment's reactions."""
        ...

    def default_branch(self) -> str: ...

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str],
                          landed: Callable[[], bool]) -> None:
        """workflow_dispatch; after a failure, ``landed()`` says whether it went through anyway."""
        ...

    def repository_dispatch(self, event_type: str, payload: dict[str, str]) -> None: ...

    def find_run(self, workflow: str, title: str, since: float) -> str | None:
        """The html_url of a workflow_dispatch run of ``workflow`` named ``title`` created after ``since``."""
        ...

    def timeline(self, number: int) -> list[TimelineEvent]:
        """The pull request's timeline events, oldest first (every page)."""
        ...

    def delete_issue_comment(self, comment_id: int) -> None:
        """Delete a conversation comment; one already gone is not an error."""
        ...

    def head_runs(self, sha: str, limit: int) -> list[RunInfo]:
        """The repository's workflow runs for commit ``sha``, newest first: at most ``limit``,
        the first ones in the API's order (runs without a server time are left out)."""
        ...

