#!/usr/bin/env bash
# Kimi-K2.5 INT4 on MI300X with vLLM and an EAGLE3 draft model (spec-decoding: mtp).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \
    --speculative-config '{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}' \
    > server.log 2>&1 &
wait_for_server 8888
run_client
