"""``serve`` on the paths a real benchmark script takes (copies of the serve fixture, edited in
the ways InferenceX's scripts are written): a script that ends before its server says where and
why; the env holds every variable that reaches the server; an array is not "not exported"; the
agentic client is the command the replay helper runs; a retry loop's ``break`` is followed."""

from __future__ import annotations

from pathlib import Path

from tests.serve.test_serve_cli import SCRIPTS, commands, copy_fixture

GPTOSS = "gptoss-fp4-b200-vllm"


def _edit(repo: Path, name: str, old: str, new: str) -> None:
    script = repo / SCRIPTS / name
    text = script.read_text()
    assert old in text
    script.write_text(text.replace(old, new, 1))


def test_a_script_that_exits_before_its_server_says_where_and_why(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    _edit(repo, "gptoss_fp4_b200.sh", "check_env_vars MODEL TP", "check_env_vars NOBODY_SETS_THIS MODEL TP")
    [c, *_] = commands(repo, GPTOSS)
    assert c["engine"] is None and c["status"] == "none"
    assert c["reasons"] == [f"the script exits at {SCRIPTS}/gptoss_fp4_b200.sh:6 before it starts a server: "
                            "NOBODY_SETS_THIS unset or empty there"]


def test_every_variable_the_script_exports_reaches_the_env(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    _edit(repo, "gptoss_fp4_b200.sh", "SERVER_LOG=/workspace/server.log",
          "SERVER_LOG=/workspace/server.log\nexport SAFETENSORS_FAST_GPU=1\nexport MIMALLOC_PURGE_DELAY=0")
    for c in commands(repo, GPTOSS):
        assert c["env"]["SAFETENSORS_FAST_GPU"] == "1" and c["env"]["MIMALLOC_PURGE_DELAY"] == "0"
        assert c["env"]["VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8"] == "1"
        assert "MODEL" not in c["env"] and "TP" not in c["env"]  # the workflow's inputs, as they came


def test_an_array_holding_the_command_is_not_reported_unexported(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    script = repo / SCRIPTS / "gptoss_fp4_b200.sh"
    script.write_text(script.read_text().replace("CMD=", "VLLM_CMD=").replace("${CMD[@]}", "${VLLM_CMD[@]}")
                      .replace("SERVER_LOG=/workspace/server.log", "SERVER_LOG=/workspace/server.log\nVLLM_X=1"))
    for c in commands(repo, GPTOSS):
        assert c["args"]["tensor_parallel_size"] == 8
        assert set(c["unexported"]) == {"VLLM_X"}  # a plain variable is; an array cannot be exported


REPLAY_LIB = '''
build_replay_cmd() {
    local result_dir="$1"
    REPLAY_CMD="$AIPERF_CLI profile --scenario agentx"
    REPLAY_CMD+=" --url http://localhost:$PORT"
    REPLAY_CMD+=" --model $MODEL"
    REPLAY_CMD+=" --concurrency $CONC"
    REPLAY_CMD+=" --output-artifact-dir $result_dir/artifacts"
    REPLAY_CMD+=" $TRACE_FLAG"
}

run_agentic_replay_and_write_outputs() (
    local result_dir="$1"
    $REPLAY_CMD 2>&1 | tee "$result_dir/benchmark.log"
)
'''


def test_the_agentic_client_is_the_command_the_replay_helper_runs(tmp_path: Path) -> None:
    repo = copy_fixture(tmp_path)
    lib = repo / "benchmarks/benchmark_lib.sh"
    lib.write_text(lib.read_text() + REPLAY_LIB)
    script = repo / SCRIPTS / "gptoss_fp4_b200.sh"
    text = script.read_text()
    script.write_text(text[:text.index("run_benchmark_serving")] +
                      'AIPERF_CLI=/opt/aiperf/bin/aiperf\nTRACE_FLAG="--public-dataset traces"\n'
                      'build_replay_cmd /workspace/results\nrun_agentic_replay_and_write_outputs /workspace/results\n')
    for c in commands(repo, GPTOSS):
        client = c["client"]
        assert client["argv"][:2] == ["--scenario", "agentx"] and client["unknown"] == []  # after `aiperf profile`
        assert client["argv"][-4:] == ["--output-artifact-dir", "/workspace/results/artifacts", "--public-dataset",
                                       "traces"]
        assert client["args"]["model"] == c["model"] and client["args"]["concurrency"] == 4


def test_a_retry_loop_that_breaks_reaches_the_server(tmp_path: Path) -> None:
    """``for i in 1 2 3; do hf download X && break; [ $i = 3 ] && exit 1; done``: before the fix the
    loop's quiet ``&& break`` was skipped and every path ended at the ``exit``."""
    repo = copy_fixture(tmp_path)
    _edit(repo, "gptoss_fp4_b200.sh", "SERVER_LOG=/workspace/server.log",
          'for attempt in 1 2 3; do\n    hf download "$MODEL" && break\n'
          '    if [ "$attempt" = 3 ]; then echo "failed" >&2; exit 1; fi\n    sleep 60\ndone\n'
          "SERVER_LOG=/workspace/server.log")
    found = commands(repo, GPTOSS)
    assert found and all(c["engine"] == "vllm" for c in found)
