"""The HTTP side of the fake: a ThreadingHTTPServer on 127.0.0.1 (random port) serving GitHub's
REST API under a GHE-style ``/api/v3`` prefix, with fault injection and a request log; and
``FakeGitHub``, the object tests drive it (and set it up, and read its state) through."""

from __future__ import annotations

import copy
import json
import re
import socket
import threading
import time
import traceback
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import actions, bench_runs, contents, graphql, issues, pulls, results  # noqa: F401  (importing registers their routes)
from .api import DOCS, NOT_INTEGRATION, ApiError, Ctx, Reply, resolve
from .state import FILE_STATUSES, ROLES, USER_TYPES, Issue, Json, Pull, Repo, State, Token, User, Workflow, fake_sha

PREFIX = "/api/v3"
GRAPHQL = "/api/graphql"


@dataclass(frozen=True)
class Request:
    """One request as the server saw it: ``path`` without the /api/v3 prefix and without the query
    (percent-decoded), ``body`` the parsed JSON (None if empty or unparsable)."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    token: str | None
    status: int
    faulted: bool = False


@dataclass
class Fault:
    method: str  # "*" matches any method
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    after: bool = False  # process the request, then answer the fault (a proxy error hiding a success)


def _merge(headers: dict[str, str], extra: dict[str, str]) -> None:
    """Set ``extra`` into ``headers``, replacing case-insensitively."""
    for k, v in extra.items():
        for old in [h for h in headers if h.lower() == k.lower()]:
            del headers[old]
        headers[k] = v


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, fake: FakeGitHub) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake
        self.conns: set[socket.socket] = set()
        self.conns_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # connections torn down by clients or by stop(): nothing to report


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid 40 ms delayed-ACK stalls
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.conns_lock:
            self.server.conns.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.conns_lock:
                self.server.conns.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _serve(self) -> None:
        raw = self._read_body()
        status, headers, body = self.server.fake._handle(self.command, self.path, self.headers, raw)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and status not in (204, 304):
            self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve


def _query(r: Request) -> bool:
    """A GraphQL request that only reads (its document has no mutation)."""
    if r.path != "/graphql" or not isinstance(r.body, dict):
        return False
    return "mutation" not in str(r.body.get("query", "")).split("{", 1)[0]


class FakeGitHub:
    """A fake GitHub REST API. ``with FakeGitHub() as gh: ...`` or ``gh.start()`` / ``gh.stop()``."""

    def __init__(self) -> None:
        self._httpd = _Server(self)
        port = self._httpd.server_address[1]
        self.web_url = f"http://127.0.0.1:{port}"
        self.api_url = f"{self.web_url}{PREFIX}"
        self.state = State(self.api_url, self.web_url)
        self.errors: list[str] = []  # tracebacks of handler crashes (answered as 500)
        self._faults: list[Fault] = []
        self._requests: list[Request] = []
        self._thread: threading.Thread | None = None
        self.latency = 0.0  # seconds every request waits before it is served (outside the lock)
        self._slow: list[tuple[str, re.Pattern[str], float]] = []

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fakegithub", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._httpd.shutdown()
        with self._httpd.conns_lock:
            for conn in list(self._httpd.conns):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd.server_close()
        self._thread.join(5)
        self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- hooks ------------------------------------------------------------------------------------

    @property
    def run_title(self) -> Callable[[dict[str, str]], str] | None:
        """``display_title`` of dispatched runs from their inputs (None: the workflow's name)."""
        return self.state.run_title

    @run_title.setter
    def run_title(self, fn: Callable[[dict[str, str]], str] | None) -> None:
        self.state.run_title = fn

    @property
    def clock(self) -> Callable[[], datetime]:
        """Source of every created_at/updated_at (an aware datetime; default: now, UTC)."""
        return self.state.clock

    @clock.setter
    def clock(self, fn: Callable[[], datetime]) -> None:
        self.state.clock = fn

    # -- setup ------------------------------------------------------------------------------------

    def add_user(self, login: str, type: str = "User") -> User:
        """``type``: User, Bot (e.g. "github-actions[bot]") or Organization."""
        if type not in USER_TYPES:
            raise ValueError(f"user type must be one of {USER_TYPES}, not {type!r}")
        with self.state.lock:
            user = self.state.user(login, type)
            user.type = type
            return user

    def add_token(self, token: str, login: str, *, app: bool = False, read_only: bool = False) -> Token:
        with self.state.lock:
            self.state.user(login)
            tok = self.state.tokens[token] = Token(token, login, app, read_only)
            return tok

    def add_repo(
        self, full_name: str, *, default_branch: str = "main", private: bool = False, default_sha: str | None = None
    ) -> Repo:
        owner, sep, name = full_name.partition("/")
        if not sep or not owner or not name or "/" in name:
            raise ValueError(f"repository must be OWNER/NAME, not {full_name!r}")
        with self.state.lock:
            if owner not in self.state.users:
                self.state.user(owner, "Organization")
            repo = Repo(
                owner=owner,
                name=name,
                id=self.state.new_id(),
                default_branch=default_branch,
                default_sha=default_sha or fake_sha(full_name, default_branch),
                private=private,
                created_at=self.state.now(),
            )
            self.state.repos[full_name] = repo
            return repo

    def set_permission(self, repo: str, login: str, role: str) -> None:
        """``role``: admin, maintain, write, triage, read or none."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        with self.state.lock:
            self.state.user(login)
            self.state.repo(repo).permissions[login] = role

    def set_author_association(self, repo: str, login: str, association: str) -> None:
        """Override the author_association rendered for ``login`` (default: OWNER for the repository
        owner, COLLABORATOR with any permission, CONTRIBUTOR with a PR, else NONE)."""
        with self.state.lock:
            self.state.repo(repo).associations[login] = association

    def _new_number(self, repo: Repo, number: int | None) -> int:
        if number is None:
            return max(repo.issues, default=0) + 1
        if number in repo.issues:
            raise ValueError(f"{repo.full_name}#{number} exists")
        return number

    @staticmethod
    def _check_files(files: list[Json]) -> list[Json]:
        for f in files:
            if not isinstance(f.get("filename"), str):
                raise ValueError(f"a PR file needs a filename: {f!r}")
            if f.get("status", "modified") not in FILE_STATUSES:
                raise ValueError(f"file status must be one of {FILE_STATUSES}: {f!r}")
        return copy.deepcopy(files)

    def add_pull(
        self,
        repo: str,
        number: int | None = None,
        *,
        head_sha: str | None = None,
        base_sha: str | None = None,
        head_ref: str = "feature",
        base_ref: str | None = None,
        user: str = "octocat",
        title: str = "A pull request",
        body: str = "",
        files: list[Json] | None = None,
        draft: bool = False,
        state: str = "open",
        head_repo: str | None = None,
    ) -> Pull:
        """A pull request; ``head_repo`` (OWNER/NAME) makes it a PR from a fork."""
        with self.state.lock:
            r = self.state.repo(repo)
            n = self._new_number(r, number)
            self.state.user(user)
            now = self.state.now()
            pull = Pull(
                number=n,
                id=self.state.new_id(),
                head_sha=head_sha or fake_sha(repo, n, "head"),
                base_sha=base_sha or r.default_sha,
                head_ref=head_ref,
                base_ref=base_ref or r.default_branch,
                head_repo=head_repo or repo,
                draft=draft,
                files=self._check_files(files or []),
                shas=[],
            )
            pull.shas.append(pull.head_sha)
            self.state.record_head(r, n, pull, user, force=False)
            actions.record_pull_request_runs(self.state, r, pull, user)
            r.issues[n] = Issue(n, self.state.new_id(), user, title, body, state, now, now, pull)
            return pull

    def add_issue(
        self, repo: str, number: int | None = None, *, user: str = "octocat", title: str = "An issue", body: str = ""
    ) -> Issue:
        with self.state.lock:
            r = self.state.repo(repo)
            n = self._new_number(r, number)
            self.state.user(user)
            now = self.state.now()
            issue = r.issues[n] = Issue(n, self.state.new_id(), user, title, body, "open", now, now)
            return issue

    def push(
        self, repo: str, number: int, *, head_sha: str, files: list[Json] | None = None, base_sha: str | None = None,
        force: bool = False, committed_at: str | None = None, skip_runs: bool = False,
    ) -> Pull:
        """A new head for the PR; ``files`` (if given) replace the PR's files and patches. Review
        comments on files whose patch is unchanged follow the new head; the others become outdated.
        The timeline records it: a ``committed`` event (its git date ``committed_at``, default now)
        and, with ``force=True``, a ``head_ref_force_pushed`` event with the server's time. Each
        ``on_pull_request`` workflow gets a run for the new head, unless ``skip_runs`` (as when the
        head commit says ``[skip ci]`` or the PR edits the workflow's trigger away)."""
        with self.state.lock:
            r = self.state.repo(repo)
            issue, pull = self.state.pull(r, number)
            old_files = pull.files
            if files is not None:
                pull.files = self._check_files(files)
            pull.head_sha = head_sha
            if head_sha not in pull.shas:
                pull.shas.append(head_sha)
            self.state.record_head(r, number, pull, issue.user, force=force, committed_at=committed_at)
            if not skip_runs:
                actions.record_pull_request_runs(self.state, r, pull, issue.user)
            if base_sha is not None:
                pull.base_sha = base_sha
            issue.updated_at = self.state.now()
            self.state.reanchor_after_push(r, number, old_files, pull)
            return pull

    def add_workflow(
        self,
        repo: str,
        *,
        path: str,
        id: int | None = None,
        name: str | None = None,
        inputs: list[str] | None = None,
        dispatchable: bool = True,
        state: str = "active",
        on_pull_request: bool = False,
    ) -> Workflow:
        """``inputs``: the declared workflow_dispatch inputs (a dispatch with others is a 422);
        None accepts any. ``dispatchable=False``: no workflow_dispatch trigger (dispatch is a 422).
        ``on_pull_request=True``: an ``on: pull_request`` workflow; every PR opened or pushed from
        then on gets a ``pull_request`` run of it for the new head, at the fake's time."""
        with self.state.lock:
            r = self.state.repo(repo)
            wid = self.state.claim_id(id) if id is not None else self.state.new_id()
            wf = Workflow(wid, path, name or path, self.state.now(), state, inputs, dispatchable, on_pull_request)
            r.workflows[wid] = wf
            return wf

    def add_issue_comment(self, repo: str, number: int, user: str, body: str) -> Json:
        with self.state.lock:
            r = self.state.repo(repo)
            self.state.issue(r, number)
            self.state.user(user)
            return self.state.render_issue_comment(r, self.state.make_issue_comment(r, number, user, body))

    def update_run(self, repo: str, run_id: int, **fields: Any) -> Json:
        """Change a workflow run (e.g. ``status="completed", conclusion="success"``)."""
        with self.state.lock:
            run = self.state.repo(repo).runs[run_id]
            run.update(fields)
            run["updated_at"] = self.state.now()
            return copy.deepcopy(run)

    # -- faults and the request log ---------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path: str,
        status: int = 502,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        after: bool = False,
    ) -> None:
        """Answer the next ``times`` requests whose method is ``method`` ("*": any) and whose path
        (decoded, without /api/v3 and the query) **fully** matches the regex ``path`` with ``status``,
        ``headers`` and ``body`` (a str is sent as is; default {"message": "Server Error"} for 5xx,
        else the status phrase), without touching state. Faults are consumed in the order added.
        ``after=True``: the request IS carried out, and then answered with the fault, as when a
        proxy's 502 hides a success."""
        fault = Fault(method.upper(), re.compile(path), status, times, dict(headers or {}), body, after)
        with self.state.lock:
            self._faults.append(fault)

    def slow(self, method: str, path: str, seconds: float) -> None:
        """Every request whose method is ``method`` ("*": any) and whose path fully matches the
        regex ``path`` waits ``seconds`` before it is served (on top of ``latency``), outside the
        state lock: concurrent clients interleave as they would over a slow network."""
        with self.state.lock:
            self._slow.append((method.upper(), re.compile(path), seconds))

    def _delay(self, method: str, path: str) -> float:
        with self.state.lock:
            return self.latency + sum(s for m, pattern, s in self._slow
                                      if m in ("*", method) and pattern.fullmatch(path))

    @property
    def requests(self) -> list[Request]:
        with self.state.lock:
            return list(self._requests)

    def writes(self, *, succeeded: bool = False) -> list[Request]:
        """The non-GET requests that were not faulted, including ones the API refused (401/403/404/422)
        unless ``succeeded`` (then only those answered 2xx). GraphQL queries are reads (mutations are not)."""
        return [
            r
            for r in self.requests
            if r.method != "GET" and not r.faulted and (not succeeded or 200 <= r.status < 300) and not _query(r)
        ]

    def clear_requests(self) -> None:
        with self.state.lock:
            self._requests.clear()

    # -- reading state ------------------------------------------------------------------------------

    def pull_files(self, repo: str, number: int) -> list[Json]:
        """The PR's files as GET /pulls/{n}/files renders them."""
        with self.state.lock:
            r = self.state.repo(repo)
            _, pull = self.state.pull(r, number)
            return [self.state.render_file(r, pull, f) for f in pull.files]

    def issue_comments(self, repo: str, number: int) -> list[Json]:
        with self.state.lock:
            r = self.state.repo(repo)
            return [self.state.render_issue_comment(r, c) for c in r.issue_comments.values() if c.number == number]

    def reviews(self, repo: str, number: int) -> list[Json]:
        with self.state.lock:
            r = self.state.repo(repo)
            return [copy.deepcopy(v.data) for v in r.reviews.values() if v.number == number]

    def review_comments(self, repo: str, number: int) -> list[Json]:
        with self.state.lock:
            r = self.state.repo(repo)
            return [self.state.render_review_comment(r, c) for c in r.review_comments.values() if c.number == number]

    def reactions_of_comment(self, repo: str, comment_id: int) -> list[Json]:
        """Reactions on an issue comment."""
        with self.state.lock:
            return copy.deepcopy(self.state.repo(repo).reactions.get(("comment", comment_id), []))

    def reactions_of_issue(self, repo: str, number: int) -> list[Json]:
        with self.state.lock:
            return copy.deepcopy(self.state.repo(repo).reactions.get(("issue", number), []))

    def dispatches(self, repo: str) -> list[Json]:
        """workflow_dispatch calls, oldest first: {"workflow_id", "ref", "inputs"}."""
        with self.state.lock:
            return copy.deepcopy(self.state.repo(repo).dispatches)

    def repository_dispatches(self, repo: str) -> list[Json]:
        """repository_dispatch calls, oldest first: {"event_type", "client_payload"}."""
        with self.state.lock:
            return copy.deepcopy(self.state.repo(repo).repository_dispatches)

    def runs(self, repo: str) -> list[Json]:
        """Workflow runs, oldest first (the API lists them newest first)."""
        with self.state.lock:
            return copy.deepcopy(list(self.state.repo(repo).runs.values()))

    # -- webhook payloads -------------------------------------------------------------------------------

    def event_pull_request(self, repo: str, number: int, action: str = "opened", sender: str | None = None) -> Json:
        with self.state.lock:
            r = self.state.repo(repo)
            issue, pull = self.state.pull(r, number)
            out: Json = {
                "action": action,
                "number": number,
                "pull_request": self.state.render_pull(r, issue),
                "repository": self.state.render_repo(r),
                "sender": self.state.render_user(sender or issue.user),
            }
            if action == "synchronize":
                out["before"] = pull.shas[-2] if len(pull.shas) > 1 else pull.base_sha
                out["after"] = pull.head_sha
            return out

    def event_issue_comment(
        self, repo: str, number: int, comment: Json, action: str = "created", sender: str | None = None
    ) -> Json:
        """``comment``: a comment payload (e.g. from add_issue_comment); its current stored state is used."""
        with self.state.lock:
            r = self.state.repo(repo)
            issue = self.state.issue(r, number)
            stored = r.issue_comments.get(comment["id"])
            payload = self.state.render_issue_comment(r, stored) if stored else copy.deepcopy(comment)
            return {
                "action": action,
                "issue": self.state.render_issue(r, issue),
                "comment": payload,
                "repository": self.state.render_repo(r),
                "sender": self.state.render_user(sender or payload["user"]["login"]),
            }

    # -- serving ----------------------------------------------------------------------------------------

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for f in self._faults:
            if f.times > 0 and f.method in ("*", method) and f.pattern.fullmatch(path):
                f.times -= 1
                if f.times <= 0:
                    self._faults.remove(f)
                return f
        return None

    def _route(self, method: str, path: str, raw_path: str, query: dict[str, str], body: Any,
               bad_json: bool, token: str | None) -> Reply:
        tok = self.state.tokens.get(token) if token else None
        if tok is None:
            raise ApiError(401, "Bad credentials")
        found = resolve(method, path)
        if found is None:
            raise ApiError(404, "Not Found")
        if method != "GET" and tok.read_only and path != "/graphql":  # GraphQL: mutations check it themselves
            raise ApiError(403, NOT_INTEGRATION)
        if bad_json:
            raise ApiError(400, "Problems parsing JSON")
        handler, match = found
        return handler(Ctx(self.state, method, path, raw_path, query, body, tok, match))

    def _handle(self, method: str, target: str, headers: Message, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        split = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        in_api = split.path == PREFIX or split.path.startswith(PREFIX + "/")
        raw_path = (split.path[len(PREFIX) :] or "/") if in_api else split.path
        if split.path == GRAPHQL:  # GitHub Enterprise's GraphQL endpoint (PyGithub's graphql_url for /api/v3)
            in_api, raw_path = True, "/graphql"
        path = "/".join(urllib.parse.unquote(seg) for seg in raw_path.split("/"))
        auth = (headers.get("Authorization") or "").split(None, 1)
        token = auth[1].strip() if len(auth) == 2 and auth[0].lower() in ("token", "bearer") else None
        body: Any = None
        bad_json = False
        if raw.strip():
            try:
                body = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                bad_json = True
        content_type = "application/json; charset=utf-8"
        delay = self._delay(method, path)
        if delay > 0:
            time.sleep(delay)
        with self.state.lock:
            s = self.state
            s.rate_used += 1
            fault = self._take_fault(method, path)
            extra: dict[str, str] = {}
            if fault is not None and fault.after and in_api:
                try:
                    self._route(method, path, raw_path, query, body, bad_json, token)
                except ApiError:
                    pass
            if fault is not None:
                status, payload, extra = fault.status, fault.body, fault.headers
                if payload is None and status != 204:
                    try:
                        phrase = HTTPStatus(status).phrase
                    except ValueError:
                        phrase = "Error"
                    payload = {"message": "Server Error"}
                    if status < 500:
                        payload = {"message": phrase, "documentation_url": DOCS}
                if isinstance(payload, str):
                    content_type = "text/html; charset=utf-8"
            else:
                try:
                    if not in_api:
                        raise ApiError(404, "Not Found")
                    reply = self._route(method, path, raw_path, query, body, bad_json, token)
                    status, payload, extra = reply.status, reply.payload, reply.headers
                except ApiError as e:
                    status, payload, extra = e.status, e.payload, e.headers
                except Exception as e:  # a bug in the fake: say so in the answer and keep it for the test
                    self.errors.append(traceback.format_exc())
                    status, payload = 500, {"message": f"fakegithub crashed: {e!r}", "documentation_url": DOCS}
            self._requests.append(Request(method, path, query, body, token, status, fault is not None))
            out = {
                "Content-Type": content_type,
                "X-GitHub-Media-Type": "github.v3; format=json",
                "X-RateLimit-Limit": str(s.rate_limit),
                "X-RateLimit-Remaining": str(max(0, s.rate_limit - s.rate_used)),
                "X-RateLimit-Reset": str(s.rate_reset),
                "X-RateLimit-Used": str(s.rate_used),
                "X-RateLimit-Resource": "core",
                "X-GitHub-Request-Id": f"FAKE:{s.rate_used:08X}",
            }
            _merge(out, extra)
        if status in (204, 304) or payload is None:
            data = b""
        elif isinstance(payload, bytes):  # a download (an artifact's zip)
            data = payload
        elif isinstance(payload, str):
            data = payload.encode("utf-8")
        else:
            data = json.dumps(payload).encode("utf-8")
        return status, out, data
