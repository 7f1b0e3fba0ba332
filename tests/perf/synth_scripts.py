"""Single-node benchmark script texts for the synthetic InferenceX-shaped repo: the shared
``benchmarks/benchmark_lib.sh`` and the fixed-seq-len scripts (``_mtp`` variants included).
The agentic scripts are in synth_agentic.py. Every function returns the text of one file.

The styles are InferenceX's (its benchmarks/ folder), the text is ours: ``check_env_vars``
over what the workflow and launcher set, a server command either inline or held in an array
(``SGLANG_CMD=(python3 -m sglang.launch_server ...)``, ``PARALLEL_ARGS+=(...)``, run as
``"${SGLANG_CMD[@]}" > "$SERVER_LOG" 2>&1 &``), TRT-LLM options in a here-document YAML file,
the client through ``run_benchmark_serving``.
"""

from __future__ import annotations

BENCHMARK_LIB = r"""#!/usr/bin/env bash
# Helpers shared by the benchmark scripts (sourced, never run directly).

AGENTIC_DIR="${AGENTIC_DIR:-/workspace/utils/agentic}"
AIPERF_VENV="${AIPERF_VENV:-/opt/aiperf/venv}"
AIPERF_CLI="$AIPERF_VENV/bin/aiperf"

# Usage: check_env_vars VAR1 VAR2 ...; exits 1 when any of them is unset or empty.
check_env_vars() {
    local missing_vars=()
    for var_name in "$@"; do
        if [[ -z "${!var_name:-}" ]]; then
            missing_vars+=("$var_name")
        fi
    done
    if [[ ${#missing_vars[@]} -gt 0 ]]; then
        echo "Error: required environment variables not set: ${missing_vars[*]}" >&2
        exit 1
    fi
}

wait_for_server() {
    local port="${1:-8888}" tries=0
    until curl -sf "http://localhost:${port}/health" >/dev/null; do
        tries=$((tries + 1))
        if [[ "$tries" -gt 360 ]]; then
            echo "server did not come up" >&2
            tail -n 100 server.log >&2 || true
            exit 1
        fi
        sleep 5
    done
}

# Usage: wait_for_server_ready --port P --server-log FILE --server-pid PID
wait_for_server_ready() {
    local port=8888 log=server.log pid=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="$2"; shift 2 ;;
            --server-log) log="$2"; shift 2 ;;
            --server-pid) pid="$2"; shift 2 ;;
            *) echo "wait_for_server_ready: unknown argument $1" >&2; return 2 ;;
        esac
    done
    until curl -sf "http://localhost:${port}/health" >/dev/null; do
        if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
            echo "the server exited while starting" >&2
            tail -n 200 "$log" >&2 || true
            exit 1
        fi
        sleep 5
    done
}

# Usage: run_benchmark_serving --model M --port P ... (benchmark_serving.py's own flags)
run_benchmark_serving() {
    python3 utils/bench_serving/benchmark_serving.py --save-result --dataset-name random "$@"
}

# ---- agentic trace replay ----------------------------------------------------

agentic_kv_offload_enabled() {
    if [[ -z "${KV_OFFLOADING:-}" ]]; then
        echo "Error: KV_OFFLOADING must be set for agentic benchmarks" >&2
        exit 1
    fi
    [[ "$KV_OFFLOADING" != "none" ]]
}

require_agentic_kv_offload_none() {
    if agentic_kv_offload_enabled; then
        echo "Error: this recipe has no KV offloading, got KV_OFFLOADING='$KV_OFFLOADING'" >&2
        exit 1
    fi
}

# Usage: if require_agentic_kv_offload_backend NAME; then ...; fi  (true: offload to DRAM with NAME)
require_agentic_kv_offload_backend() {
    local expected_backend="$1"
    case "${KV_OFFLOADING:-}" in
        none)
            return 1
            ;;
        dram)
            if [[ "${KV_OFFLOAD_BACKEND:-}" != "$expected_backend" ]]; then
                echo "Error: expected KV_OFFLOAD_BACKEND=$expected_backend, got '${KV_OFFLOAD_BACKEND:-}'" >&2
                exit 1
            fi
            if [[ ! "${TOTAL_CPU_DRAM_GB:-}" =~ ^[1-9][0-9]*$ ]]; then
                echo "Error: DRAM KV offloading needs a positive TOTAL_CPU_DRAM_GB" >&2
                exit 1
            fi
            return 0
            ;;
        *)
            echo "Error: unsupported KV_OFFLOADING='${KV_OFFLOADING:-}'" >&2
            exit 1
            ;;
    esac
}

resolve_trace_source() {
    TRACE_SOURCE_FLAG="--custom-dataset-type agentic_trace --input-file ${TRACE_FILE:-$AGENTIC_DIR/traces/coding.jsonl}"
}

install_agentic_deps() {
    if [[ ! -x "$AIPERF_CLI" ]]; then
        python3 -m venv "$AIPERF_VENV"
        "$AIPERF_VENV/bin/pip" install --quiet -r "$AGENTIC_DIR/requirements.txt"
    fi
}

# Leaves the replay client's command line in REPLAY_CMD (scripts may append to it).
build_replay_cmd() {
    local result_dir="$1"
    local duration="$DURATION"
    if [[ "${AGENTIC_FAST:-0}" == "1" ]]; then
        duration=1200
    fi
    REPLAY_CMD="$AIPERF_CLI profile --scenario agentic-coding-replay"
    REPLAY_CMD+=" --url http://localhost:$PORT"
    REPLAY_CMD+=" --endpoint /v1/chat/completions"
    REPLAY_CMD+=" --endpoint-type chat"
    REPLAY_CMD+=" --streaming"
    REPLAY_CMD+=" --model ${SERVED_MODEL_NAME:-$MODEL}"
    REPLAY_CMD+=" --tokenizer $MODEL"
    REPLAY_CMD+=" --concurrency $CONC"
    REPLAY_CMD+=" --benchmark-duration $duration"
    REPLAY_CMD+=" --random-seed 42"
    if [[ "$KV_OFFLOADING" != "none" ]]; then
        REPLAY_CMD+=" --use-server-token-count"
    fi
    REPLAY_CMD+=" --output-artifact-dir $result_dir/aiperf_artifacts"
    REPLAY_CMD+=" $TRACE_SOURCE_FLAG"
}

# Runs the command build_replay_cmd left in REPLAY_CMD, then writes the result JSON.
run_agentic_replay_and_write_outputs() (
    local result_dir="$1"
    local replay_rc
    echo "$REPLAY_CMD" > "$result_dir/benchmark_command.txt"
    set +e
    $REPLAY_CMD 2>&1 | tee "$result_dir/benchmark.log"
    replay_rc=${PIPESTATUS[0]}
    set -e
    python3 "$AGENTIC_DIR/write_result.py" --result-dir "$result_dir" --rc "$replay_rc" \
        --output "${RESULT_FILENAME:-result}.json"
)
"""

# Variables every fixed-seq-len script checks; the docker launchers pass all of them with -e.
CHECKED = "MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN"

_HEAD = """#!/usr/bin/env bash
# {desc}
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars {checked}
PORT="${{PORT:-8888}}"
if [[ "$ISL" -ge 8192 ]]; then
    CHUNK=16384
else
    CHUNK=8192
fi
"""
_RETRY = """for attempt in 1 2 3; do
    hf download "$MODEL" && break
    if [ "$attempt" = 3 ]; then echo "hf download of $MODEL failed after $attempt attempts" >&2; exit 1; fi
    echo "hf download attempt $attempt failed; retrying in 30s" >&2
    sleep 30
done
"""
CLIENT = "\n".join(("run_benchmark_serving \\", '    --model "$MODEL" \\', '    --port "$PORT" \\',
                    "    --backend {backend} \\", '    --random-input-len "$ISL" \\',
                    '    --random-output-len "$OSL" \\', "    --num-prompts $((CONC * 10)) \\",
                    '    --max-concurrency "$CONC" \\', '    --result-filename "${{RESULT_FILENAME:-result}}.json"'))
# (spec-decoding flags inline, as array lines) per engine, for the _mtp scripts
SGLANG_SPEC = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
               "--speculative-num-draft-tokens 4")
VLLM_SPEC = '{"method": "mtp", "num_speculative_tokens": 3}'
ATOM_SPEC = "--method mtp --num-speculative-tokens 3"


def single_script(desc: str, framework: str, mtp: bool, mem: str, array: bool = False) -> str:
    """A fixed-seq-len script; ``array``: the server command is held in an array (sglang and
    vllm), with an ``hf download`` retry loop before it."""
    head = _HEAD.format(desc=desc, checked=CHECKED)
    if array and framework in ("sglang", "vllm"):
        body = _RETRY + (_sglang_array(mtp, mem) if framework == "sglang" else _vllm_array(mtp, mem))
    elif framework == "sglang":
        spec = f" {SGLANG_SPEC}" if mtp else ""
        body = f"""ARGS=(--tp "$TP")
if [[ "$EP_SIZE" -gt 1 ]]; then
    ARGS+=(--ep-size "$EP_SIZE")
fi
if [[ "$DP_ATTENTION" == "true" ]]; then
    ARGS+=(--dp "$TP" --enable-dp-attention)
fi
python3 -m sglang.launch_server --model-path "$MODEL" "${{ARGS[@]}}" --port "$PORT" \\
    --context-length "$MAX_MODEL_LEN" --chunked-prefill-size "$CHUNK" --mem-fraction-static {mem} \\
    --trust-remote-code{spec} > server.log 2>&1 &
"""
    elif framework == "trt":
        spec = "\nspeculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3" if mtp else ""
        body = f"""cat > extra_llm_api_config.yml <<EOF
enable_attention_dp: $DP_ATTENTION
max_num_tokens: $CHUNK
kv_cache_config:
  free_gpu_memory_fraction: {mem}{spec}
EOF
trtllm-serve "$MODEL" --tp_size "$TP" --ep_size "$EP_SIZE" --max_seq_len "$MAX_MODEL_LEN" \\
    --port "$PORT" --extra_llm_api_options extra_llm_api_config.yml > server.log 2>&1 &
"""
    elif framework == "atom":
        spec = f" {ATOM_SPEC}" if mtp else ""
        body = f"""EXTRA=()
if [[ "$DP_ATTENTION" == "true" ]]; then
    EXTRA+=(--enable-dp-attention)
fi
if [[ "$EP_SIZE" -gt 1 ]]; then
    EXTRA+=(--enable-expert-parallel)
fi
python3 -m atom.entrypoints.openai_server --model "$MODEL" -tp "$TP" "${{EXTRA[@]}}" --port "$PORT" \\
    --max-model-len "$MAX_MODEL_LEN" --gpu-memory-utilization {mem}{spec} > server.log 2>&1 &
"""
    else:
        spec = f" --speculative-config '{VLLM_SPEC}'" if mtp else ""
        body = f"""ARGS=(--tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port "$PORT")
if [[ "$EP_SIZE" -gt 1 ]]; then
    ARGS+=(--enable-expert-parallel)
fi
if [[ "$DP_ATTENTION" == "true" ]]; then
    ARGS+=(--data-parallel-size "$TP")
fi
export VLLM_USE_V1=1
vllm serve "$MODEL" "${{ARGS[@]}}" --max-num-batched-tokens "$CHUNK" --gpu-memory-utilization {mem} \\
    --trust-remote-code{spec} > server.log 2>&1 &
"""
    backend = {"sglang": "sglang", "trt": "openai", "atom": "vllm"}.get(framework, "vllm")
    client = CLIENT.format(backend=backend) + (" \\\n    --use-chat-template" if mtp else "")
    return head + body + f'\nwait_for_server "$PORT"\n{client}\n'


def _sglang_array(mtp: bool, mem: str) -> str:
    spec = "".join(f"\n    {a} {b}" for a, b in zip(SGLANG_SPEC.split()[::2], SGLANG_SPEC.split()[1::2])) \
        if mtp else ""
    return f"""
PARALLEL_ARGS=(--tp "$TP")
if [[ "$EP_SIZE" -gt 1 ]]; then
    PARALLEL_ARGS+=(--ep-size "$EP_SIZE")
fi
if [[ "$DP_ATTENTION" == "true" ]]; then
    PARALLEL_ARGS+=(--dp "$TP" --enable-dp-attention)
fi

SERVER_LOG=/workspace/server.log
SGLANG_CMD=(
    python3 -m sglang.launch_server
    --model-path "$MODEL"
    --host 0.0.0.0
    --port "$PORT"
    --trust-remote-code
    "${{PARALLEL_ARGS[@]}}"
    --context-length "$MAX_MODEL_LEN"
    --chunked-prefill-size "$CHUNK"
    --max-running-requests $((CONC * 2))
    --mem-fraction-static {mem}{spec}
)
printf '%q ' "${{SGLANG_CMD[@]}}" > sglang_command.txt
"${{SGLANG_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"""


def _vllm_array(mtp: bool, mem: str) -> str:
    spec_var = f"SPEC_CONFIG='{VLLM_SPEC}'\n" if mtp else ""
    spec = '\n    --speculative-config "$SPEC_CONFIG"' if mtp else ""
    return f"""
PARALLEL_ARGS=(--tensor-parallel-size "$TP" --data-parallel-size 1)
if [[ "$DP_ATTENTION" == "true" ]]; then
    PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP")
fi
if [[ "$EP_SIZE" -gt 1 ]]; then
    PARALLEL_ARGS+=(--enable-expert-parallel)
fi
{spec_var}
export VLLM_USE_V1=1
export VLLM_ENGINE_READY_TIMEOUT_S=3600
SERVER_LOG=/workspace/server.log
VLLM_CMD=(
    vllm serve "$MODEL"
    --host 0.0.0.0
    --port "$PORT"
    --trust-remote-code
    --max-model-len "$MAX_MODEL_LEN"
    --max-num-batched-tokens "$CHUNK"
    --gpu-memory-utilization {mem}
    "${{PARALLEL_ARGS[@]}}"{spec}
)
"${{VLLM_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"""
