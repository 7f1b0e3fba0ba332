#!/usr/bin/env bash
set -euo pipefail

# MI300X (AMD cluster): allocate a Slurm node, import the image with enroot,
# then run the benchmark script inside the container.
PARTITION="compute"
HF_HUB_CACHE_MOUNT="/raid/hf-hub-cache/"
SQUASH_DIR="/raid/hf-hub-cache/runtime-cache/enroot"
SQUASH_FILE="$SQUASH_DIR/$(echo "$IMAGE" | sed 's/[\/:@#]/_/g').sqsh"
export GPU_COUNT="${GPU_COUNT:-${TP:?TP must be set}}"

set -x
JOB_ID=$(salloc --partition=$PARTITION --gres=gpu:$GPU_COUNT --time=180 --no-shell \
    --job-name="$RUNNER_NAME" 2>&1 | tee /dev/stderr | grep -oP 'Granted job allocation \K[0-9]+')
if [[ -z "$JOB_ID" ]]; then
    echo "ERROR: salloc failed to allocate a job" >&2
    exit 1
fi
trap 'scancel "$JOB_ID" 2>/dev/null || true' EXIT

srun --jobid="$JOB_ID" bash -c "
    if ! unsquashfs -l '$SQUASH_FILE' >/dev/null 2>&1; then
        enroot import -o '$SQUASH_FILE' docker://$IMAGE
    fi
"

srun --jobid="$JOB_ID" \
--container-image=$SQUASH_FILE \
--container-mounts=$GITHUB_WORKSPACE:/workspace/,$HF_HUB_CACHE_MOUNT:$HF_HUB_CACHE,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri \
--container-workdir=/workspace/ \
--no-container-entrypoint --export=ALL \
bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh