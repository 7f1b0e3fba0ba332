"""A fake GitHub REST API for tests: a real HTTP server on 127.0.0.1 that PyGithub talks to.

    from fakegithub import FakeGitHub
    with FakeGitHub() as gh:
        gh.add_token("tok", "alice")
        gh.add_repo("acme/bench")
        g = github.Github(auth=github.Auth.Token("tok"), base_url=gh.api_url, retry=None)
"""

from .diff import DiffLine, Patch
from .server import FakeGitHub, Fault, Request
from .state import REACTIONS, ROLES, Issue, Pull, Repo, State, Token, User, Workflow

__all__ = [
    "REACTIONS",
    "ROLES",
    "DiffLine",
    "FakeGitHub",
    "Fault",
    "Issue",
    "Patch",
    "Pull",
    "Repo",
    "Request",
    "State",
    "Token",
    "User",
    "Workflow",
]
