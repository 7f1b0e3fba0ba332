"""The fake's data model: users, tokens, repositories, pull requests, comments, reviews, reactions,
workflows and runs, and the payloads GitHub's REST API renders for them.

Comments, reviews and runs are stored as plain dicts already shaped like the API payload; the few
fields that change over time (reaction roll-ups, comment counts) are filled in when rendering."""

from __future__ import annotations

import copy
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .diff import Patch

Json = dict[str, Any]

ROLES = ("admin", "maintain", "write", "triage", "read", "none")
LEGACY = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none"}
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
FILE_STATUSES = ("added", "removed", "modified", "renamed", "copied", "changed", "unchanged")
USER_TYPES = ("User", "Bot", "Organization")


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_sha(*parts: object) -> str:
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()


@dataclass
class User:
    login: str
    id: int
    type: str


@dataclass(frozen=True)
class Token:
    token: str
    login: str
    app: bool = False
    read_only: bool = False


@dataclass
class Workflow:
    id: int
    path: str
    name: str
    created_at: str
    state: str = "active"
    inputs: list[str] | None = None  # declared inputs; None = accept any
    dispatchable: bool = True  # has an `on: workflow_dispatch` trigger
    on_pull_request: bool = False  # has an `on: pull_request` trigger: a run for every PR head


@dataclass
class Issue:
    """An issue or a pull request (they share numbers, as on GitHub); ``pull`` is set for PRs."""

    number: int
    id: int
    user: str
    title: str
    body: str
    state: str
    created_at: str
    updated_at: str
    pull: Pull | None = None
    labels: list[str] = field(default_factory=list)  # label names on the issue / pull request


@dataclass
class Pull:
    number: int
    id: int
    head_sha: str
    base_sha: str
    head_ref: str
    base_ref: str
    head_repo: str  # full name; differs from the base repository for fork PRs
    draft: bool
    files: list[Json]
    shas: list[str]  # every head sha this PR had, oldest first (the last one is head_sha)
    timeline: list[Json] = field(default_factory=list)  # head events (committed, head_ref_force_pushed)


@dataclass
class Stored:
    """A comment or review: its payload and the issue/PR number it belongs to."""

    number: int
    data: Json


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    default_branch: str
    default_sha: str
    private: bool
    created_at: str
    permissions: dict[str, str] = field(default_factory=dict)
    associations: dict[str, str] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    issue_comments: dict[int, Stored] = field(default_factory=dict)
    review_comments: dict[int, Stored] = field(default_factory=dict)
    reviews: dict[int, Stored] = field(default_factory=dict)
    reactions: dict[tuple[str, int], list[Json]] = field(default_factory=dict)
    workflows: dict[int, Workflow] = field(default_factory=dict)
    dispatches: list[Json] = field(default_factory=list)
    repository_dispatches: list[Json] = field(default_factory=list)
    runs: dict[int, Json] = field(default_factory=dict)
    artifacts: dict[int, list[Json]] = field(default_factory=dict)  # run id -> artifacts (results.py)
    resolved_threads: set[int] = field(default_factory=set)  # root review-comment ids of resolved threads (graphql.py)
    branches: dict[str, str] = field(default_factory=dict)  # branch -> commit sha with files (contents.py)
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit sha -> path -> bytes (contents.py)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class State:
    """Everything the server knows. Callers hold ``lock`` around any access."""

    def __init__(self, api_url: str, web_url: str) -> None:
        self.api = api_url
        self.web = web_url
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self.run_title: Callable[[dict[str, str]], str] | None = None
        self._next_id = 1_000_000
        self.rate_limit = 5000
        self.rate_used = 0
        self.rate_reset = int(time.time()) + 3600

    # -- basics -----------------------------------------------------------------------------------

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def claim_id(self, wanted: int) -> int:
        self._next_id = max(self._next_id, wanted)
        return wanted

    def now(self) -> str:
        return iso(self.clock())

    def user(self, login: str, type: str | None = None) -> User:
        """The user with this login, created on first mention (``[bot]`` logins are Bots)."""
        u = self.users.get(login)
        if u is None:
            kind = type or ("Bot" if login.endswith("[bot]") else "User")
            if kind not in USER_TYPES:
                raise ValueError(f"user type must be one of {USER_TYPES}, not {kind!r}")
            u = self.users[login] = User(login, self.new_id(), kind)
        return u

    def repo(self, full_name: str) -> Repo:
        r = self.repos.get(full_name)
        if r is None:
            raise KeyError(f"no repository {full_name!r}; call add_repo first")
        return r

    def issue(self, repo: Repo, number: int) -> Issue:
        i = repo.issues.get(number)
        if i is None:
            raise KeyError(f"{repo.full_name} has no issue or pull request #{number}")
        return i

    def pull(self, repo: Repo, number: int) -> tuple[Issue, Pull]:
        i = self.issue(repo, number)
        if i.pull is None:
            raise KeyError(f"{repo.full_name}#{number} is an issue, not a pull request")
        return i, i.pull

    def role(self, repo: Repo, login: str) -> str:
        if login in repo.permissions:
            return repo.permissions[login]
        return "admin" if login == repo.owner else "none"

    def association(self, repo: Repo, login: str) -> str:
        if login in repo.associations:
            return repo.associations[login]
        if login == repo.owner:
            return "OWNER"
        if self.role(repo, login) != "none":
            return "COLLABORATOR"
        if any(i.user == login and i.pull is not None for i in repo.issues.values()):
            return "CONTRIBUTOR"
        return "NONE"

    # -- rendering --------------------------------------------------------------------------------

    def render_user(self, login: str) -> Json:
        u = self.user(login)
        url = f"{self.api}/users/{u.login}"
        return {
            "login": u.login,
            "id": u.id,
            "node_id": f"U_fake{u.id}",
            "avatar_url": f"{self.web}/avatars/u/{u.id}",
            "gravatar_id": "",
            "url": url,
            "html_url": f"{self.web}/{u.login}" if u.type != "Bot" else f"{self.web}/apps/{u.login[:-5]}",
            "followers_url": f"{url}/followers",
            "repos_url": f"{url}/repos",
            "type": u.type,
            "user_view_type": "public",
            "site_admin": False,
        }

    def render_repo(self, repo: Repo, viewer: str | None = None) -> Json:
        api = f"{self.api}/repos/{repo.full_name}"
        out: Json = {
            "id": repo.id,
            "node_id": f"R_fake{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self.render_user(repo.owner),
            "html_url": f"{self.web}/{repo.full_name}",
            "description": None,
            "fork": False,
            "url": api,
            "pulls_url": f"{api}/pulls{{/number}}",
            "issues_url": f"{api}/issues{{/number}}",
            "created_at": repo.created_at,
            "updated_at": repo.created_at,
            "pushed_at": repo.created_at,
            "archived": False,
            "disabled": False,
            "visibility": "private" if repo.private else "public",
            "default_branch": repo.default_branch,
        }
        if viewer is not None:
            rank = ROLES.index(self.role(repo, viewer))
            out["permissions"] = {
                "admin": rank <= 0,
                "maintain": rank <= 1,
                "push": rank <= 2,
                "triage": rank <= 3,
                "pull": rank <= 4 or not repo.private,
            }
        return out

    def render_fork(self, full_name: str) -> Json:
        """A head repository of a fork PR (only the fields a PR's head.repo needs)."""
        if full_name in self.repos:
            return self.render_repo(self.repos[full_name])
        owner, _, name = full_name.partition("/")
        rid = int(fake_sha(full_name)[:7], 16)
        return {
            "id": rid,
            "node_id": f"R_fake{rid}",
            "name": name,
            "full_name": full_name,
            "private": False,
            "owner": self.render_user(owner),
            "html_url": f"{self.web}/{full_name}",
            "url": f"{self.api}/repos/{full_name}",
            "fork": True,
        }

    def reaction_rollup(self, repo: Repo, key: tuple[str, int], url: str) -> Json:
        rs = repo.reactions.get(key, [])
        out: Json = {"url": url, "total_count": len(rs)}
        for content in REACTIONS:
            out[content] = sum(1 for r in rs if r["content"] == content)
        return out

    def render_issue(self, repo: Repo, issue: Issue) -> Json:
        api = f"{self.api}/repos/{repo.full_name}/issues/{issue.number}"
        kind = "pull" if issue.pull else "issues"
        out: Json = {
            "id": issue.id,
            "node_id": f"{'PR' if issue.pull else 'I'}_fake{issue.id}",
            "url": api,
            "repository_url": f"{self.api}/repos/{repo.full_name}",
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": f"{self.web}/{repo.full_name}/{kind}/{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "user": self.render_user(issue.user),
            "labels": [],
            "state": issue.state,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": sum(1 for c in repo.issue_comments.values() if c.number == issue.number),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": None,
            "author_association": self.association(repo, issue.user),
            "body": issue.body,
            "reactions": self.reaction_rollup(repo, ("issue", issue.number), f"{api}/reactions"),
            "performed_via_github_app": None,
            "state_reason": None,
        }
        if issue.pull:
            pr = f"{self.web}/{repo.full_name}/pull/{issue.number}"
            out["draft"] = issue.pull.draft
            out["pull_request"] = {
                "url": f"{self.api}/repos/{repo.full_name}/pulls/{issue.number}",
                "html_url": pr,
                "diff_url": f"{pr}.diff",
                "patch_url": f"{pr}.patch",
                "merged_at": None,
            }
        return out

    def _branch(self, repo: Repo, full_name: str, ref: str, sha: str) -> Json:
        owner = full_name.partition("/")[0]
        return {
            "label": f"{owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.render_user(owner),
            "repo": self.render_repo(repo) if full_name == repo.full_name else self.render_fork(full_name),
        }

    def render_pull(self, repo: Repo, issue: Issue) -> Json:
        p = issue.pull
        assert p is not None
        api = f"{self.api}/repos/{repo.full_name}/pulls/{issue.number}"
        html = f"{self.web}/{repo.full_name}/pull/{issue.number}"
        issue_api = f"{self.api}/repos/{repo.full_name}/issues/{issue.number}"
        patches = [Patch(f.get("patch")) for f in p.files]
        return {
            "url": api,
            "id": p.id,
            "node_id": f"PR_fake{p.id}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{api}/commits",
            "review_comments_url": f"{api}/comments",
            "review_comment_url": f"{self.api}/repos/{repo.full_name}/pulls/comments{{/number}}",
            "comments_url": f"{issue_api}/comments",
            "statuses_url": f"{self.api}/repos/{repo.full_name}/statuses/{p.head_sha}",
            "number": issue.number,
            "state": issue.state,
            "locked": False,
            "title": issue.title,
            "user": self.render_user(issue.user),
            "body": issue.body,
            "labels": [],
            "milestone": None,
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "draft": p.draft,
            "head": self._branch(repo, p.head_repo, p.head_ref, p.head_sha),
            "base": self._branch(repo, repo.full_name, p.base_ref, p.base_sha),
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "issue": {"href": issue_api},
                "comments": {"href": f"{issue_api}/comments"},
                "review_comments": {"href": f"{api}/comments"},
                "commits": {"href": f"{api}/commits"},
                "statuses": {"href": f"{self.api}/repos/{repo.full_name}/statuses/{p.head_sha}"},
            },
            "author_association": self.association(repo, issue.user),
            "auto_merge": None,
            "active_lock_reason": None,
            "merged": False,
            "mergeable": None,
            "rebaseable": None,
            "mergeable_state": "unknown",
            "merged_by": None,
            "comments": sum(1 for c in repo.issue_comments.values() if c.number == issue.number),
            "review_comments": sum(1 for c in repo.review_comments.values() if c.number == issue.number),
            "maintainer_can_modify": False,
            "commits": len(p.shas),
            "additions": sum(x.additions for x in patches),
            "deletions": sum(x.deletions for x in patches),
            "changed_files": len(p.files),
        }

    def render_file(self, repo: Repo, p: Pull, f: Json) -> Json:
        patch = Patch(f.get("patch"))
        name = f["filename"]
        additions = int(f.get("additions", patch.additions))
        deletions = int(f.get("deletions", patch.deletions))
        out: Json = {
            "sha": f.get("sha") or fake_sha(name, f.get("patch")),
            "filename": name,
            "status": f.get("status", "modified"),
            "additions": additions,
            "deletions": deletions,
            "changes": int(f.get("changes", additions + deletions)),
            "blob_url": f"{self.web}/{p.head_repo}/blob/{p.head_sha}/{name}",
            "raw_url": f"{self.web}/{p.head_repo}/raw/{p.head_sha}/{name}",
            "contents_url": f"{self.api}/repos/{p.head_repo}/contents/{name}?ref={p.head_sha}",
        }
        if f.get("patch") is not None:
            out["patch"] = f["patch"]
        if f.get("previous_filename") is not None:
            out["previous_filename"] = f["previous_filename"]
        return out

    def render_issue_comment(self, repo: Repo, c: Stored) -> Json:
        out = copy.deepcopy(c.data)
        out["reactions"] = self.reaction_rollup(repo, ("comment", out["id"]), f"{out['url']}/reactions")
        return out

    def render_review_comment(self, repo: Repo, c: Stored) -> Json:
        out = copy.deepcopy(c.data)
        key = ("review_comment", out["id"])
        out["reactions"] = self.reaction_rollup(repo, key, f"{out['url']}/reactions")
        return out

    # -- construction -------------------------------------------------------------------------------

    def make_issue_comment(self, repo: Repo, number: int, login: str, body: str) -> Stored:
        cid = self.new_id()
        now = self.now()
        api = f"{self.api}/repos/{repo.full_name}"
        kind = "pull" if self.issue(repo, number).pull else "issues"
        data: Json = {
            "id": cid,
            "node_id": f"IC_fake{cid}",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"{self.web}/{repo.full_name}/{kind}/{number}#issuecomment-{cid}",
            "issue_url": f"{api}/issues/{number}",
            "body": body,
            "user": self.render_user(login),
            "created_at": now,
            "updated_at": now,
            "author_association": self.association(repo, login),
            "performed_via_github_app": None,
        }
        stored = repo.issue_comments[cid] = Stored(number, data)
        return stored

    def make_review(self, repo: Repo, number: int, login: str, body: str, state: str, commit_id: str) -> Stored:
        rid = self.new_id()
        html = f"{self.web}/{repo.full_name}/pull/{number}"
        pr_api = f"{self.api}/repos/{repo.full_name}/pulls/{number}"
        data: Json = {
            "id": rid,
            "node_id": f"PRR_fake{rid}",
            "user": self.render_user(login),
            "body": body,
            "state": state,
            "html_url": f"{html}#pullrequestreview-{rid}",
            "pull_request_url": pr_api,
            "author_association": self.association(repo, login),
            "_links": {"html": {"href": f"{html}#pullrequestreview-{rid}"}, "pull_request": {"href": pr_api}},
            "commit_id": commit_id,
        }
        if state != "PENDING":
            data["submitted_at"] = self.now()
        stored = repo.reviews[rid] = Stored(number, data)
        return stored

    def make_review_comment(
        self, repo: Repo, number: int, login: str, review_id: int, body: str, anchor: Json, in_reply_to: int | None
    ) -> Stored:
        """``anchor`` holds path, line, side, start_line, start_side, position, diff_hunk, commit_id
        (as computed by the router's validation, or copied from the comment replied to)."""
        cid = self.new_id()
        now = self.now()
        html = f"{self.web}/{repo.full_name}/pull/{number}"
        pr_api = f"{self.api}/repos/{repo.full_name}/pulls/{number}"
        url = f"{self.api}/repos/{repo.full_name}/pulls/comments/{cid}"
        data: Json = {
            "url": url,
            "pull_request_review_id": review_id,
            "id": cid,
            "node_id": f"PRRC_fake{cid}",
            "diff_hunk": anchor["diff_hunk"],
            "path": anchor["path"],
            "position": anchor["position"],
            "original_position": anchor.get("original_position", anchor["position"]),
            "commit_id": anchor["commit_id"],
            "original_commit_id": anchor.get("original_commit_id", anchor["commit_id"]),
            "user": self.render_user(login),
            "body": body,
            "created_at": now,
            "updated_at": now,
            "html_url": f"{html}#discussion_r{cid}",
            "pull_request_url": pr_api,
            "author_association": self.association(repo, login),
            "_links": {
                "self": {"href": url},
                "html": {"href": f"{html}#discussion_r{cid}"},
                "pull_request": {"href": pr_api},
            },
            "start_line": anchor.get("start_line"),
            "original_start_line": anchor.get("original_start_line", anchor.get("start_line")),
            "start_side": anchor.get("start_side"),
            "line": anchor["line"],
            "original_line": anchor.get("original_line", anchor["line"]),
            "side": anchor["side"],
            "subject_type": anchor.get("subject_type", "line"),
        }
        if in_reply_to is not None:
            data["in_reply_to_id"] = in_reply_to
        stored = repo.review_comments[cid] = Stored(number, data)
        return stored

    def record_head(self, repo: Repo, number: int, p: Pull, actor: str, *, force: bool,
                    committed_at: str | None = None) -> None:
        """Timeline events for a new head, as GitHub records them: a ``committed`` event (the git
        dates only, which the author chooses: ``committed_at``, default now; no server time) and,
        for a force push, a ``head_ref_force_pushed`` event with the server's created_at."""
        api = f"{self.api}/repos/{repo.full_name}"
        when = committed_at or self.now()
        person = {"name": actor, "email": f"{actor}@example.com", "date": when}
        p.timeline.append({
            "_seq": self.new_id(),
            "event": "committed",
            "sha": p.head_sha,
            "node_id": f"C_fake{p.head_sha[:12]}",
            "url": f"{api}/git/commits/{p.head_sha}",
            "html_url": f"{self.web}/{repo.full_name}/commit/{p.head_sha}",
            "author": person,
            "committer": person,
            "message": "a commit",
            "tree": {"sha": fake_sha("tree", p.head_sha), "url": f"{api}/git/trees/{fake_sha('tree', p.head_sha)}"},
            "parents": [],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
        })
        if force:
            eid = self.new_id()
            p.timeline.append({
                "_seq": eid,
                "id": eid,
                "node_id": f"HRFPE_fake{eid}",
                "url": f"{api}/issues/events/{eid}",
                "actor": self.render_user(actor),
                "event": "head_ref_force_pushed",
                "commit_id": p.head_sha,
                "commit_url": f"{api}/commits/{p.head_sha}",
                "created_at": self.now(),
                "performed_via_github_app": None,
            })

    def render_timeline(self, repo: Repo, issue: Issue) -> list[Json]:
        """The timeline: head events and ``commented`` events, in the order they happened."""
        items: list[tuple[int, Json]] = []
        if issue.pull is not None:
            for e in issue.pull.timeline:
                out = {k: v for k, v in e.items() if k != "_seq"}
                items.append((int(e["_seq"]), out))
        for c in repo.issue_comments.values():
            if c.number == issue.number:
                data = self.render_issue_comment(repo, c)
                data["event"] = "commented"
                data["actor"] = data["user"]
                items.append((int(data["id"]), data))
        return [e for _, e in sorted(items, key=lambda x: x[0])]

    def reanchor_after_push(self, repo: Repo, number: int, old_files: list[Json], p: Pull) -> None:
        """After a push, review comments on unchanged file patches follow the new head; the others
        become outdated (line and position null), as on GitHub."""
        before = {f["filename"]: f.get("patch") for f in old_files}
        after = {f["filename"]: f.get("patch") for f in p.files}
        for c in repo.review_comments.values():
            if c.number != number or c.data["line"] is None:
                continue
            path = c.data["path"]
            if path in after and after[path] == before.get(path):
                c.data["commit_id"] = p.head_sha
            else:
                c.data.update(line=None, position=None, start_line=None)
