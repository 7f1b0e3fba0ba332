"""``python -m bot serve`` on the serve fixture repo against the oracle written by hand
from its scripts before the tool existed (tests/serve/expected/serve.yaml)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import main
from tests.conftest import FIXTURES

ORACLE = Path(__file__).parent / "expected" / "serve.yaml"
REPO = FIXTURES / "serve"


def serve_json(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["serve", str(REPO), "--format", "json", *args])
    assert code == 0
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


@pytest.fixture(scope="module")
def output() -> dict[str, Any]:
    return serve_json("--all-points")  # the oracle names points that share a group


def _items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = yaml.safe_load(ORACLE.read_text())
    return items


def _id(item: dict[str, Any]) -> str:
    return f"{item['entry']}@{','.join(f'{k}={v}' for k, v in item['point'].items())}"


def _command(output: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in output["commands"] if c["entry"] == item["entry"]
             and all(c["point"].get(k) == v for k, v in item["point"].items())]
    assert len(found) == 1, f"{len(found)} commands for {_id(item)}"
    return found[0]


def _check_command(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    for key, value in want.get("args", {}).items():
        assert key in got["args"], f"{where}: {key} missing; args: {sorted(got['args'])}"
        assert got["args"][key] == value, f"{where}: {key} = {got['args'][key]!r}, want {value!r}"
    for key in want.get("absent", []):
        assert key not in got["args"], f"{where}: {key} should be absent, is {got['args'][key]!r}"
    for key in want.get("unknown_args", []):
        assert key in got["args"] and got["args"][key] is None, f"{where}: {key} should be unknown"
    for key, value in want.get("env", {}).items():
        assert got["env"].get(key) == value, f"{where}: env {key} = {got['env'].get(key)!r}, want {value!r}"
    for key in want.get("not_env", []):
        assert key not in got["env"], f"{where}: {key} must not reach the server"
    if "spec" in want:
        if want["spec"] is None:
            assert got["spec"] is None, f"{where}: spec should be off, is {got['spec']}"
        else:
            assert got["spec"] is not None, f"{where}: spec missing"
            for key, value in want["spec"].items():
                assert got["spec"][key] == value, f"{where}: spec {key} = {got['spec'][key]!r}, want {value!r}"


@pytest.mark.parametrize("item", _items(), ids=_id)
def test_the_command_each_point_starts(output: dict[str, Any], item: dict[str, Any]) -> None:
    got = _command(output, item)
    where = _id(item)
    assert got["launcher"] == item["launcher"]
    if item.get("multinode"):
        assert got["recipe"] == item["recipe"]
        for role, want in item["workers"].items():
            worker = got["workers"][role]
            assert worker["engine"] == item["engine"]
            _check_command(worker, want, f"{where} {role}")
        return
    assert got["script"] == item["script"]
    assert got["engine"] == item["engine"], f"{where}: {got['reasons']}"
    if "model" in item:
        assert got["model"] == item["model"]
    _check_command(got, item, where)
    for key, value in item.get("sources", {}).items():
        assert got["sources"].get(key) == value, f"{where}: source of {key}"
    if "client" in item:
        assert got["client"] is not None, f"{where}: no client"
        for key, value in item["client"].items():
            assert got["client"]["args"].get(key) == value, f"{where}: client {key}"


def test_every_entry_and_point_is_resolved(output: dict[str, Any]) -> None:
    """The fixture is written to be fully resolvable: every command is "resolved"."""
    short = {engine: row["short"] for table in output["coverage"].values() for engine, row in table.items()
             if row["short"]}
    assert short == {}


def test_a_plain_assignment_is_reported_as_unexported(output: dict[str, Any]) -> None:
    mtp = [c for c in output["commands"] if c["entry"] == "dsr1-fp8-b200-sglang-mtp"]
    assert mtp and all("SGLANG_ENABLE_SPEC_V2" in c["unexported"] for c in mtp)
    assert all("SGLANG_ENABLE_SPEC_V2" not in c["env"] for c in mtp)
    src = mtp[0]["unexported"]["SGLANG_ENABLE_SPEC_V2"]["source"]
    line = int(src.rsplit(":", 1)[1])
    text = (REPO / src.rsplit(":", 1)[0]).read_text().splitlines()[line - 1]
    assert text.strip().startswith("SGLANG_ENABLE_SPEC_V2=")


def test_all_points_evaluates_every_concurrency() -> None:
    every = serve_json("--all-points", "--entry", "dsr1-fp8-b200-sglang")
    default = serve_json("--entry", "dsr1-fp8-b200-sglang")
    # by default one point per group, as lint: here both points share one (same isl/osl, no spec)
    assert [c["point"]["conc"] for c in default["commands"]] == [4]
    assert len(every["commands"]) > 2
    by_conc = {c["point"]["conc"]: c for c in every["commands"]}
    # the script relaxes the scheduler's receive interval from CONC 16 on
    assert {by_conc[c]["args"]["scheduler_recv_interval"] for c in by_conc if c < 16} == {10}
    assert {by_conc[c]["args"]["scheduler_recv_interval"] for c in by_conc if c >= 16} == {30}
