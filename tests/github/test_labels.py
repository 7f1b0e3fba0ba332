"""The label trigger (bot.github.labels) through ``python -m bot event`` and the real PyGithub stack
against the fake GitHub: a reader's label ignored; a writer's dispatched once, also when the event is
redelivered or two runs race; the label removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from fakegithub.bench_runs import add_label

from bot.cli import main
from tests.conftest import ROOT
from tests.github.commenting import _replies
from tests.github.conftest import PR, REPO

LABEL = "bench-mi325x"


def _configure(pr: PR) -> None:
    (pr.repo / ".benchbot.yml").write_text(f"bench:\n  labels:\n    {LABEL}: mi325x\n")


def _env(pr: PR, path: str) -> dict[str, str]:
    return {"GITHUB_API_URL": pr.gh.api_url, "GITHUB_TOKEN": "tok-actions", "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": path,
            "GITHUB_WORKSPACE": str(pr.repo), "BENCHBOT_GITHUB_BACKOFF": "0.01",
            "BENCHBOT_GITHUB_WRITE_INTERVAL": "0"}


def _label(pr: PR, actor: str = "alice", label: str = LABEL) -> str:
    payload = add_label(pr.gh, REPO, pr.number, label, actor)
    path = pr.tmp / f"label-{len(pr.gh.requests)}.json"
    path.write_text(json.dumps(payload))
    for k, v in _env(pr, str(path)).items():
        pr.monkeypatch.setenv(k, v)
    return str(path)


def _labels(pr: PR) -> list[str]:
    with pr.gh.state.lock:
        return list(pr.gh.state.repo(REPO).issues[pr.number].labels)


def test_a_writers_label_dispatches_once_and_is_removed(entry_pr: PR) -> None:
    _configure(entry_pr)
    _label(entry_pr)
    assert main(["event"]) == 0
    assert len(entry_pr.gh.dispatches(REPO)) == 1
    (answer,) = [b for b in _replies(entry_pr) if "benchbot:reply label-" in b]
    assert "Dispatched 1 entry" in answer and f"`{LABEL}`" in answer and "benchbot:claim" not in answer
    assert _labels(entry_pr) == []
    assert entry_pr.gh.dispatches(REPO)[0]["inputs"]["ref"] == entry_pr.head
    # the same delivery again: nothing more
    assert main(["event"]) == 0
    assert len(entry_pr.gh.dispatches(REPO)) == 1 and len(_replies(entry_pr)) == 1


def test_a_readers_label_is_ignored(entry_pr: PR) -> None:
    _configure(entry_pr)
    _label(entry_pr, actor="reader")
    entry_pr.gh.clear_requests()
    assert main(["event"]) == 0
    assert entry_pr.gh.dispatches(REPO) == [] and _replies(entry_pr) == [] and _labels(entry_pr) == [LABEL]
    assert entry_pr.gh.writes() == []


def test_an_unmapped_label_does_nothing(entry_pr: PR) -> None:
    _configure(entry_pr)
    _label(entry_pr, label="documentation")
    entry_pr.gh.clear_requests()
    assert main(["event"]) == 0 and entry_pr.gh.requests == []


def test_a_moved_head_is_refused_in_a_reply(entry_pr: PR) -> None:
    _configure(entry_pr)
    _label(entry_pr)
    entry_pr.gh.push(REPO, entry_pr.number, head_sha="f" * 40)
    assert main(["event"]) == 0
    assert entry_pr.gh.dispatches(REPO) == []
    (answer,) = _replies(entry_pr)
    assert "the pull request's head is now" in answer and _labels(entry_pr) == [LABEL]


def test_two_runs_on_one_labelling_dispatch_once(entry_pr: PR) -> None:
    _configure(entry_pr)
    path = _label(entry_pr)
    entry_pr.gh.slow("*", r"/repos/acme/bench/issues/.*", 0.4)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BENCHBOT_"))}
    env.update(_env(entry_pr, path), PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-m", "bot", "event"], env=env, cwd=str(ROOT),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    logs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], logs
    assert len(entry_pr.gh.dispatches(REPO)) == 1, logs
    assert len([b for b in _replies(entry_pr) if "benchbot:reply label-" in b]) == 1, logs
    assert _labels(entry_pr) == []
