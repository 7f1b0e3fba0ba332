"""A synthetic benchmark repo shaped like SemiAnalysisAI/InferenceX, N times over.

    python tests/perf/synth.py OUT --scale N [--seed S]

Scale 1 is about InferenceX's size: ~220 config entries in configs/{nvidia,amd}-master.yaml
over 10 GPU families (docker and Slurm single-node launchers; three multinode Slurm
launchers with a long if/elif chain over MODEL_PREFIX/PRECISION/FRAMEWORK, ``|| exit 1``
guards and a retried submission), 19 launchers, ~180 benchmark scripts (``_mtp``,
``_<framework>`` and ``agentic/`` variants: synth_scripts.py, synth_agentic.py),
benchmarks/benchmark_lib.sh, runners.yaml (labels, and the hardware the sweep generator sizes
an agentic point's DRAM KV offload budget from), the reusable templates with their callers
(fixed-seq-len, agentic and multinode jobs), perf-changelog.yaml and a few utils/ helpers.
Agentic-coding entries (``...-agentic[-mtp]``) have points without KV offloading and, for
sglang and vllm, with DRAM offloading; MTP entries (``spec-decoding: mtp``) dispatch to
``_mtp.sh`` scripts that pass the engine's speculative flags. Scale N
repeats the catalogue N times under new GPU names (``h200r2``, ...): N times the entries,
launchers, scripts and workflows. Every entry dispatches to a script that exists, so the
lint is (nearly) clean. Deterministic for a seed; pure Python; writes only under OUT.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_agentic as sa  # noqa: E402
import synth_files as sf  # noqa: E402
import synth_scripts as ss  # noqa: E402

# prefix, Hugging Face name, precisions, has an MTP head
MODELS: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("dsr1", "deepseek-ai/DeepSeek-R1-0528", ("fp8", "fp4"), True),
    ("gptoss", "openai/gpt-oss-120b", ("fp4",), False),
    ("llama70b", "meta-llama/Llama-3.3-70B-Instruct", ("fp8", "fp4"), False),
    ("qwen3.5", "Qwen/Qwen3.5-397B-A17B", ("fp8", "bf16"), True),
    ("kimik2.5", "moonshotai/Kimi-K2.5", ("int4", "fp4"), True),
    ("glm5", "zai-org/GLM-5", ("fp8",), True),
    ("minimaxm2.5", "MiniMaxAI/MiniMax-M2.5", ("fp8",), False),
)
# gpu, vendor, [(site, nodes, style)], multinode: "" (single-node only), "mixed", "only"
GPUS: tuple[tuple[str, str, tuple[tuple[str, int, str], ...], str], ...] = (
    ("h100", "nvidia", (("cw", 3, "srun"), ("cr", 2, "docker"), ("dgxc", 1, "srun")), ""),
    ("h200", "nvidia", (("cw", 2, "srun"), ("nb", 2, "docker"), ("dgxc", 1, "srun")), ""),
    ("b200", "nvidia", (("nb", 2, "docker"), ("dgxc", 2, "srun")), ""),
    ("b300", "nvidia", (("nv", 2, "docker"), ("cw", 1, "srun")), ""),
    ("mi300x", "amd", (("amds", 2, "docker"), ("cr", 2, "docker")), ""),
    ("mi325x", "amd", (("amds", 2, "docker"), ("tw", 1, "docker")), ""),
    ("mi355x", "amd", (("amds", 3, "docker"), ("tw", 1, "docker")), ""),
    ("gb200", "nvidia", (("nv", 4, "slurm"),), "mixed"),
    ("gb300", "nvidia", (("nv", 4, "slurm"),), "mixed"),
    ("mi355x", "amd", (("mn", 2, "slurm"),), "only"),
)
# host facts of a single-node label (runners.yaml ``hardware:``): available CPU DRAM in MiB and GPUs
# per node; the sweep generator sizes an agentic point's DRAM KV offload budget from them
HARDWARE = {"h100": (1_900_000, 8), "h200": (1_500_000, 8), "b200": (2_900_000, 8), "b300": (3_800_000, 8),
            "mi300x": (2_300_000, 8), "mi325x": (2_300_000, 8), "mi355x": (2_800_000, 8), "gb200": (850_000, 4),
            "gb300": (850_000, 4)}
FP4_GPUS = ("b200", "b300", "gb200", "gb300", "mi355x")
SINGLE_FW = {"nvidia": ("sglang", "vllm", "trt"), "amd": ("sglang", "vllm", "atom")}
MULTI_FW = {"nvidia": ("dynamo-trt", "dynamo-sglang", "dynamo-vllm"), "amd": ("sglang-disagg", "vllm-disagg")}
IMAGES = {
    ("sglang", "nvidia"): "lmsysorg/sglang:v0.5.{v}-cu129", ("sglang", "amd"): "lmsysorg/sglang:v0.5.{v}-rocm700",
    ("vllm", "nvidia"): "vllm/vllm-openai:v0.1{v}.1", ("vllm", "amd"): "vllm/vllm-openai-rocm:v0.1{v}.1",
    ("trt", "nvidia"): "nvcr.io/nvidia/tensorrt-llm/release:1.{v}.0rc6",
    ("atom", "amd"): "rocm/atom:rocm7.1-ubuntu24.04-atom0.1.{v}",
    ("dynamo-trt", "nvidia"): "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.{v}.1",
    ("dynamo-sglang", "nvidia"): "lmsysorg/sglang:v0.5.{v}-cu130",
    ("dynamo-vllm", "nvidia"): "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.{v}.1",
    ("sglang-disagg", "amd"): "lmsysorg/sglang:v0.5.{v}-rocm700-mi35x",
    ("vllm-disagg", "amd"): "rocm/vllm-dev:disagg-0.1{v}",
}
SEQS = ((1024, 1024), (1024, 8192), (8192, 1024))
SINGLE_DIR = "benchmarks/single_node"


def _gpu_name(gpu: str, replica: int) -> str:
    return gpu if replica == 1 else f"{gpu}r{replica}"


def _precisions(gpu: str, prefix: str, precisions: tuple[str, ...]) -> list[str]:
    return [p for p in precisions if p != "fp4" or gpu in FP4_GPUS or prefix == "gptoss"]


def _rows(rng: random.Random, mtp: bool, moe: bool) -> list[str]:
    rows = []
    tps = rng.sample((8, 4, 2), rng.choice((1, 1, 2)))
    for tp in sorted(tps, reverse=True):
        start = rng.choice((1, 4))
        rows.append(f"tp: {tp}, conc-start: {start}, conc-end: {rng.choice((32, 64, 128))}")
    if moe and rng.random() < 0.5:
        rows.append("tp: 8, ep: 8, dp-attn: true, conc-start: 128, conc-end: 512")
    extra = ", spec-decoding: mtp" if mtp else ""
    return [f"      - {{ {r}{extra} }}" for r in rows]


def _header(name: str, image: str, model: str, prefix: str, runner: str, precision: str, framework: str,
            multinode: bool) -> list[str]:
    out = [f"{name}:", f"  image: {image}", f"  model: {model}", f"  model-prefix: {prefix}",
           f"  runner: {runner}", f"  precision: {precision}", f"  framework: {framework}",
           f"  multinode: {'true' if multinode else 'false'}"]
    return out + (["  disagg: true"] if multinode else []) + ["  scenarios:"]


def _single_entry(rng: random.Random, name: str, image: str, model: str, prefix: str, gpu: str,
                  precision: str, framework: str, mtp: bool) -> list[str]:
    lines = _header(name, image, model, prefix, gpu, precision, framework, False)
    lines.append("    fixed-seq-len:")
    for isl, osl in sorted(rng.sample(SEQS, rng.choice((2, 3, 3)))):
        lines += [f"    - isl: {isl}", f"      osl: {osl}", "      search-space:"]
        lines += _rows(rng, mtp, prefix != "llama70b")
    return lines


def _agentic_entry(rng: random.Random, name: str, image: str, model: str, prefix: str, gpu: str,
                   precision: str, framework: str, mtp: bool) -> list[str]:
    """An entry of agentic-coding points only (as InferenceX's ``...-agentic-...`` entries):
    without KV offloading, and with DRAM offloading where the framework's script has a backend
    (the generator then sizes ``total-cpu-dram-gb`` from the runner and ``dram-utilization``)."""
    lines = _header(name, image, model, prefix, gpu, precision, framework, False)
    extra = ", spec-decoding: mtp" if mtp else ""
    moe = prefix != "llama70b"
    tp = rng.choice((4, 8))
    rows = [f"{{ tp: {tp}, kv-offloading: none, conc-list: [1, 4, 8, 16]{extra} }}"]
    if moe and rng.random() < 0.5:
        rows.append(f"{{ tp: 8, ep: 8, dp-attn: true, kv-offloading: none, conc-list: [32, 64]{extra} }}")
    backend = sa.DRAM_BACKEND.get(framework)
    if backend:
        ep = ", ep: 8" if moe else ""
        rows.append(f"{{ tp: 8{ep}, kv-offloading: dram, kv-offload-backend: {{ name: {backend} }}, "
                    f"conc-list: [{rng.choice((16, 32))}, 64, 128]{extra} }}")
        share = rng.choice(("0.80", "0.90"))
        lines += ["    agentic-coding:", f"    - dram-utilization: {share}", "      search-space:"]
    else:
        lines += ["    agentic-coding:", "    - search-space:"]
    return lines + [f"      - {r}" for r in rows]


def _pool(name: str, workers: int, tp: int, dp: bool) -> list[str]:
    return [f"        {name}:", f"          num-worker: {workers}", f"          tp: {tp}", f"          ep: {tp}",
            f"          dp-attn: {'true' if dp else 'false'}"]


def _multi_entry(rng: random.Random, name: str, image: str, model: str, prefix: str, label: str,
                 precision: str, framework: str, mtp: bool) -> list[str]:
    lines = _header(name, image, model, prefix, label, precision, framework, True)
    lines.append("    fixed-seq-len:")
    for isl, osl in sorted(rng.sample(SEQS, rng.choice((2, 3)))):
        lines += [f"    - isl: {isl}", f"      osl: {osl}", "      search-space:"]
        for _ in range(rng.choice((2, 3, 4, 5))):
            c = rng.choice((4, 16, 64, 256))
            lines.append(f"      - conc-list: [{c}, {c * 2}, {c * 4}]")
            if mtp:
                lines.append("        spec-decoding: mtp")
            lines += _pool("prefill", rng.choice((1, 2)), 4, True)
            lines += _pool("decode", rng.choice((1, 2, 4)), rng.choice((4, 8, 16)), rng.random() < 0.85)
    return lines


def _changelog(groups: list[tuple[str, str]]) -> str:
    """One changelog entry per (glob, description), oldest first."""
    out = []
    for i, (glob, desc) in enumerate(groups, 1):
        out.append(f"- config-keys:\n    - {glob}\n  description:\n    - \"{desc}\"\n"
                   f"  pr-link: https://github.com/example/inferencex-synth/pull/{i}\n")
    return "\n".join(out)


UTILS = {
    "check_scripts.sh": 'for f in benchmarks/**/*.sh runners/*.sh; do\n    bash -n "$f" || exit 1\ndone\n',
    "collect_results.sh": 'OUT="${1:-results}"\nmkdir -p "$OUT"\nfind . -name "*.json" -newer perf-changelog.yaml'
                          ' -exec cp {} "$OUT/" \\;\nls "$OUT" | wc -l\n',
    "docker_cleanup.sh": 'AGE="${2:-7d}"\ndocker container prune -f --filter "until=${AGE%d}h" || true\n'
                         'docker image prune -af --filter "until=168h" || true\n',
    "gpu_health.sh": 'if command -v nvidia-smi >/dev/null; then\n    nvidia-smi --query-gpu=index,temperature.gpu '
                     '--format=csv\nelif command -v rocm-smi >/dev/null; then\n    rocm-smi --showtemp\nfi\n',
    "hf_prefetch.sh": 'MODEL="${1:?model}"\nfor attempt in 1 2 3; do\n    huggingface-cli download "$MODEL" && '
                      'break\n    sleep $((attempt * 10))\ndone\n',
}


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, str] = {}
        self.configs: dict[str, list[tuple[tuple[int, int, int], list[str]]]] = {"nvidia": [], "amd": []}
        self.labels: dict[str, list[str]] = {}
        self.changelog: list[tuple[str, str]] = []
        self.counts = {"entries": 0, "single_entries": 0, "multinode_entries": 0, "mtp_entries": 0,
                       "agentic_entries": 0}

    def add(self, path: str, text: str) -> None:
        assert path not in self.files, path
        self.files[path] = text

    def entry(self, vendor: str, key: tuple[int, int, int], lines: list[str], multinode: bool, mtp: bool) -> None:
        self.configs[vendor].append((key, lines))
        self.counts["entries"] += 1
        self.counts["multinode_entries" if multinode else "single_entries"] += 1
        self.counts["mtp_entries"] += mtp


def _replica(repo: Repo, rng: random.Random, replica: int) -> None:
    for g, (base_gpu, vendor, sites, multi) in enumerate(GPUS):
        gpu = _gpu_name(base_gpu, replica)
        nodes: list[str] = []
        for site, count, style in sites:
            family = f"{gpu}-{site}"
            nodes += [f"{family}_{i}" for i in range(count)]
            if style == "docker":
                text = sf.docker_launcher(family, gpu, vendor, site.upper())
            elif style == "srun":
                text = sf.srun_launcher(family, gpu, site.upper(), f"{gpu}-{rng.choice(('batch', 'bench'))}")
            else:
                branches = [(m[0], p, fw) for m in MODELS for p in _precisions(base_gpu, m[0], m[2])
                            for fw in MULTI_FW[vendor]]
                text = sf.multinode_launcher(family, gpu, site.upper(), branches, multi == "mixed")
            repo.add(f"runners/launch_{family}.sh", text)
        if multi == "mixed":
            half = len(nodes) // 2
            repo.labels.setdefault(gpu, []).extend(nodes[:half])
            repo.labels.setdefault(f"{gpu}-multinode", []).extend(nodes[half:])
        elif multi == "only":
            repo.labels.setdefault(f"{gpu}-multinode", []).extend(nodes)
        else:
            repo.labels.setdefault(gpu, []).extend(nodes)
        for m, (prefix, model, precisions, has_mtp) in enumerate(MODELS):
            for precision in _precisions(base_gpu, prefix, precisions):
                key, before = (m, replica, g), repo.counts["entries"]
                if multi == "only" or (multi == "mixed" and rng.random() < 0.85):
                    _multinode_entries(repo, rng, key, gpu, vendor, prefix, model, precision, has_mtp)
                if multi != "only":
                    _single_entries(repo, rng, key, gpu, vendor, prefix, model, precision, has_mtp)
                if repo.counts["entries"] > before:  # a changelog key that names no entry is a finding
                    repo.changelog.append((f"{prefix}-{precision}-{gpu}-*",
                                           f"{prefix} {precision.upper()} on {gpu.upper()}: initial sweep"))


def _single_entries(repo: Repo, rng: random.Random, key: tuple[int, int, int], gpu: str, vendor: str,
                    prefix: str, model: str, precision: str, has_mtp: bool) -> None:
    k = rng.choices((0, 1, 2), weights=(12, 58, 30))[0]
    for framework in rng.sample(SINGLE_FW[vendor], k):
        image = IMAGES[(framework, vendor)].format(v=rng.choice((8, 9)))
        stem = f"{prefix}_{precision}_{gpu}" + ("" if framework == "sglang" else f"_{framework}")
        variants = [False] + ([True] if has_mtp and rng.random() < 0.4 else [])
        for mtp in variants:
            name = f"{prefix}-{precision}-{gpu}-{framework}" + ("-mtp" if mtp else "")
            lines = _single_entry(rng, name, image, model, prefix, gpu, precision, framework, mtp)
            repo.entry(vendor, key, lines, False, mtp)
            desc = f"{model} {precision.upper()} on {gpu.upper()} with {framework}" + (
                " and its MTP head (spec-decoding: mtp)" if mtp else "")
            mem = rng.choice(("0.85", "0.88", "0.9"))
            script = stem + ("_mtp" if mtp else "") + ".sh"
            array = rng.random() < 0.5
            repo.add(f"{SINGLE_DIR}/fixed_seq_len/{script}", ss.single_script(desc, framework, mtp, mem, array))
        if rng.random() < 0.22:  # an agentic-coding entry of its own, most with the MTP head
            mtp = has_mtp and rng.random() < 0.6
            name = f"{prefix}-{precision}-{gpu}-{framework}-agentic" + ("-mtp" if mtp else "")
            lines = _agentic_entry(rng, name, image, model, prefix, gpu, precision, framework, mtp)
            repo.entry(vendor, key, lines, False, mtp)
            repo.counts["agentic_entries"] += 1
            desc = f"{model} {precision.upper()} on {gpu.upper()} with {framework}, agentic coding trace replay" + (
                " with its MTP head" if mtp else "")
            repo.add(f"{SINGLE_DIR}/agentic/{stem}{'_mtp' if mtp else ''}.sh",
                     sa.agentic_script(desc, framework, mtp, rng.choice(("0.85", "0.88", "0.9"))))


def _multinode_entries(repo: Repo, rng: random.Random, key: tuple[int, int, int], gpu: str, vendor: str,
                       prefix: str, model: str, precision: str, has_mtp: bool) -> None:
    k = rng.choices((0, 1, 2), weights=(20, 55, 25))[0]
    for framework in rng.sample(MULTI_FW[vendor], k):
        image = IMAGES[(framework, vendor)].format(v=rng.choice((7, 8)))
        names = [("", False)] + ([("-mtp", True)] if has_mtp and rng.random() < 0.5 else [])
        names += [(s, False) for s in ("-lowlat", "-maxtpt") if rng.random() < 0.5]
        for suffix, mtp in names:
            name = f"{prefix}-{precision}-{gpu}-{framework}{suffix}"
            lines = _multi_entry(rng, name, image, model, prefix, f"{gpu}-multinode", precision, framework, mtp)
            repo.entry(vendor, key, lines, True, mtp)
        desc = f"{model} {precision.upper()} on {gpu.upper()}, disaggregated prefill/decode"
        repo.add(f"benchmarks/multi_node/{prefix}_{precision}_{gpu}_{framework}.sh",
                 sf.multi_script(desc, gpu, framework))


def _workflows(repo: Repo, scale: int) -> None:
    wf = ".github/workflows"
    repo.add(f"{wf}/benchmark-tmpl.yml", sf.template(False))
    repo.add(f"{wf}/benchmark-multinode-tmpl.yml", sf.template(True))
    for r in range(1, scale + 1):
        tag = "" if r == 1 else f"-r{r}"
        repo.add(f"{wf}/run-sweep{tag}.yml", sf.caller(f"Run sweep{tag}", ["  workflow_dispatch:", "  push:",
                                                                            "    branches: [main]"], "full-sweep"))
        repo.add(f"{wf}/e2e-tests{tag}.yml", sf.caller(f"End-to-end tests{tag}", ["  pull_request:"], "test-config"))
        repo.add(f"{wf}/profile{tag}.yml", sf.profile_workflow(f"Profile{tag}"))
        for kind in ("lint", "changelog", "cleanup"):
            repo.add(f"{wf}/{kind}{tag}.yml", sf.plain_workflow(f"{kind.title()}{tag}", kind))


def make_repo(root: Path, scale: int, seed: int = 0) -> dict[str, int]:
    """Write the repo under ``root`` (created if needed) and return its counts."""
    if scale < 1:
        raise ValueError("scale must be at least 1")
    repo = Repo(root)
    for replica in range(1, scale + 1):
        _replica(repo, random.Random(f"inferencex-synth:{seed}:{replica}"), replica)
    yaml_lines = 0
    for vendor, items in repo.configs.items():
        blocks = ["\n".join(lines) for _, lines in sorted(items, key=lambda kv: kv[0])]
        text = "\n\n".join(blocks) + "\n"
        repo.add(f"configs/{vendor}-master.yaml", text)
        yaml_lines += text.count("\n")
    runners = ["labels:"] + [f"  {label}:\n" + "\n".join(f"    - {n}" for n in nodes)
                             for label, nodes in repo.labels.items()]
    hardware = {label: HARDWARE[re.sub(r"r\d+$", "", label)] for label in repo.labels
                if not label.endswith("-multinode")}
    runners += ["hardware:"] + [f"  {label}:\n    available-cpu-dram-mib: {mib}\n    gpus-per-node: {gpus}"
                                for label, (mib, gpus) in hardware.items()]
    repo.add("configs/runners.yaml", "\n".join(runners) + "\n")
    repo.add("benchmarks/benchmark_lib.sh", ss.BENCHMARK_LIB)
    repo.add("perf-changelog.yaml", _changelog(repo.changelog))
    for r in range(1, scale + 1):
        for name, body in UTILS.items():
            stem = name[:-3] if r == 1 else f"{name[:-3]}_r{r}"
            repo.add(f"utils/{stem}.sh", "#!/usr/bin/env bash\nset -euo pipefail\n" + body)
    repo.add("utils/matrix_logic/generate_sweep_configs.py", "import sys\n\nprint('[]')  # stand-in\n")
    repo.add("utils/bench_serving/benchmark_serving.py", "import sys\n\nprint(sys.argv)  # stand-in\n")
    repo.add("README.md", f"# Synthetic InferenceX-shaped repo (scale {scale}, seed {seed})\n\n"
                          "Generated by benchbot's tests/perf/synth.py; the numbers it would produce mean nothing.\n")
    _workflows(repo, scale)
    for path, text in sorted(repo.files.items()):
        dest = root / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    counts = dict(repo.counts)
    counts.update(
        launchers=sum(p.startswith("runners/launch_") for p in repo.files),
        scripts=sum(p.startswith("benchmarks/") and p.endswith(".sh") and p != "benchmarks/benchmark_lib.sh"
                    for p in repo.files),
        workflows=sum(p.startswith(".github/workflows/") for p in repo.files),
        shell_files=sum(p.endswith(".sh") for p in repo.files),
        yaml_lines=yaml_lines, labels=len(repo.labels), files=len(repo.files))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    counts = make_repo(args.out, args.scale, args.seed)
    print(f"{args.out}: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
