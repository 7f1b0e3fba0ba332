"""``workflow_run: completed`` end to end: a /bench answered through the real comment handler, the
run completes on the fake GitHub, and ``benchbot event`` edits that answer once (real PyGithub)."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from fakegithub.results import add_artifact, event_workflow_run

from bot.cli import main
from bot.github import markers, results
from tests.github.commenting import _replies, _run
from tests.github.conftest import ACTIONS_BOT, PR, REPO


def _agg(conc: int, tput: float, **extra: Any) -> dict[str, Any]:
    """One result as InferenceX's utils/process_result.py writes agg_<name>.json (our own numbers)."""
    data: dict[str, Any] = {
        "hw": "mi325x", "conc": conc, "image": "rocm/vllm:x", "model": "moonshotai/Kimi-K2.5",
        "infmax_model_prefix": "kimik2.5", "framework": "vllm", "precision": "int4", "spec_decoding": "none",
        "disagg": False, "isl": 1024, "osl": 1024, "is_multinode": False, "tp": 8, "pp": 1, "ep": 1,
        "dp_attention": "false", "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2,
        "median_ttft": 0.1234, "median_tpot": 0.02, "median_intvty": 50.0, "median_e2el": 21.0}
    data.update(extra)
    return data


def _dispatched(pr: PR) -> tuple[int, int]:
    """A /bench answered by the bot: (run id, the answer's comment id)."""
    code, _ = _run(pr, "/bench mi325x")
    assert code == 0
    (run,) = pr.gh.runs(REPO)
    (answer,) = [c for c in pr.gh.issue_comments(REPO, pr.number) if c["user"]["login"] == ACTIONS_BOT]
    assert "benchbot:run " in answer["body"]
    return int(run["id"]), int(answer["id"])


def _complete(pr: PR, run_id: int, conclusion: str = "success", **fields: Any) -> dict[str, Any]:
    pr.gh.update_run(REPO, run_id, status="completed", conclusion=conclusion, **fields)
    return event_workflow_run(pr.gh, REPO, run_id)


def _deliver(pr: PR, event: dict[str, Any]) -> int:
    path = pr.tmp / f"workflow-run-{event['workflow_run']['id']}.json"
    path.write_text(json.dumps(event))
    pr.monkeypatch.setenv("GITHUB_EVENT_NAME", "workflow_run")
    pr.monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    return main(["event"])


def _patches(pr: PR) -> list[Any]:
    return [r for r in pr.gh.writes(succeeded=True) if r.method == "PATCH"]


def _answer(pr: PR, cid: int) -> str:
    return next(c["body"] for c in pr.gh.issue_comments(REPO, pr.number) if c["id"] == cid)


def test_completed_run_edits_the_answer_once_with_the_table(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    before = _answer(entry_pr, cid)
    name = "kimik2.5_int4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc4_mi325x-amd_0"
    add_artifact(entry_pr.gh, REPO, run_id, f"bmk_{name}", {f"agg_{name}.json": json.dumps(_agg(4, 1234.5)).encode()})
    add_artifact(entry_pr.gh, REPO, run_id, "bmk_other", {"agg_other.json": json.dumps(_agg(64, 99.0)).encode()})
    add_artifact(entry_pr.gh, REPO, run_id, f"server_logs_{name}", {"server.log": b"x"})
    event = _complete(entry_pr, run_id, "success")
    entry_pr.gh.clear_requests()
    assert _deliver(entry_pr, event) == 0
    assert len(_patches(entry_pr)) == 1
    body = _answer(entry_pr, cid)
    lead, text = markers.split(before)
    assert markers.head(body) == lead + results.results_marker(run_id, 1)  # the run's marker joins the answer's
    assert body[len(markers.head(body)):].startswith(text.rstrip("\n"))  # the answer is kept; results appended
    assert f"<!-- benchbot:results {run_id} 1 -->" in body
    assert "\u2705 success after" in body
    assert f"/actions/runs/{run_id})" in body
    assert "| kimik2.5 mi325x vllm int4 | 1024/1024 | tp8 | 4 | 1234.5 | 123.4 | 20.00 | 50.0 |" in body
    assert "| 64 | 99.0 |" in body
    assert body.index("| 4 | 1234.5") < body.index("| 64 | 99.0")
    # a redelivered event: no second write
    entry_pr.gh.clear_requests()
    assert _deliver(entry_pr, event) == 0
    assert _patches(entry_pr) == [] and entry_pr.gh.writes() == []
    assert _answer(entry_pr, cid) == body
    assert len(_replies(entry_pr)) == 1  # never a new comment


def test_aggregate_artifact_is_preferred(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    add_artifact(entry_pr.gh, REPO, run_id, "bmk_a", {"agg_a.json": json.dumps(_agg(4, 1.0)).encode()})
    add_artifact(entry_pr.gh, REPO, run_id, "results_bmk",
                 {"agg_bmk.json": json.dumps([_agg(4, 1.0), _agg(8, 2.0)]).encode()})
    assert _deliver(entry_pr, _complete(entry_pr, run_id)) == 0
    body = _answer(entry_pr, cid)
    assert body.count("| kimik2.5 mi325x") == 2


def test_failed_run_without_artifacts_gives_the_conclusion_only(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    assert _deliver(entry_pr, _complete(entry_pr, run_id, "failure")) == 0
    body = _answer(entry_pr, cid)
    assert "\u274c failure after" in body
    assert "| config" not in body and "Result files" not in body


def test_rerun_attempt_replaces_the_section(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    assert _deliver(entry_pr, _complete(entry_pr, run_id, "failure")) == 0
    add_artifact(entry_pr.gh, REPO, run_id, "bmk_a", {"agg_a.json": json.dumps(_agg(4, 7.0)).encode()})
    second = _complete(entry_pr, run_id, "success", run_attempt=2)
    assert _deliver(entry_pr, second) == 0
    body = _answer(entry_pr, cid)
    assert body.count("benchbot:results") == 1 and f"benchbot:results {run_id} 2" in body
    assert "failure" not in body and "attempt 2" in body
    entry_pr.gh.clear_requests()
    first = dict(second, workflow_run=dict(second["workflow_run"], run_attempt=1, conclusion="failure"))
    assert _deliver(entry_pr, first) == 0  # the older attempt delivered late: nothing
    assert _patches(entry_pr) == []


def test_502_after_the_edit_landed_and_5xx_on_the_artifact_list(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    add_artifact(entry_pr.gh, REPO, run_id, "bmk_a", {"agg_a.json": json.dumps(_agg(4, 5.0)).encode()})
    event = _complete(entry_pr, run_id)
    entry_pr.gh.fail("GET", rf"/repos/{REPO}/actions/runs/{run_id}/artifacts", 503)
    entry_pr.gh.fail("PATCH", rf"/repos/{REPO}/issues/comments/{cid}", 502, after=True)
    entry_pr.gh.clear_requests()
    assert _deliver(entry_pr, event) == 0
    body = _answer(entry_pr, cid)
    assert body.count("benchbot:results") == 1 and "| 4 | 5.0 |" in body
    assert len(_replies(entry_pr)) == 1


def test_artifact_list_down_still_reports_the_conclusion(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    event = _complete(entry_pr, run_id)
    entry_pr.gh.fail("GET", rf"/repos/{REPO}/actions/runs/{run_id}/artifacts", 500, times=20)
    assert _deliver(entry_pr, event) == 0
    body = _answer(entry_pr, cid)
    assert "\u2705 success" in body and "could not list the run's artifacts" in body


def test_a_run_the_bot_did_not_start(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    before = _answer(entry_pr, cid)
    entry_pr.gh.update_run(REPO, run_id, display_title="e2e Test - someone's own run")
    event = _complete(entry_pr, run_id)
    entry_pr.gh.clear_requests()
    assert _deliver(entry_pr, event) == 0
    assert entry_pr.gh.writes() == [] and _answer(entry_pr, cid) == before
    # the same title from another event (a push, a schedule) is not ours either
    entry_pr.gh.update_run(REPO, run_id, event="push")
    assert _deliver(entry_pr, event_workflow_run(entry_pr.gh, REPO, run_id)) == 0
    assert entry_pr.gh.writes() == []


def test_an_answer_by_someone_else_is_not_edited(entry_pr: PR) -> None:
    run_id, cid = _dispatched(entry_pr)
    forged = _answer(entry_pr, cid)
    entry_pr.gh.add_issue_comment(REPO, entry_pr.number, "alice", forged)
    with entry_pr.gh.state.lock:  # the bot's answer gone: only alice's copy carries the marker
        del entry_pr.gh.state.repo(REPO).issue_comments[cid]
    entry_pr.gh.clear_requests()
    assert _deliver(entry_pr, _complete(entry_pr, run_id)) == 0
    assert entry_pr.gh.writes() == []


def _bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("agg_bomb.json", b"[" + b" " * (40 * 1024 * 1024) + b"]")
    return buf.getvalue()


# Explicit ids: pytest before 9.2 spells a bytes parameter out in the test id (the bomb's made one of
# 163,475 characters, over the 128 KiB of one environment string: PYTEST_CURRENT_TEST, then git, failed).
@pytest.mark.parametrize(("files", "data", "note"), [
    pytest.param(None, _bomb(), "too large", id="bomb"),
    pytest.param({"../../etc/agg.json": json.dumps(_agg(4, 1.0)).encode()}, None, "unsafe name", id="unsafe-name"),
    pytest.param({"agg.json": b"{not json"}, None, "not valid JSON", id="not-json"),
    pytest.param({"agg.json": json.dumps({"hw": "x"}).encode()}, None, "without a numeric", id="no-tput"),
    pytest.param(None, b"PK\x03\x04 garbage", "not a zip archive", id="not-a-zip"),
])
def test_hostile_artifacts_give_a_note(entry_pr: PR, files: dict[str, bytes] | None, data: bytes | None,
                                       note: str) -> None:
    run_id, cid = _dispatched(entry_pr)
    add_artifact(entry_pr.gh, REPO, run_id, "bmk_<img src=x>@here", files, data=data)
    assert _deliver(entry_pr, _complete(entry_pr, run_id)) == 0
    body = _answer(entry_pr, cid)
    assert note in body and "\u2705 success" in body
    assert "<img" not in body and "@here" not in body  # the artifact's name is escaped
