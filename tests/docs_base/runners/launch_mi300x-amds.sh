#!/usr/bin/env bash
set -euo pipefail
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
docker run --rm --network=host -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
    -e MODEL -e TP -e CONC -e ISL -e OSL -e MAX_MODEL_LEN -e RESULT_FILENAME "$IMAGE" \
    bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"
