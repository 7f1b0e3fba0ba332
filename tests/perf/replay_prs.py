"""Replay real commits of a repository as pull requests against the fake GitHub (base = first
parent) and print, per pull request, what the bot posted: inline comments, causes (new
findings), fixed findings, pre-existing ones, and the bytes of the summary.

    .venv/bin/python tests/perf/replay_prs.py GIT_DIR REV [REV ...]

GIT_DIR is a (bare) clone; each REV is checked out in a temporary clone. Nothing of the
repository is executed. Not a test: a measurement for closing notes.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakegithub import FakeGitHub  # noqa: E402

from bot.cli import main  # noqa: E402
from tests.github.conftest import pr_files  # noqa: E402

REPO = "acme/bench"
BOT = "github-actions[bot]"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def replay(gh: FakeGitHub, clone: Path, number: int, rev: str, tmp: Path) -> dict[str, object]:
    head = git(clone, "rev-parse", rev).strip()
    base = git(clone, "rev-parse", f"{rev}^1").strip()
    git(clone, "checkout", "-q", "--detach", head)
    gh.add_pull(REPO, number=number, head_sha=head, base_sha=base, head_ref=f"pr{number}", base_ref="main",
                user="alice", title=git(clone, "log", "-1", "--format=%s", head).strip(),
                files=pr_files(clone, base, head))
    event = tmp / "event.json"
    event.write_text(json.dumps(gh.event_pull_request(REPO, number, action="opened", sender="alice")))
    os.environ.update({"GITHUB_API_URL": gh.api_url, "GITHUB_TOKEN": "tok", "GITHUB_REPOSITORY": REPO,
                       "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
                       "GITHUB_WORKSPACE": str(clone), "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
                       "BENCHBOT_GITHUB_WRITE_INTERVAL": "0"})
    start = time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        code = main(["event"])
    took = time.perf_counter() - start
    comments = [c for c in gh.review_comments(REPO, number) if c.get("in_reply_to_id") is None]
    [summary] = [c for c in gh.issue_comments(REPO, number) if "benchbot:summary" in c["body"]]
    body = summary["body"]
    causes = sum(len(c["body"].split("<!-- benchbot:finding ")[1].split(" -->")[0].split()) for c in comments)
    kinds = {"line": 0, "left": 0, "file": 0}
    for c in comments:
        kinds["file" if c.get("subject_type") == "file" else "left" if c.get("side") == "LEFT" else "line"] += 1
    first = body.split("\n")[3] if len(body.split("\n")) > 3 else ""
    return {"rev": rev, "exit": code, "inline": len(comments), "causes_inline": causes, **kinds,
            "summary_bytes": len(body.encode()), "verdict": first[:160], "seconds": round(took, 1)}


def main_(argv: list[str]) -> int:
    mirror, revs = argv[0], argv[1:]
    with tempfile.TemporaryDirectory() as d, FakeGitHub() as gh:
        tmp = Path(d)
        gh.add_user("alice")
        gh.add_user(BOT, type="Bot")
        gh.add_token("tok", BOT, app=True)
        gh.add_repo(REPO, default_branch="main")
        clone = tmp / "clone"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", mirror, str(clone)], check=True)
        for i, rev in enumerate(revs, 1):
            row = replay(gh, clone, 100 + i, rev, tmp)
            print(json.dumps(row), flush=True)
            if os.environ.get("REPLAY_BODIES"):
                Path(os.environ["REPLAY_BODIES"], f"{rev}.md").write_text(
                    next(c["body"] for c in gh.issue_comments(REPO, 100 + i) if "benchbot:summary" in c["body"]))
    return 0


if __name__ == "__main__":
    sys.exit(main_(sys.argv[1:]))
