"""A pull request on a real git repo, served by the fake GitHub, and the bot run on it."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakegithub import FakeGitHub

from bot.cli import main
from tests.conftest import EXAMPLE, git

REPO = "acme/bench"
ACTIONS_BOT = "github-actions[bot]"
MTP_SCRIPTS = ("benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh",
               "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x_mtp.sh")
MTP_ENTRIES = ("kimik2.5-int4-mi300x-vllm-mtp", "kimik2.5-int4-mi325x-vllm-mtp")


def without_entries(text: str, names: tuple[str, ...]) -> str:
    """The config text without these top-level entries (each a block up to the next blank line)."""
    blocks = re.split(r"\n\n(?=\S)", text)
    return "\n\n".join(b for b in blocks if b.split(":", 1)[0] not in names).rstrip("\n") + "\n"


def pr_files(repo: Path, base: str, head: str) -> list[dict[str, object]]:
    """The PR's files as GitHub's files API gives them: status, the patch's hunks and, for a
    renamed file, ``previous_filename``."""
    status = {"A": "added", "M": "modified", "D": "removed", "R": "renamed"}
    out: list[dict[str, object]] = []
    for line in git(repo, "diff", "-M", "--name-status", f"{base}...{head}").splitlines():
        code, *paths = line.split("\t")
        diff = git(repo, "diff", "-M", f"{base}...{head}", "--", *paths)
        patch = diff[diff.index("@@"):] if "@@" in diff else ""
        f: dict[str, object] = {"filename": paths[-1], "status": status[code[0]], "patch": patch.rstrip("\n")}
        if code[0] == "R":
            f["previous_filename"] = paths[0]
        out.append(f)
    return out


@dataclass
class PR:
    gh: FakeGitHub
    repo: Path
    number: int
    base: str
    head: str
    tmp: Path
    monkeypatch: pytest.MonkeyPatch

    def commit(self, message: str) -> str:
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
        self.head = git(self.repo, "rev-parse", "HEAD").strip()
        self.gh.push(REPO, self.number, head_sha=self.head, files=pr_files(self.repo, self.base, self.head))
        return self.head

    def run(self, action: str = "synchronize", token: str = "tok-actions", *args: str) -> tuple[int, str]:
        """``python -m bot event`` as the workflow runs it; returns (exit code, step summary)."""
        event = self.gh.event_pull_request(REPO, self.number, action=action, sender="alice")
        path = self.tmp / "event.json"
        path.write_text(json.dumps(event))
        summary = self.tmp / "step-summary.md"
        summary.write_text("")
        env = {"GITHUB_API_URL": self.gh.api_url, "GITHUB_TOKEN": token, "GITHUB_REPOSITORY": REPO,
               "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path),
               "GITHUB_WORKSPACE": str(self.repo), "GITHUB_STEP_SUMMARY": str(summary),
               "BENCHBOT_GITHUB_BACKOFF": "0.01", "BENCHBOT_GITHUB_WRITE_INTERVAL": "0",
               "BENCHBOT_GITHUB_MAX_WAIT": "3"}
        for k, v in env.items():
            self.monkeypatch.setenv(k, v)
        code = main(["event", *args])
        return code, summary.read_text()


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as gh:
        gh.add_user("alice")
        gh.add_user(ACTIONS_BOT, type="Bot")
        gh.add_user("bench-bot")
        gh.add_token("tok-actions", ACTIONS_BOT, app=True)
        gh.add_token("tok-ro", ACTIONS_BOT, app=True, read_only=True)
        gh.add_token("tok-pat", "bench-bot")
        gh.add_repo(REPO, default_branch="main")
        gh.set_permission(REPO, "alice", "write")
        yield gh


@pytest.fixture
def seed_pr(tmp_path: Path, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> PR:
    """Base: the seed without the mi300x/mi325x MTP scripts and entries (clean). The PR's
    commit adds them and leaves the launchers alone: the seed bug, as a pull request."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    saved = {p: (repo / p).read_text() for p in (*MTP_SCRIPTS, "configs/amd-master.yaml")}
    for p in MTP_SCRIPTS:
        (repo / p).unlink()
    config = repo / "configs/amd-master.yaml"
    config.write_text(without_entries(saved["configs/amd-master.yaml"], MTP_ENTRIES))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "kimi-mtp")
    for p, text in saved.items():
        (repo / p).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add MTP for kimik2.5 on MI300X and MI325X")
    head = git(repo, "rev-parse", "HEAD").strip()
    fake_github.add_pull(REPO, number=7, head_sha=head, base_sha=base, head_ref="kimi-mtp", base_ref="main",
                         user="alice", title="kimik2.5 MTP on MI300X/MI325X", files=pr_files(repo, base, head))
    return PR(fake_github, repo, 7, base, head, tmp_path, monkeypatch)


@pytest.fixture
def entry_pr(seed_pr: PR) -> PR:
    """The seed as the default branch, and a PR (#9) that changes one MI325X entry."""
    from tests.github.commenting import make_entry_pr

    return make_entry_pr(seed_pr)


def with_base_config(pr: PR, text: str, number: int = 8) -> PR:
    """The PR's branch rebuilt on a base whose ``.benchbot.yml`` is ``text`` (a new PR number)."""
    repo = pr.repo
    git(repo, "checkout", "-q", "main")
    (repo / ".benchbot.yml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "benchbot config")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "kimi-mtp")
    git(repo, "merge", "-q", "--no-edit", "main")
    head = git(repo, "rev-parse", "HEAD").strip()
    pr.gh.add_pull(REPO, number=number, head_sha=head, base_sha=base, head_ref="kimi-mtp", base_ref="main",
                   user="alice", title="kimik2.5 MTP", files=pr_files(repo, base, head))
    pr.number, pr.base, pr.head = number, base, head
    return pr
