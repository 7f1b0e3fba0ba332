#!/usr/bin/env bash
set -euo pipefail

# MI325X (AMD cluster): same Slurm + enroot flow as MI300X, different partition.
PARTITION="mi325x"
HF_HUB_CACHE_MOUNT="/nfsdata/hf-hub-cache/"
SQUASH_FILE="/nfsdata/enroot/$(echo "$IMAGE" | sed 's/[\/:@#]/_/g').sqsh"
export GPU_COUNT="${GPU_COUNT:-${TP:?TP must be set}}"

set -x
salloc --partition=$PARTITION --gres=gpu:$GPU_COUNT --exclusive --time=180 --no-shell --job-name="$RUNNER_NAME"
JOB_ID=$(squeue --name="$RUNNER_NAME" -u "$USER" -h -o %A | head -n1)
trap 'scancel "$JOB_ID" 2>/dev/null || true' EXIT

srun --jobid="$JOB_ID" bash -c "
    if ! unsquashfs -l '$SQUASH_FILE' >/dev/null 2>&1; then
        enroot import -o '$SQUASH_FILE' docker://$IMAGE
    fi
"

srun --jobid="$JOB_ID" \
    --container-image=$SQUASH_FILE \
    --container-mounts=$GITHUB_WORKSPACE:/workspace/,$HF_HUB_CACHE_MOUNT:$HF_HUB_CACHE \
    --container-workdir=/workspace/ \
    --no-container-entrypoint --export=ALL,PORT=8888 \
    bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi325x.sh
