#!/usr/bin/env bash
# Helpers shared by the benchmark scripts (sourced, never run directly).

check_env_vars() {
    local name missing=0
    for name in "$@"; do
        if [[ -z "${!name:-}" ]]; then
            echo "ERROR: $name is not set" >&2
            missing=1
        fi
    done
    [[ "$missing" -eq 0 ]] || exit 1  # as InferenceX's helper: a missing variable ends the job
}

wait_for_server() {
    local port="${1:-8888}"
    until curl -sf "http://localhost:${port}/health" >/dev/null; do
        sleep 5
    done
}

run_client() {
    python3 utils/bench_serving/benchmark_serving.py --model "$MODEL" --port "${PORT:-8888}" \
        --random-input-len "$ISL" --random-output-len "$OSL" --max-concurrency "$CONC" \
        --num-prompts $((CONC * 10)) --save-result --result-filename "${RESULT_FILENAME:-result}.json"
}
