"""The one PyGithub implementation of :class:`bot.github.port.Port`.

Configured exactly as GitHub Actions provides it (:class:`Settings.from_env`):
GITHUB_API_URL (GitHub Enterprise, a test server), GITHUB_TOKEN, GITHUB_REPOSITORY.
Retries are PyGithub's own :class:`github.GithubRetry` (a urllib3 Retry that understands
GitHub's primary and secondary rate limits), bounded: a few attempts with exponential
backoff on 5xx and 429, and no single wait longer than ``max_wait`` seconds, whatever
Retry-After or x-ratelimit-reset ask for. Every list is read through PyGithub's
paginated lists, page by page to the end.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import github
from github import Auth, GithubException, GithubRetry
from urllib3.response import BaseHTTPResponse

from bot.github.adapter_bench import BenchAdapter
from bot.github.adapter_results import ResultsAdapter
from bot.github.adapter_threads import ThreadsAdapter
from bot.github.calls import call as _call
from bot.github.port import (
    ChangedFile,
    Comment,
    DraftComment,
    GitHubError,
    PullRequest,
    ReviewComment,
    RunInfo,
    TimelineEvent,
)

log = logging.getLogger("benchbot.github")
T = TypeVar("T")
DEFAULT_API_URL = "https://api.github.com"


class SettingsError(Exception):
    """A missing or malformed GITHUB_* variable."""


@dataclass(frozen=True)
class Settings:
    api_url: str
    token: str
    repository: str  # owner/name
    retries: int = 5
    backoff: float = 1.0  # seconds; doubles each attempt
    max_wait: float = 120.0  # the longest single wait for a rate limit or Retry-After
    write_interval: float = 1.0  # GitHub asks integrations to space their writes

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        token = env.get("GITHUB_TOKEN", "")
        repository = env.get("GITHUB_REPOSITORY", "")
        if not token:
            raise SettingsError("GITHUB_TOKEN is not set (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})")
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise SettingsError(f"GITHUB_REPOSITORY must be owner/name, not {repository!r}")
        return cls(
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            token=token,
            repository=repository,
            retries=_number(env, "BENCHBOT_GITHUB_RETRIES", 5, int),
            backoff=_number(env, "BENCHBOT_GITHUB_BACKOFF", 1.0, float),
            max_wait=_number(env, "BENCHBOT_GITHUB_MAX_WAIT", 120.0, float),
            write_interval=_number(env, "BENCHBOT_GITHUB_WRITE_INTERVAL", 1.0, float),
        )


def _number(env: Mapping[str, str], name: str, default: T, kind: Callable[[str], T]) -> T:
    text = env.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {text!r}") from None
    if float(value) < 0:  # type: ignore[arg-type]
        raise SettingsError(f"{name} must not be negative")
    return value


class BoundedRetry(GithubRetry):
    """GithubRetry that caps a Retry-After at ``max_rate_limit_wait`` (see :func:`make_retry`)."""

    def get_retry_after(self, response: BaseHTTPResponse) -> float | None:
        wait = super().get_retry_after(response)
        if wait is not None and self.max_rate_limit_wait is not None:
            wait = min(wait, self.max_rate_limit_wait)
        return wait


def make_retry(settings: Settings) -> BoundedRetry:
    return BoundedRetry(
        total=settings.retries,
        backoff_factor=settings.backoff,
        backoff_max=settings.max_wait,
        status_forcelist=[*range(500, 600), 429],
        # Repeating these is harmless (an edit sets a body). POST is not among them: a POST that
        # failed may still have landed, so PyGithubPort._post_once looks before it posts again.
        allowed_methods=frozenset({"GET", "PATCH", "PUT", "DELETE"}),
        max_rate_limit_wait=settings.max_wait,
        secondary_rate_wait=min(60.0, settings.max_wait),
    )


class PyGithubPort(ThreadsAdapter, BenchAdapter, ResultsAdapter):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.gh = github.Github(
            auth=Auth.Token(settings.token),
            base_url=settings.api_url,
            retry=make_retry(settings),
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=settings.write_interval or None,
            lazy=True,
        )
        self.repo = self.gh.get_repo(settings.repository)

    def _post_once(self, operation: str, post: Callable[[], T], landed: Callable[[], T | None]) -> T:
        """POST, and after a transient failure look whether it landed before posting again:
        a 502 from a proxy can hide a comment GitHub did create. Never posts twice."""
        attempt = 0
        while True:
            try:
                with _call(operation):
                    return post()
            except GitHubError as exc:
                if not exc.transient or attempt >= self.settings.retries:
                    raise
                time.sleep(min(self.settings.backoff * 2 ** attempt, self.settings.max_wait))
                attempt += 1
                with _call(f"check whether '{operation}' landed"):
                    found = landed()
                if found is not None:
                    log.info("%s: failed with %s but had landed", operation, exc.status)
                    return found

    # ------------------------------------------------------------------ identity
    def login(self) -> str | None:
        try:
            with _call("GET /user"):
                return str(self.gh.get_user().login)
        except GitHubError as exc:
            if exc.status in (401, 403):
                log.info("GET /user refused (%s): the token does not say whose it is", exc.status)
                return None
            raise

    # ------------------------------------------------------------------ pulls
    def _pull(self, number: int) -> Any:
        return self.repo.get_pull(number)

    def pull(self, number: int) -> PullRequest:
        with _call(f"GET pull request #{number}"):
            pr = self.repo.get_pull(number)
            return PullRequest(
                number=pr.number, head_sha=pr.head.sha, base_sha=pr.base.sha, head_ref=pr.head.ref,
                base_ref=pr.base.ref, author=pr.user.login if pr.user else "", draft=bool(pr.draft),
                state=pr.state, html_url=pr.html_url or "",
                head_repo=pr.head.repo.full_name if pr.head.repo else "")

    def pull_files(self, number: int) -> list[ChangedFile]:
        with _call(f"list the files of #{number}"):
            return [ChangedFile(f.filename, f.status, f.patch, f.previous_filename)
                    for f in self._pull(number).get_files()]

    # ------------------------------------------------------------------ conversation comments
    def issue_comments(self, number: int) -> list[Comment]:
        with _call(f"list the comments of #{number}"):
            return [Comment(c.id, c.user.login if c.user else "", c.body or "", c.html_url or "",
                            c.created_at.timestamp() if c.created_at else 0.0)
                    for c in self.repo.get_issue(number).get_comments()]

    def create_issue_comment(self, number: int, body: str) -> Comment:
        def post() -> Comment:
            c = self.repo.get_issue(number).create_comment(body)
            return Comment(c.id, c.user.login if c.user else "", c.body or "", c.html_url or "")

        def landed() -> Comment | None:
            return next((c for c in reversed(self.issue_comments(number)) if c.body == body), None)

        return self._post_once(f"comment on #{number}", post, landed)

    def edit_issue_comment(self, comment_id: int, body: str) -> None:
        with _call(f"edit comment {comment_id}"):
            self.repo.get_issue(0).get_comment(comment_id).edit(body)

    # ------------------------------------------------------------------ review comments
    def review_comments(self, number: int) -> list[ReviewComment]:
        with _call(f"list the review comments of #{number}"):
            return [ReviewComment(c.id, c.user.login if c.user else "", c.body or "", c.path, c.line,
                                  c.in_reply_to_id, c.html_url or "", c.side, c.subject_type or "line")
                    for c in self._pull(number).get_review_comments()]

    def create_review(self, number: int, commit: str, body: str, comments: list[DraftComment]) -> None:
        drafts: list[dict[str, Any]] = []
        for d in comments:
            item: dict[str, Any] = {"path": d.path, "body": d.body}
            if d.line is None:
                item["subject_type"] = "file"
            else:
                item.update(line=d.line, side=d.side)
                if d.start_line is not None and d.start_line < d.line:
                    item.update(start_line=d.start_line, start_side=d.side)
            drafts.append(item)
        lines = [d for d in comments if d.line is not None]
        files = [d for d in comments if d.line is None]

        def post() -> bool:
            self._pull(number).create_review(commit=self.repo.get_commit(commit), body=body, event="COMMENT",
                                             comments=[item for item, d in zip(drafts, comments) if d.line is not None])
            return True

        def landed() -> bool | None:
            bodies = {c.body for c in self.review_comments(number)}
            return True if lines and all(d.body in bodies for d in lines) else None

        if lines:
            self._post_once(f"review #{number}", post, landed)
        for d in files:  # a review's comments cannot be file-level: each is a review comment of its own
            self._file_comment(number, commit, d)

    def _file_comment(self, number: int, commit: str, d: DraftComment) -> None:
        def post() -> bool:
            self._pull(number).create_review_comment(d.body, commit, d.path, subject_type="file")
            return True

        def landed() -> bool | None:
            return True if any(c.body == d.body and c.path == d.path for c in self.review_comments(number)) else None

        self._post_once(f"comment on {d.path} of #{number}", post, landed)

    def reply_to_review_comment(self, number: int, comment_id: int, body: str) -> None:
        def post() -> bool:
            self._pull(number).create_review_comment_reply(comment_id, body)
            return True

        def landed() -> bool | None:
            return True if any(c.in_reply_to == comment_id and c.body == body
                               for c in self.review_comments(number)) else None

        self._post_once(f"reply to review comment {comment_id}", post, landed)

    def edit_review_comment(self, number: int, comment_id: int, body: str) -> None:
        with _call(f"edit review comment {comment_id}"):
            self._pull(number).get_review_comment(comment_id).edit(body)


    # ------------------------------------------------------------------ comment commands
    def permission(self, login: str) -> str:
        with _call(f"read the permission of {login}"):
            try:
                role = str(self.repo.get_collaborator_role_name(login)).lower()
            except GithubException as exc:
                if exc.status == 404:  # not a collaborator (or no such user)
                    return "none"
                raise
            if role in ("admin", "maintain", "write", "triage", "read", "none"):
                return role
            # a custom role: its base permission (admin, write, read or none) decides
            return str(self.repo.get_collaborator_permission(login)).lower()

    def react(self, comment_id: int, content: str) -> None:
        with _call(f"react {content} to comment {comment_id}"):
            self.repo.get_issue(0).get_comment(comment_id).create_reaction(content)

    def reactions(self, comment_id: int) -> list[tuple[str, str]]:
        with _call(f"list the reactions of comment {comment_id}"):
            return [(r.user.login if r.user else "", r.content)
                    for r in self.repo.get_issue(0).get_comment(comment_id).get_reactions()]

    def default_branch(self) -> str:
        with _call("read the repository"):
            return str(self.repo.default_branch)

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str],
                          landed: Callable[[], bool]) -> None:
        def post() -> bool:
            ok = self.repo.get_workflow(workflow).create_dispatch(ref, inputs, throw=True)
            if not ok:
                raise GithubException(500, {"message": "workflow_dispatch was not accepted"}, None)
            return True

        self._post_once(f"dispatch {workflow}", post, lambda: True if landed() else None)

    def repository_dispatch(self, event_type: str, payload: dict[str, str]) -> None:
        with _call(f"repository_dispatch {event_type}"):
            self.repo.create_repository_dispatch(event_type, dict(payload))

    def find_run(self, workflow: str, title: str, since: float) -> str | None:
        with _call(f"list the runs of {workflow}"):
            for run in self.repo.get_workflow(workflow).get_runs(event="workflow_dispatch"):
                created = run.created_at.timestamp() if run.created_at else 0.0
                if created < since - 60:
                    break  # newest first: the rest are older
                if run.display_title == title:
                    return str(run.html_url)
        return None

    def timeline(self, number: int) -> list[TimelineEvent]:
        with _call(f"read the timeline of #{number}"):
            out: list[TimelineEvent] = []
            for e in self.repo.get_issue(number).get_timeline():
                raw = e.raw_data if isinstance(e.raw_data, dict) else {}
                kind = str(raw.get("event") or "")
                sha = raw.get("sha") if kind == "committed" else raw.get("commit_id")
                created = raw.get("created_at") if kind != "committed" else None
                at = _posix(created) if isinstance(created, str) else None
                actor_raw, label_raw = raw.get("actor"), raw.get("label")
                actor: dict[str, Any] = actor_raw if isinstance(actor_raw, dict) else {}
                label: dict[str, Any] = label_raw if isinstance(label_raw, dict) else {}
                ident = raw.get("id")
                out.append(TimelineEvent(kind, str(sha) if sha else None, at,
                                         ident if isinstance(ident, int) and not isinstance(ident, bool) else None,
                                         str(actor.get("login") or ""), str(label.get("name") or "")))
            return out

    def delete_issue_comment(self, comment_id: int) -> None:
        try:
            with _call(f"delete comment {comment_id}"):
                self.repo.get_issue(0).get_comment(comment_id).delete()
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def head_runs(self, sha: str, limit: int) -> list[RunInfo]:
        if limit <= 0:
            return []
        with _call(f"list the workflow runs for {sha[:12]}"):
            out: list[RunInfo] = []
            for i, run in enumerate(self.repo.get_workflow_runs(head_sha=sha), 1):
                head = run.head_repository  # the listed fields only (raw_data would GET each run)
                if run.created_at is not None:
                    out.append(RunInfo(str(run.head_sha or ""), str(run.event or ""), str(run.head_branch or ""),
                                       str(head.full_name) if head is not None else "", run.created_at.timestamp()))
                if i >= limit:
                    break  # newest first; with per_page=100, 100 runs are one request (no next page)
            return out


def _posix(text: str) -> float | None:
    """An ISO 8601 time from GitHub as POSIX seconds (None if unreadable)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def from_env(env: Mapping[str, str] | None = None) -> PyGithubPort:
    return PyGithubPort(Settings.from_env(os.environ if env is None else env))
