#!/usr/bin/env bash
# Kimi-K2.5 INT4 on MI300X with vLLM.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 > server.log 2>&1 &
wait_for_server 8888
run_client
