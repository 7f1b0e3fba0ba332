"""File texts for the synthetic InferenceX-shaped repo (tests/perf/synth.py builds the catalogue):
launchers, multinode submission scripts and workflows (the single-node scripts are in
synth_scripts.py and synth_agentic.py).

Every function returns the text of one file; none writes anything. The shapes follow the
fixtures benchbot is tested on (tests/fixtures/workflow-env-clean, multinode-clean,
root-causes-clean) and InferenceX's layout: reusable templates called with the generator's
JSON matrix (fixed-seq-len and agentic points in jobs of their own, the agentic job passing
the generator's ``total-cpu-dram-gb`` and ``duration``), launchers that build
``benchmarks/single_node/${SCENARIO_SUBDIR}<prefix>_<precision>_<gpu>...sh``.
"""

from __future__ import annotations

# What the docker launchers pass into the container with -e (the scripts see nothing else).
DOCKER_ENV = ("HF_TOKEN", "MODEL", "TP", "EP_SIZE", "DP_ATTENTION", "CONC", "ISL", "OSL", "MAX_MODEL_LEN",
              "SPEC_DECODING", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND", "TOTAL_CPU_DRAM_GB", "DURATION",
              "RESULT_DIR", "RESULT_FILENAME")
SUFFIXES = """SPEC_SUFFIX=$([[ "${SPEC_DECODING:-none}" == "mtp" ]] && printf '_mtp' || printf '')
case "$FRAMEWORK" in
    sglang) FRAMEWORK_SUFFIX="" ;;
    *) FRAMEWORK_SUFFIX="_${FRAMEWORK}" ;;
esac
"""


def dispatch_path(gpu: str) -> str:
    return ("benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_PREFIX}_${PRECISION}_" + gpu
            + "${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh")


def docker_launcher(family: str, gpu: str, vendor: str, site: str) -> str:
    devices = ("--device=/dev/kfd --device=/dev/dri --group-add video" if vendor == "amd"
               else "--gpus all --ulimit memlock=-1 --ulimit stack=67108864")
    env = " ".join(f"-e {v}" for v in DOCKER_ENV)
    return f"""#!/usr/bin/env bash
set -euo pipefail
# {gpu.upper()} nodes at {site}: the runner host has the GPUs, the benchmark runs in docker.
{SUFFIXES}
if [[ "$RUNNER_NAME" == *_0 ]]; then
    HF_HUB_CACHE_MOUNT="/nfsdata/{family}/hf_hub_cache"
else
    HF_HUB_CACHE_MOUNT="/localdata/hf_hub_cache"
fi
CONTAINER_NAME="bmk-${{RUNNER_NAME}}-${{CONC}}"
PORT=8888

cleanup() {{
    docker rm -f "$CONTAINER_NAME" >/dev/null 2>&1 || true
}}
trap cleanup EXIT

docker pull "$IMAGE" >/dev/null 2>&1 || echo "pull failed, using the cached image"
echo "launching $EXP_NAME on $RUNNER_NAME ({family})"
set -x
docker run --rm --name "$CONTAINER_NAME" --ipc=host --network=host --shm-size=64g \\
    {devices} \\
    -v "$HF_HUB_CACHE_MOUNT:/root/.cache/huggingface/hub" \\
    -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \\
    {env} \\
    -e PORT="$PORT" \\
    "$IMAGE" \\
    bash "{dispatch_path(gpu)}"
"""


def srun_launcher(family: str, gpu: str, site: str, partition: str) -> str:
    return f"""#!/usr/bin/env bash
set -euo pipefail
# {gpu.upper()} nodes at {site}: Slurm with pyxis; the job step sees the exported env.
{SUFFIXES}
export SLURM_PARTITION="{partition}"
export ENROOT_CACHE="/mnt/shared/{family}/enroot"
UCX_NET_DEVICES=eth0
SQUASH_FILE="$ENROOT_CACHE/$(echo "$IMAGE" | sed 's/[\\/:@#]/_/g').sqsh"
SCRIPT="{dispatch_path(gpu)}"

salloc --partition="$SLURM_PARTITION" --gres=gpu:"${{TP:?TP must be set}}" --exclusive --time=240 \\
    --no-shell --job-name="$RUNNER_NAME"
JOB_ID=$(squeue --name="$RUNNER_NAME" -u "$USER" -h -o %A | head -n1)
trap 'scancel "$JOB_ID" 2>/dev/null || true' EXIT

if [[ ! -f "$SQUASH_FILE" ]]; then
    srun --jobid="$JOB_ID" --ntasks=1 enroot import -o "$SQUASH_FILE" "docker://$IMAGE" || true
fi
srun --jobid="$JOB_ID" --container-image="$SQUASH_FILE" \\
    --container-mounts="$GITHUB_WORKSPACE:/workspace" --container-workdir=/workspace \\
    --no-container-entrypoint --export=ALL,PORT=8888,UCX_NET_DEVICES=$UCX_NET_DEVICES \\
    bash "$SCRIPT"
"""


def multinode_launcher(family: str, gpu: str, site: str, branches: list[tuple[str, str, str]],
                       single: bool) -> str:
    """A Slurm launcher: a long if/elif chain over (model prefix, precision, framework), a
    per-model submission script retried three times, then a wait on the job; with ``single``
    also the single-node branch (srun into an enroot container)."""
    chain: list[str] = []
    for i, (prefix, precision, framework) in enumerate(branches):
        kw = "if" if i == 0 else "elif"
        tag = f"{prefix}-{precision}"
        chain += [f'    {kw} [[ "$MODEL_PREFIX" == "{prefix}" && "$PRECISION" == "{precision}" '
                  f'&& "$FRAMEWORK" == "{framework}" ]]; then',
                  f'        export MODEL_PATH="/mnt/lustre/models/{tag}"',
                  f'        export SERVED_MODEL_NAME="{tag}-{framework}"',
                  f'        export WORKER_IMAGE_TAG="{framework}-{i}"']
    chain += ["    else",
              '        echo "Unsupported combination: $MODEL_PREFIX $PRECISION $FRAMEWORK on ' + gpu + '" >&2',
              "        exit 1",
              "    fi"]
    body = "\n".join(chain)
    single_branch = f"""else
    export GPU_COUNT="${{GPU_COUNT:-${{TP:?TP must be set}}}}"
    salloc --partition="$SLURM_PARTITION" --account="$SLURM_ACCOUNT" --gres=gpu:"$GPU_COUNT" --time=240 \\
        --no-shell --job-name="$RUNNER_NAME" || exit 1
    JOB_ID=$(squeue --name="$RUNNER_NAME" -u "$USER" -h -o %A | head -n1)
    trap 'scancel "$JOB_ID" 2>/dev/null || true' EXIT
    srun --jobid="$JOB_ID" --container-image="docker://$IMAGE" \\
        --container-mounts="$GITHUB_WORKSPACE:/workspace" --container-workdir=/workspace \\
        --no-container-entrypoint --export=ALL,PORT=8888 \\
        bash "{dispatch_path(gpu)}"
""" if single else """else
    echo "$RUNNER_NAME runs multi-node entries only" >&2
    exit 1
"""
    return f"""#!/usr/bin/env bash
set -eo pipefail
# {gpu.upper()} at {site}: disaggregated multi-node jobs are submitted by a per-model script under
# benchmarks/multi_node/ and waited for here; single-node jobs run in an enroot container.
{SUFFIXES}
export SLURM_PARTITION="batch"
export SLURM_ACCOUNT="benchmark"
export GPUS_PER_NODE=4

if [[ "$IS_MULTINODE" == "true" ]]; then
    export BENCHMARK_LOGS_DIR="$GITHUB_WORKSPACE/benchmark_logs"
    mkdir -p "$BENCHMARK_LOGS_DIR" || exit 1
{body}
    SUBMIT="benchmarks/multi_node/${{MODEL_PREFIX}}_${{PRECISION}}_{gpu}_${{FRAMEWORK}}.sh"
    JOB_ID=""
    for attempt in 1 2 3; do
        JOB_ID=$(bash "$SUBMIT") && [[ -n "$JOB_ID" ]] && break
        echo "submission attempt $attempt failed; retrying in 30s" >&2
        sleep 30
    done
    if [[ -z "$JOB_ID" ]]; then
        echo "ERROR: multi-node job submission failed" >&2
        exit 1
    fi
    while squeue -j "$JOB_ID" --noheader 2>/dev/null | grep -q "$JOB_ID"; do
        sleep 10
    done
    cd "$BENCHMARK_LOGS_DIR" || exit 1
    cat "slurm_job-${{JOB_ID}}.out" || true
    cp ./*.json "$GITHUB_WORKSPACE/" 2>/dev/null || true
{single_branch}fi
"""


def multi_script(desc: str, gpu: str, framework: str) -> str:
    return f"""#!/usr/bin/env bash
# {desc}
# Submits the disaggregated job ({framework}); prints only the Slurm job id.
set -euo pipefail

: "${{MODEL_PATH:?MODEL_PATH comes from the launcher}}"
PREFILL_GPUS=$((PREFILL_NUM_WORKERS * PREFILL_TP))
DECODE_GPUS=$((DECODE_NUM_WORKERS * DECODE_TP))
NODES=$(((PREFILL_GPUS + DECODE_GPUS + GPUS_PER_NODE - 1) / GPUS_PER_NODE))

sbatch --parsable --nodes="$NODES" --partition="$SLURM_PARTITION" --account="$SLURM_ACCOUNT" \\
    --job-name="$RUNNER_NAME" --output="$BENCHMARK_LOGS_DIR/slurm_job-%j.out" \\
    --export=ALL,MODEL="$MODEL",ISL="$ISL",OSL="$OSL" \\
    --wrap "python3 utils/disagg/run_{framework.replace('-', '_')}.py --gpu {gpu} --model-path $MODEL_PATH"
"""


SINGLE_INPUTS = ("runner", "image", "model", "model-prefix", "precision", "framework", "exp-name", "tp", "ep",
                 "dp-attn", "conc", "isl", "osl", "max-model-len", "spec-decoding", "scenario-type", "kv-offloading",
                 "kv-offload-backend", "total-cpu-dram-gb", "duration")
# template inputs a caller may leave out: their defaults (InferenceX: benchmark-tmpl.yml)
DEFAULTS = {"spec-decoding": "none", "scenario-type": "fixed-seq-len", "kv-offloading": "", "kv-offload-backend": "",
            "total-cpu-dram-gb": "0", "duration": "3600"}
FIXED_INPUTS = SINGLE_INPUTS[:15]  # what the fixed-seq-len job passes (scenario and agentic inputs: defaults)
# the agentic job: the generator's fields, and what it pins for every agentic point
AGENTIC_INPUTS = ("runner", "image", "model", "model-prefix", "precision", "framework", "exp-name", "tp", "ep",
                  "dp-attn", "conc", "spec-decoding", "kv-offloading", "total-cpu-dram-gb", "duration")
AGENTIC_WITH = ("kv-offload-backend: ${{ matrix.config['kv-offload-backend'].name }}", "isl: '0'", "osl: '0'",
                "max-model-len: '0'", "scenario-type: agentic-coding")
MULTI_INPUTS = ("runner", "image", "model", "model-prefix", "precision", "framework", "exp-name", "isl", "osl",
                "conc-list", "spec-decoding", "prefill.num-worker", "prefill.tp", "prefill.ep", "prefill.dp-attn",
                "decode.num-worker", "decode.tp", "decode.ep", "decode.dp-attn")
SINGLE_ENV = {"IMAGE": "image", "MODEL": "model", "MODEL_PREFIX": "model-prefix", "PRECISION": "precision",
              "FRAMEWORK": "framework", "TP": "tp", "EP_SIZE": "ep", "DP_ATTENTION": "dp-attn", "CONC": "conc",
              "ISL": "isl", "OSL": "osl", "MAX_MODEL_LEN": "max-model-len", "SPEC_DECODING": "spec-decoding",
              "EXP_NAME": "exp-name", "SCENARIO_TYPE": "scenario-type", "KV_OFFLOADING": "kv-offloading",
              "KV_OFFLOAD_BACKEND": "kv-offload-backend", "TOTAL_CPU_DRAM_GB": "total-cpu-dram-gb",
              "DURATION": "duration"}
MULTI_ENV = {"IMAGE": "image", "MODEL": "model", "MODEL_PREFIX": "model-prefix", "PRECISION": "precision",
             "FRAMEWORK": "framework", "ISL": "isl", "OSL": "osl", "CONC_LIST": "@conc-list",
             "SPEC_DECODING": "spec-decoding", "EXP_NAME": "exp-name", "PREFILL_NUM_WORKERS": "prefill.num-worker",
             "PREFILL_TP": "prefill.tp", "PREFILL_EP": "prefill.ep", "PREFILL_DP_ATTN": "prefill.dp-attn",
             "DECODE_NUM_WORKERS": "decode.num-worker", "DECODE_TP": "decode.tp", "DECODE_EP": "decode.ep",
             "DECODE_DP_ATTN": "decode.dp-attn"}
SUBDIR = "${{ %s == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}"
RESULT_DIR = "/workspace/results"


def _input(name: str) -> str:
    return name.replace(".", "-")


def template(multi: bool) -> str:
    names = MULTI_INPUTS if multi else SINGLE_INPUTS
    lines = ["name: Template - " + ("Multi-Node Benchmark" if multi else "Benchmark"), "on:", "  workflow_call:",
             "    inputs:"]
    for n in names:
        kind = "boolean" if n.endswith("dp-attn") else "string"
        if n in DEFAULTS:
            lines.append(f"      {n}: {{ required: false, type: string, default: '{DEFAULTS[n]}' }}")
        else:
            lines.append(f"      {_input(n)}: {{ required: true, type: {kind} }}")
    env = MULTI_ENV if multi else SINGLE_ENV
    lines += ["", "jobs:", "  benchmark:", "    runs-on: ${{ inputs.runner }}",
              f"    timeout-minutes: {480 if multi else 300}", "    env:"]
    lines += [f"      {k}: ${{{{ join(fromJson(inputs.{v[1:]}), ' ') }}}}" if v[0] == "@"
              else f"      {k}: ${{{{ inputs.{_input(v)} }}}}" for k, v in env.items()]
    if multi:
        lines += ["      SCENARIO_SUBDIR: fixed_seq_len/", "      IS_MULTINODE: 'true'"]
    else:
        lines += ["      SCENARIO_SUBDIR: " + SUBDIR % "inputs.scenario-type", f"      RESULT_DIR: {RESULT_DIR}"]
    result = ("${{ inputs.exp-name }}_${{ inputs.precision }}_${{ inputs.framework }}"
              + ("_multinode" if multi else "_tp${{ inputs.tp }}_conc${{ inputs.conc }}"))
    lines += ["    steps:", "      - uses: actions/checkout@v4", "      - name: Launch job script", "        env:",
              "          RUNNER_NAME: ${{ runner.name }}", f"          RESULT_FILENAME: {result}", "        run: |",
              "          bash ./runners/launch_${RUNNER_NAME%%_*}.sh",
              "      - name: Upload results", "        if: always()", "        uses: actions/upload-artifact@v4",
              "        with:", "          name: ${{ inputs.exp-name }}-${{ inputs.runner }}",
              "          path: '*.json'"]
    return "\n".join(lines) + "\n"


def _setup(mode: str, outputs: tuple[str, ...] = ("single-node", "agentic", "multi-node")) -> list[str]:
    gen = "python3 utils/matrix_logic/generate_sweep_configs.py " + mode + " --config-files configs/*-master.yaml"
    flags = {"single-node": "--single-node --scenario-type fixed-seq-len",
             "agentic": "--single-node --scenario-type agentic-coding", "multi-node": "--multi-node"}
    return ["jobs:", "  setup:", "    runs-on: ubuntu-latest", "    outputs:",
            *[f"      {o}: ${{{{ steps.gen.outputs.{o} }}}}" for o in outputs],
            "    steps:", "      - uses: actions/checkout@v4", "      - id: gen", "        run: |",
            *[f'          echo "{o}=$({gen} {flags[o]})" >> "$GITHUB_OUTPUT"' for o in outputs]]


def _call(job: str, output: str, tmpl: str, names: tuple[str, ...], pinned: tuple[str, ...] = ()) -> list[str]:
    lines = [f"  {job}:", "    needs: setup", f"    if: ${{{{ needs.setup.outputs.{output} != '[]' }}}}",
             "    strategy:", "      fail-fast: false", "      matrix:",
             f"        config: ${{{{ fromJson(needs.setup.outputs.{output}) }}}}",
             f"    uses: ./.github/workflows/{tmpl}", "    secrets: inherit", "    with:"]
    lines += [f"      {_input(n)}: ${{{{ matrix.config.{n} }}}}" for n in names]
    return lines + [f"      {w}" for w in pinned]


def caller(name: str, trigger: list[str], mode: str) -> str:
    lines = [f"name: {name}", "on:", *trigger, "", *_setup(mode),
             *_call("sweep-single-node", "single-node", "benchmark-tmpl.yml", FIXED_INPUTS),
             *_call("sweep-agentic", "agentic", "benchmark-tmpl.yml", AGENTIC_INPUTS, AGENTIC_WITH),
             *_call("sweep-multi-node", "multi-node", "benchmark-multinode-tmpl.yml", MULTI_INPUTS),
             "  collect:", "    needs: [sweep-single-node, sweep-agentic, sweep-multi-node]", "    if: always()",
             "    runs-on: ubuntu-latest", "    steps:", "      - uses: actions/checkout@v4",
             "      - uses: actions/download-artifact@v4", "      - run: bash utils/collect_results.sh results/"]
    return "\n".join(lines) + "\n"


def profile_workflow(name: str) -> str:
    """Runs the launcher directly (no template), single-node entries only."""
    lines = [f"name: {name}", "on:", "  workflow_dispatch:", "",
             *_setup("full-sweep --max-conc 4", ("single-node", "agentic")), "",
             "  profile:", "    needs: setup", "    strategy:", "      matrix:",
             "        config: ${{ fromJson(needs.setup.outputs.single-node) }}",
             "    runs-on: ${{ matrix.config.runner }}", "    env:"]
    lines += [f"      {k}: ${{{{ matrix.config.{v} }}}}" for k, v in SINGLE_ENV.items() if v != "kv-offload-backend"]
    lines += ["      KV_OFFLOAD_BACKEND: ${{ matrix.config['kv-offload-backend'].name }}",
              "      SCENARIO_SUBDIR: " + SUBDIR % "matrix.config.scenario-type", f"      RESULT_DIR: {RESULT_DIR}",
              "    steps:", "      - uses: actions/checkout@v4", "      - name: Launch profiled job", "        env:",
              "          RUNNER_NAME: ${{ runner.name }}",
              "          RESULT_FILENAME: profile_${{ matrix.config.exp-name }}",
              "          PROFILE: '1'", "        run: bash ./runners/launch_${RUNNER_NAME%%_*}.sh"]
    return "\n".join(lines) + "\n"


def plain_workflow(name: str, kind: str) -> str:
    """A workflow that runs no launcher (checks, housekeeping), as most of a real repo's are."""
    runs = {"lint": ["pip install -r requirements-dev.txt", "ruff check utils/", "bash utils/check_scripts.sh"],
            "changelog": ["python3 utils/validate_changelog.py perf-changelog.yaml"],
            "cleanup": ["bash utils/docker_cleanup.sh --older-than 7d"]}[kind]
    trig = {"lint": ["  pull_request:"], "changelog": ["  pull_request:", "    paths: [perf-changelog.yaml]"],
            "cleanup": ["  schedule:", "    - cron: '0 4 * * *'"]}[kind]
    lines = [f"name: {name}", "on:", *trig, "", "jobs:", f"  {kind}:", "    runs-on: ubuntu-latest", "    steps:",
             "      - uses: actions/checkout@v4"]
    lines += [f"      - run: {r}" for r in runs]
    return "\n".join(lines) + "\n"
