"""Agentic-coding benchmark scripts for the synthetic InferenceX-shaped repo
(``benchmarks/single_node/agentic/<prefix>_<precision>_<gpu>[_<framework>][_mtp].sh``).

In InferenceX's style (its benchmarks/single_node/agentic/ scripts), our text: the script
checks what the workflow passes for an agentic point, the sweep generator's
``TOTAL_CPU_DRAM_GB`` (0 without DRAM KV offloading, else the runner's budget) and
``DURATION`` included; downloads the model in a retry loop that ends on ``&& break``; holds
the server command in an array (``SGLANG_CMD``, ``VLLM_CMD``, ``TRTLLM_CMD``) built from
``PARALLEL_ARGS``/``CACHE_ARGS``/``SPEC_ARGS`` arrays or a here-document YAML passed with
``--config``; then replays the traces: ``build_replay_cmd`` (benchmark_lib.sh) leaves
``$AIPERF_CLI profile ...`` in ``REPLAY_CMD``, the script may append to it, and
``run_agentic_replay_and_write_outputs`` runs it.
"""

from __future__ import annotations

from synth_scripts import SGLANG_SPEC, VLLM_SPEC

CHECKED = "MODEL TP CONC EP_SIZE DP_ATTENTION KV_OFFLOADING \\\n    TOTAL_CPU_DRAM_GB RESULT_DIR DURATION"
# the KV offload backend a framework's agentic script supports with ``kv-offloading: dram``
DRAM_BACKEND = {"sglang": "hicache", "vllm": "vllm-simple"}

_HEAD = """#!/usr/bin/env bash
set -euo pipefail
set -x

# {desc}
# Agentic trace replay: the server runs while the replay client drives it for DURATION seconds.

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars \\
    {checked}

PORT="${{PORT:-8888}}"
if [[ -n "${{SLURM_JOB_ID:-}}" ]]; then
    echo "JOB $SLURM_JOB_ID running on ${{SLURMD_NODENAME:-unknown}}"
fi

# Concurrent downloads into the shared HF cache can hit stale handles: retry.
for attempt in 1 2 3; do
    hf download "$MODEL" && break
    if [ "$attempt" = 3 ]; then echo "hf download of $MODEL failed after $attempt attempts" >&2; exit 1; fi
    echo "hf download attempt $attempt failed; retrying in 60s" >&2
    sleep 60
done

resolve_trace_source
install_agentic_deps

SERVER_LOG="$RESULT_DIR/server.log"
mkdir -p "$RESULT_DIR"
"""
_TAIL = """SERVER_PID=$!
echo "Server PID: $SERVER_PID"

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

build_replay_cmd "$RESULT_DIR"
{extra}run_agentic_replay_and_write_outputs "$RESULT_DIR"
"""


def agentic_script(desc: str, framework: str, mtp: bool, mem: str) -> str:
    body = {"sglang": _sglang, "vllm": _vllm, "trt": _trt, "atom": _atom}[framework](mtp, mem)
    extra = 'REPLAY_CMD+=" --server-metrics http://localhost:$PORT/metrics"\n' if framework == "sglang" else ""
    return _HEAD.format(desc=desc, checked=CHECKED) + body + _TAIL.format(extra=extra)


def _sglang(mtp: bool, mem: str) -> str:
    spec = ""
    if mtp:
        words = SGLANG_SPEC.split()
        spec = ("\nSPEC_ARGS=(\n" + "".join(f"    {a} {b}\n" for a, b in zip(words[::2], words[1::2])) + ")\n"
                'if [ "${EVAL_ONLY:-false}" != "true" ]; then\n'
                "    export SGLANG_SIMULATE_ACC_LEN=3.1\nfi\n")
    return f"""
CACHE_ARGS=()
if require_agentic_kv_offload_backend hicache; then
    # One GB a rank for page alignment; the rest of the DRAM budget split across the TP ranks.
    HICACHE_SIZE_GB=$(( (TOTAL_CPU_DRAM_GB - TP) / TP ))
    if [ "$HICACHE_SIZE_GB" -lt 1 ]; then
        echo "Error: a DRAM budget of $TOTAL_CPU_DRAM_GB GB is too small for TP=$TP" >&2
        exit 1
    fi
    CACHE_ARGS=(
        --page-size 64
        --enable-hierarchical-cache
        --hicache-size "$HICACHE_SIZE_GB"
        --hicache-write-policy write_through
    )
fi

PARALLEL_ARGS=(
    --tp "$TP"
    --ep-size "$EP_SIZE"
)
if [ "$DP_ATTENTION" = "true" ]; then
    PARALLEL_ARGS+=(--dp "$TP" --enable-dp-attention)
fi

# Concurrency counts live sessions; sub-agents fan out beyond it.
MAX_RUNNING_REQUESTS=$((2 * CONC))
GRAPH_MAX_BS="$CONC"
[ "$GRAPH_MAX_BS" -gt 64 ] && GRAPH_MAX_BS=64
{spec}
export SGLANG_TIMEOUT_KEEP_ALIVE=1800
SGLANG_CMD=(
    python3 -m sglang.launch_server
    --model-path "$MODEL"
    --served-model-name "$MODEL"
    --host 0.0.0.0
    --port "$PORT"
    --trust-remote-code
    "${{PARALLEL_ARGS[@]}}"
    --cuda-graph-max-bs "$GRAPH_MAX_BS"
    --max-running-requests "$MAX_RUNNING_REQUESTS"
    --chunked-prefill-size 16384
    --mem-fraction-static {mem}
    --enable-metrics{chr(10) + '    "${SPEC_ARGS[@]}"' if mtp else ""}
    "${{CACHE_ARGS[@]}}"
)
printf '%q ' "${{SGLANG_CMD[@]}}" | tee "$RESULT_DIR/sglang_command.txt"
printf '\\n' | tee -a "$RESULT_DIR/sglang_command.txt"
"${{SGLANG_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"""


def _vllm(mtp: bool, mem: str) -> str:
    spec = ""
    if mtp:
        synthetic = VLLM_SPEC[:-1] + ', "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.6}'
        spec = ('# Throughput runs pin a synthetic acceptance length; the eval verifies for real.\n'
                'if [ "${EVAL_ONLY:-false}" = "true" ]; then\n'
                f"    SPEC_CONFIG='{VLLM_SPEC}'\nelse\n    SPEC_CONFIG='{synthetic}'\nfi\n")
    return f"""
OFFLOAD_ARGS=()
case "${{KV_OFFLOAD_BACKEND:-}}" in
    "")
        require_agentic_kv_offload_none
        ;;
    vllm-simple)
        require_agentic_kv_offload_backend vllm-simple
        CPU_BYTES_PER_RANK=$(( TOTAL_CPU_DRAM_GB * 1000 * 1000 * 1000 / TP ))
        OFFLOAD_ARGS=(
            --kv-transfer-config
            "{{\\"kv_connector\\":\\"SimpleCPUOffloadConnector\\",\\"kv_role\\":\\"kv_both\\",\\"kv_connector_extra_config\\":{{\\"cpu_bytes_to_use_per_rank\\":${{CPU_BYTES_PER_RANK}}}}}}"
        )
        ;;
    *)
        echo "Error: unsupported KV_OFFLOAD_BACKEND='$KV_OFFLOAD_BACKEND'" >&2
        exit 1
        ;;
esac

PARALLEL_ARGS=(--tensor-parallel-size "$TP" --data-parallel-size 1)
if [ "$DP_ATTENTION" = "true" ]; then
    PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP")
fi
MODE_ARGS=()
if [ "$EP_SIZE" -gt 1 ]; then
    MODE_ARGS+=(--enable-expert-parallel)
fi
{spec}
MAX_NUM_SEQS=$((2 * CONC))
SERVER_CONFIG="$RESULT_DIR/vllm_config.yaml"
cat > "$SERVER_CONFIG" <<EOF
max-num-seqs: $MAX_NUM_SEQS
max-num-batched-tokens: 16384
gpu-memory-utilization: {mem}
kv-cache-dtype: fp8
enable-prefix-caching: true
EOF

export VLLM_ENGINE_READY_TIMEOUT_S=3600
VLLM_CMD=(
    vllm serve "$MODEL" --served-model-name "$MODEL"
    --host 0.0.0.0
    --port "$PORT"
    --trust-remote-code
    --config "$SERVER_CONFIG"{chr(10) + '    --speculative-config "$SPEC_CONFIG"' if mtp else ""}
    "${{PARALLEL_ARGS[@]}}"
    "${{MODE_ARGS[@]}}"
    "${{OFFLOAD_ARGS[@]}}"
)
printf '%q ' "${{VLLM_CMD[@]}}" | tee "$RESULT_DIR/vllm_command.txt"
"${{VLLM_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"""


def _trt(mtp: bool, mem: str) -> str:
    spec = "speculative_config:\n    decoding_type: MTP\n    num_nextn_predict_layers: 3\n" if mtp else ""
    return f"""
require_agentic_kv_offload_none

MAX_BATCH=$(( CONC < 64 ? CONC : 64 ))
CONFIG_FILE="$RESULT_DIR/trtllm_config.yaml"
cat << EOF > "$CONFIG_FILE"
max_num_tokens: 16384
max_batch_size: $MAX_BATCH
enable_attention_dp: $DP_ATTENTION
enable_chunked_prefill: true
kv_cache_config:
    free_gpu_memory_fraction: {mem}
    enable_block_reuse: true
    dtype: fp8
{spec}EOF

export TRTLLM_SERVER_DISABLE_GC=1
TRTLLM_CMD=(
    mpirun -n 1 --oversubscribe --allow-run-as-root
    trtllm-serve "$MODEL"
    --tp_size "$TP"
    --ep_size "$EP_SIZE"
    --host 0.0.0.0
    --port "$PORT"
    --config "$CONFIG_FILE"
)
printf '%q ' "${{TRTLLM_CMD[@]}}" | tee "$RESULT_DIR/trtllm_command.txt"
"${{TRTLLM_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"""


def _atom(mtp: bool, mem: str) -> str:
    spec = "\nATOM_ARGS+=(--method mtp --num-speculative-tokens 3)" if mtp else ""
    return f"""
require_agentic_kv_offload_none

ATOM_ARGS=(-tp "$TP" --port "$PORT" --gpu-memory-utilization {mem} --max-num-seqs $((2 * CONC)))
if [ "$EP_SIZE" -gt 1 ]; then
    ATOM_ARGS+=(--enable-expert-parallel)
fi
if [ "$DP_ATTENTION" = "true" ]; then
    ATOM_ARGS+=(--enable-dp-attention)
fi{spec}
python3 -m atom.entrypoints.openai_server --model "$MODEL" "${{ATOM_ARGS[@]}}" > "$SERVER_LOG" 2>&1 &
"""
