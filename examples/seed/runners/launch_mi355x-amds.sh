#!/usr/bin/env bash
set -euo pipefail
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')

# MI355X (AMD cluster): the runner host has the GPUs, so run the script in docker.
HF_HUB_CACHE_MOUNT="/nfsdata/hf_hub_cache"
CONTAINER_NAME="bmk-${RUNNER_NAME}"
PORT=8888

cleanup() {
    docker rm -f "$CONTAINER_NAME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

set -x
docker run --rm --name "$CONTAINER_NAME" --ipc=host --network=host \
    --device=/dev/kfd --device=/dev/dri --group-add video --shm-size=64g \
    -v "$HF_HUB_CACHE_MOUNT:/root/.cache/huggingface/hub" \
    -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
    -e HF_TOKEN -e MODEL -e TP -e EP_SIZE -e CONC -e ISL -e OSL -e MAX_MODEL_LEN \
    -e SPEC_DECODING -e RESULT_FILENAME -e PORT="$PORT" \
    "$IMAGE" \
    bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi355x${SPEC_SUFFIX}.sh
