"""``serve`` coverage pinned on the generated InferenceX-shaped repo (tests/perf/synth.py at
scale 1, seed 0), through ``python -m bot serve ROOT --all-points --format json``.

Every single-node (entry, point, concurrency) that ``lint`` does not report as unable to run
is ``resolved`` (the generated repo is lint-clean, so that is all of them): fixed-seq-len,
MTP and agentic-coding points, with and without DRAM KV offloading, with their client (the
benchmark_serving.py flags, or for agentic points the ``$AIPERF_CLI profile ...`` command
``build_replay_cmd`` leaves in ``REPLAY_CMD``) and their speculative-decoding settings.

This fails on benchbot 19d9668 (every agentic script "starts no server": the generator's
``total-cpu-dram-gb`` and ``duration`` were read as the entry's own, absent, fields, so
``check_env_vars ... TOTAL_CPU_DRAM_GB RESULT_DIR DURATION`` ended it) and on e42dd06's
parent (that, and a retry loop's quiet ``hf download ... && break`` skipped without its
loop, so every path ended at the ``exit`` after it).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import main
from tests.perf import synth

POINT_KEYS = ("scenario", "isl", "osl", "spec-decoding", "conc")  # what serve adds to a search-space row
# engine -> (spec method the _mtp scripts pass, its speculative tokens)
MTP = {"sglang": ("EAGLE", 3), "vllm": ("mtp", 3), "trtllm": ("MTP", 3), "atom": ("mtp", 3)}

Doc = dict[str, Any]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Doc, Doc]:
    root = tmp_path_factory.mktemp("synth-serve") / "repo"
    synth.make_repo(root, 1)
    code, out, err = _run("serve", str(root), "--all-points", "--format", "json")
    assert code == 0, err
    served = json.loads(out)
    code, out, err = _run("lint", str(root), "--format", "json")
    assert code in (0, 1), err
    return root, served, json.loads(out)


def _single(served: Doc) -> list[Doc]:
    return [c for c in served["commands"] if not c["multinode"]]


def _concs(row: Doc) -> list[int]:
    """The sweep generator's concurrencies of a search-space row: its conc-list, or conc-start
    doubling up to conc-end."""
    if "conc-list" in row:
        return list(row["conc-list"])
    out, c = [], row["conc-start"]
    while c <= row["conc-end"]:
        out.append(c)
        if c == row["conc-end"]:
            break
        c = min(c * 2, row["conc-end"])
    return out


def _key(entry: str, scenario: str, isl: object, osl: object, row: Doc, conc: int) -> tuple[object, ...]:
    fields = {k: v for k, v in row.items() if k not in POINT_KEYS}
    return entry, scenario, isl, osl, json.dumps(fields, sort_keys=True), conc


def _configured(root: Path) -> set[tuple[object, ...]]:
    """Every single-node (entry, point, concurrency) the master configs define."""
    out: set[tuple[object, ...]] = set()
    for path in sorted((root / "configs").glob("*-master.yaml")):
        for name, entry in yaml.safe_load(path.read_text()).items():
            if entry.get("multinode"):
                continue
            for scenario, blocks in entry["scenarios"].items():
                for block in blocks:
                    for row in block["search-space"]:
                        out |= {_key(name, scenario, block.get("isl"), block.get("osl"), row, c) for c in _concs(row)}
    return out


def _tp(c: Doc) -> object:
    args = c["args"]
    return args["tp_size"] if c["engine"] == "sglang" else args["tensor_parallel_size"]


def test_every_single_node_point_that_can_run_is_resolved(generated: tuple[Path, Doc, Doc]) -> None:
    root, served, linted = generated
    blocked = {e for f in linted["findings"] if f["severity"] == "error" for e in f.get("entries") or ()}
    assert blocked == set(), "the generated repo is lint-clean: no entry is excused from running"
    single = _single(served)
    runnable = [c for c in single if c["entry"] not in blocked]
    short = Counter((c["status"], r) for c in runnable if c["status"] != "resolved" for r in c["reasons"] or [""])
    assert not short, short.most_common(10)
    # every point of every single-node entry was evaluated, at every concurrency
    seen = {_key(c["entry"], c["point"]["scenario"], c["point"]["isl"], c["point"]["osl"], c["point"],
                 c["point"]["conc"]) for c in single}
    assert seen == _configured(root)
    # the coverage section says the same
    rows = served["coverage"]["single_node"]
    assert {e: (r["resolved"], r["partial"], r["none"]) for e, r in rows.items()} == \
        {e: (n, 0, 0) for e, n in Counter(c["engine"] for c in single).items()}
    assert set(rows) == {"sglang", "vllm", "trtllm", "atom"}
    assert all(r["short"] == [] for r in rows.values())


def test_agentic_points_run_their_server_and_the_replay_client(generated: tuple[Path, Doc, Doc]) -> None:
    root, served, _ = generated
    agentic = [c for c in _single(served) if c["point"]["scenario"] == "agentic-coding"]
    kinds = Counter((c["engine"], c["point"]["kv-offloading"], c["point"]["spec-decoding"]) for c in agentic)
    # what the generator makes at seed 0: both offload modes, MTP or not, every engine
    assert {("sglang", "none", "mtp"), ("sglang", "dram", "mtp"), ("sglang", "dram", "none"),
            ("vllm", "none", "mtp"), ("vllm", "dram", "mtp"), ("vllm", "dram", "none"),
            ("trtllm", "none", "mtp"), ("trtllm", "none", "none"), ("atom", "none", "none")} <= set(kinds), kinds
    for c in agentic:
        point, client = c["point"], c["client"]
        assert c["status"] == "resolved" and c["script"].startswith("benchmarks/single_node/agentic/"), c["reasons"]
        # its arguments, after the program and subcommand (``$AIPERF_CLI profile``): nothing unknown
        assert client is not None and client["argv"][:2] == ["--scenario", "agentic-coding-replay"]
        assert client["unknown"] == []
        args = client["args"]
        assert args["benchmark_duration"] == 3600  # the generator's duration
        assert args["concurrency"] == point["conc"]  # the point's own, whatever reaches it
        assert args["model"] == args["tokenizer"] == c["model"] and args["url"] == "http://localhost:8888"
        assert args["input_file"] == "/workspace/utils/agentic/traces/coding.jsonl"  # appended as " $TRACE_SOURCE_FLAG"
        assert args.get("use_server_token_count") is (True if point["kv-offloading"] == "dram" else None)
        assert (args.get("server_metrics") == "http://localhost:8888/metrics") is (c["engine"] == "sglang")
        if not point.get("dp-attn"):
            assert _tp(c) == point["tp"]
        dram = point["kv-offloading"] == "dram"
        if c["engine"] == "sglang":
            assert c["args"]["max_running_requests"] == 2 * point["conc"]
            assert c["args"].get("enable_hierarchical_cache") is (True if dram else None)
            if dram:  # sized from TOTAL_CPU_DRAM_GB: the runner's budget, unknown here
                assert "hicache_size" in c["args"] and c["args"]["hicache_size"] is None
        if c["engine"] == "vllm":
            assert c["args"]["max_num_seqs"] in [2 * n for n in point["conc-list"]]  # from the --config here-document
            offload = c["args"].get("kv_transfer_config")
            assert (offload or {}).get("kv_connector") == ("SimpleCPUOffloadConnector" if dram else None)


def test_mtp_points_pass_their_speculative_flags(generated: tuple[Path, Doc, Doc]) -> None:
    _, served, _ = generated
    single = _single(served)
    mtp = [c for c in single if c["point"]["spec-decoding"] == "mtp"]
    assert {(c["engine"], c["point"]["scenario"]) for c in mtp} >= {
        ("sglang", "fixed-seq-len"), ("vllm", "fixed-seq-len"), ("trtllm", "fixed-seq-len"), ("atom", "fixed-seq-len"),
        ("sglang", "agentic-coding"), ("vllm", "agentic-coding"), ("trtllm", "agentic-coding")}
    for c in single:
        if c["point"]["spec-decoding"] != "mtp":
            assert c["spec"] is None, (c["entry"], c["spec"])
            continue
        spec = c["spec"]
        assert spec is not None and (spec["method"], spec["num_speculative_tokens"]) == MTP[c["engine"]]
        assert spec["kind"] == "mtp" and spec["draft_model"] is None
        if c["engine"] == "sglang":
            assert (spec["num_steps"], spec["eagle_topk"], spec["num_draft_tokens"]) == (3, 1, 4)
        if c["engine"] == "vllm" and c["point"]["scenario"] == "agentic-coding":
            assert (spec["rejection_sample_method"], spec["synthetic_acceptance_length"]) == ("synthetic", 2.6)
        if c["point"]["scenario"] == "fixed-seq-len":
            assert c["client"]["args"]["use_chat_template"] is True


def test_fixed_seq_len_points_run_benchmark_serving(generated: tuple[Path, Doc, Doc]) -> None:
    _, served, _ = generated
    fixed = [c for c in _single(served) if c["point"]["scenario"] == "fixed-seq-len"]
    assert len(fixed) > 1000
    for c in fixed:
        point, args = c["point"], c["client"]["args"]
        assert (args["max_concurrency"], args["num_prompts"]) == (point["conc"], 10 * point["conc"])
        assert (args["random_input_len"], args["random_output_len"], args["model"]) == \
            (point["isl"], point["osl"], c["model"])
        if not point.get("dp-attn"):
            assert _tp(c) == point["tp"]


def test_every_concurrency_is_its_own_command(generated: tuple[Path, Doc, Doc]) -> None:
    _, served, _ = generated
    stale = Counter(c["engine"] for c in _single(served) if c["point"]["scenario"] == "agentic-coding"
                    and (c["client"]["args"]["concurrency"] != c["point"]["conc"]
                         or c["args"].get("max_num_seqs", 2 * c["point"]["conc"]) != 2 * c["point"]["conc"]))
    assert not stale, stale
