"""Replay real commits of a repository as pull requests through the bot and the fake GitHub,
and keep what the bot posted on each: its summary comment and its inline review comments.

Run it from a checkout of benchbot with the project's interpreter; nothing needs patching
(the script puts this checkout and its ``tests/`` first on ``sys.path`` itself, so the
``bot`` it runs is the one next to it)::

    .venv/bin/python tests/perf/replay_prs.py GIT_DIR REV [REV ...] [--out DIR]

    .venv/bin/python tests/perf/replay_prs.py /work/.mirror/SemiAnalysisAI+InferenceX/repo \\
        e11dd3947 108bf4f2a --out /tmp/replay

GIT_DIR is a git repository (a work tree or a bare clone); it is cloned (``--shared``) into a
temporary folder and never changed. Each REV is one pull request: its head is REV, its base
REV's first parent (a squash-merged PR's merge commit is the PR). The PRs are numbered 101,
102, ... in the order given, and ``python -m bot event`` (the ``pull_request`` ``opened``
event, as the review workflow runs it) handles each against tests/fakegithub on 127.0.0.1
through the real PyGithub stack. Nothing of the repository is executed.

stdout: one JSON line per PR: rev, the bot's exit code, inline comments (and by anchor: a
changed ``line``, a deleted line on the ``left``, a whole ``file``), the causes they carry,
the summary's size and first line, seconds. stderr: the bot's own log lines.

With ``--out DIR``, for each PR (``SHA12``: the first 12 digits of its head)::

    DIR/pr101-SHA12/summary.md    the summary comment, as posted (markdown)
    DIR/pr101-SHA12/inline.md     every inline review comment: path, line and side, then its body
    DIR/pr101-SHA12/inline.json   the same as a list of {path, line, start_line, side,
                                  subject_type, in_reply_to, body}
    DIR/pr101-SHA12/row.json      the stdout line
    DIR/index.md                  one line per PR: its title, the verdict, the folder

``line`` is the line in the new file (``side`` RIGHT), in the base's file for a deleted line
(``side`` LEFT), and null for a comment on the whole file (``subject_type`` file).

Not a test (tests/test_replay_prs.py runs it on the seed example): a tool to see what the bot
would have said on real pull requests, e.g. for a closing note.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's bot, and tests/fakegithub

from fakegithub import FakeGitHub  # noqa: E402

from bot.cli import main as bot_main  # noqa: E402
from tests.github.conftest import pr_files  # noqa: E402

REPO = "acme/bench"
BOT = "github-actions[bot]"
SUMMARY_MARKER = "benchbot:summary"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def inline_records(comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The review comments as saved: where each is anchored, and its body."""
    return [{"path": c.get("path"), "line": None if c.get("subject_type") == "file" else c.get("line"),
             "start_line": c.get("start_line"), "side": c.get("side"), "subject_type": c.get("subject_type") or "line",
             "in_reply_to": c.get("in_reply_to_id"), "body": c.get("body", "")} for c in comments]


def _anchor(r: dict[str, Any]) -> str:
    if r["subject_type"] == "file":
        return "the whole file"
    lines = f"lines {r['start_line']}-{r['line']}" if r["start_line"] else f"line {r['line']}"
    return f"{lines} of the base (a deleted line)" if r["side"] == "LEFT" else lines


def inline_markdown(title: str, records: list[dict[str, Any]]) -> str:
    out = [f"# Inline review comments: {title}", "", f"{len(records)} comment(s).", ""]
    for i, r in enumerate(records, 1):
        reply = f", a reply to {r['in_reply_to']}" if r["in_reply_to"] else ""
        out += [f"## {i}. `{r['path']}`, {_anchor(r)}{reply}", "", r["body"].rstrip("\n"), "", "---", ""]
    return "\n".join(out)


def replay(gh: FakeGitHub, clone: Path, number: int, rev: str, tmp: Path) -> dict[str, Any]:
    """One PR opened and handled; its row, summary body and inline comments under ``_saved``."""
    head = git(clone, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    base = git(clone, "rev-parse", "--verify", f"{rev}^1").strip()
    git(clone, "checkout", "-q", "--detach", head)
    title = git(clone, "log", "-1", "--format=%s", head).strip()
    gh.add_pull(REPO, number=number, head_sha=head, base_sha=base, head_ref=f"pr{number}", base_ref="main",
                user="alice", title=title, files=pr_files(clone, base, head))
    event = tmp / "event.json"
    event.write_text(json.dumps(gh.event_pull_request(REPO, number, action="opened", sender="alice")))
    os.environ.update({"GITHUB_API_URL": gh.api_url, "GITHUB_TOKEN": "tok", "GITHUB_REPOSITORY": REPO,
                       "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
                       "GITHUB_WORKSPACE": str(clone), "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
                       "BENCHBOT_GITHUB_WRITE_INTERVAL": "0"})
    start = time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):  # the annotations
        code = bot_main(["event"])
    took = time.perf_counter() - start
    all_comments = sorted(gh.review_comments(REPO, number), key=lambda c: int(c["id"]))
    comments = [c for c in all_comments if c.get("in_reply_to_id") is None]
    summaries = [c for c in gh.issue_comments(REPO, number) if SUMMARY_MARKER in c["body"]]
    body = summaries[-1]["body"] if summaries else ""
    causes = sum(len(c["body"].split("<!-- benchbot:finding ")[1].split(" -->")[0].split())
                 for c in comments if "<!-- benchbot:finding " in c["body"])
    kinds = {"line": 0, "left": 0, "file": 0}
    for c in comments:
        kinds["file" if c.get("subject_type") == "file" else "left" if c.get("side") == "LEFT" else "line"] += 1
    lines = body.split("\n")
    verdict = next((line for line in lines if line.strip() and not line.startswith(("<!--", "#"))), "")
    row = {"rev": rev, "head": head, "pr": number, "title": title, "exit": code, "inline": len(comments),
           "causes_inline": causes, **kinds, "summary_bytes": len(body.encode()), "verdict": verdict[:160],
           "seconds": round(took, 1)}
    return {**row, "_saved": (body, inline_records(all_comments))}


def save(out: Path, row: dict[str, Any], body: str, records: list[dict[str, Any]]) -> Path:
    folder = out / f"pr{row['pr']}-{row['head'][:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.md").write_text(body, encoding="utf-8")
    (folder / "inline.json").write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "inline.md").write_text(inline_markdown(f"#{row['pr']} {row['title']}", records), encoding="utf-8")
    (folder / "row.json").write_text(json.dumps(row, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="replay_prs.py", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("git_dir", metavar="GIT_DIR", help="the repository the commits are in (work tree or bare)")
    p.add_argument("revs", metavar="REV", nargs="+", help="a commit: one pull request (base: its first parent)")
    p.add_argument("--out", metavar="DIR", help="save each PR's summary and inline comments under DIR")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out) if args.out else None
    index: list[str] = []
    with tempfile.TemporaryDirectory() as d, FakeGitHub() as gh:
        tmp = Path(d)
        gh.add_user("alice")
        gh.add_user(BOT, type="Bot")
        gh.add_token("tok", BOT, app=True)
        gh.add_repo(REPO, default_branch="main")
        clone = tmp / "clone"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", args.git_dir, str(clone)], check=True)
        for i, rev in enumerate(args.revs, 1):
            try:
                row = replay(gh, clone, 100 + i, rev, tmp)
            except subprocess.CalledProcessError as exc:
                print(f"replay_prs.py: {rev}: git {' '.join(map(str, exc.cmd[3:]))} failed: {exc.stderr.strip()} "
                      "(each REV must be a commit with a parent in GIT_DIR)", file=sys.stderr)
                return 2
            body, records = row.pop("_saved")
            print(json.dumps(row, ensure_ascii=False), flush=True)
            if out is not None:
                folder = save(out, row, body, records)
                index.append(f"- #{row['pr']} `{row['head'][:12]}` {row['title']}: {row['verdict']} "
                             f"({row['inline']} inline) -> {folder.name}/")
    if out is not None:
        (out / "index.md").write_text("# Replayed pull requests\n\n" + "\n".join(index) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
