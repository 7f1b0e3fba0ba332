"""recipe-mismatch: a serve command differs from the official recipe in a MAJOR setting.

What it does:
    For each single-node vLLM or SGLang entry, renders the official recipe for what each group
    of its points asks (the entry's model, GPU and precision; the point's tensor and expert
    parallelism, DP attention and speculative decoding): the vLLM recipe
    (vllm-project/recipes: the model's YAML, its variant, strategy, hardware overrides and
    features, in the site's composition order) or the SGLang cookbook cell
    (``docs_new/src/snippets/configs``: the cell that matches hardware, variant, quantization,
    strategy and nodes). Both commands are normalized the same way (the serve model's
    canonical names, aliases folded, JSON and dotted flags flattened, values coerced) and every
    differing key is classified the way InferenceX's sign-off check does: MAJOR (parallelism,
    quantization, KV-cache dtype, attention/MoE/GEMM backends, fusions, kernel env vars),
    MAJOR-spec (speculative settings), tuning, harness, feature. One finding per entry and
    recipe, at the entry, when MAJOR or MAJOR-spec keys differ; ``python -m bot recipes``
    shows every difference. Only when asked: ``lint --recipes DIR|github``, a
    ``recipes: {local: [DIR]}`` section in the configuration, or the pull-request bot; a source
    that cannot be reached is one information note, never an error.

Why is this bad?
    The benchmark publishes a number for "model X with engine Y on GPU Z". When the serve
    command drifted from the recipe the engine's authors maintain (another attention
    backend, a missing fusion flag, a different speculative method), the number is not
    what that configuration does, and nobody sees it unless someone diffs the commands by
    eye. Differences may be deliberate; then they are worth a line in the PR.

Example:
    ```yaml
    # file: .benchbot.yml
    recipes:
      local: [recipes]
    ```

    ```yaml
    # file: recipes/strategies/single_node_tp.yaml
    name: single_node_tp
    deploy_type: single_node
    vllm_args: []
    parallel_flag: "--tensor-parallel-size"
    ```

    ```yaml
    # file: recipes/taxonomy.yaml
    hardware_profiles:
      mi300x: {brand: AMD, generation: amd, gpu_count: 8, vram_gb: 1536}
    ```

    ```yaml
    # file: recipes/models/acme/Coder-9B.yaml
    model:
      model_id: acme/Coder-9B
      base_args: [--trust-remote-code, --kv-cache-dtype, fp8]
    variants:
      default: {precision: fp8}
    compatible_strategies: [single_node_tp]
    ```

    ```yaml
    # file: configs/acme-master.yaml
    coder9b-fp8-mi300x-vllm:
      image: vllm/vllm-openai-rocm:v0.25.1
      model: acme/Coder-9B
      model-prefix: coder9b
      runner: mi300x
      precision: fp8
      framework: vllm
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64 }
    ```

    ```bash
    # file: benchmarks/single_node/fixed_seq_len/coder9b_fp8_mi300x.sh
    #!/usr/bin/env bash
    # the recipe serves with an FP8 KV cache; this script keeps the default (auto)
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --trust-remote-code --max-model-len "$MAX_MODEL_LEN" \\
        --port 8888 > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Bring the MAJOR settings in line with the recipe, or say in the pull request (and the
    perf changelog) why this benchmark differs: a newer backend, a kernel the recipe does not
    know yet. A recipe that is out of date is worth a pull request upstream.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.launches.gather import engine_of
from bot.recipes.attach import attached
from bot.recipes.compare import Comparison, comparisons
from bot.recipes.model import Difference
from bot.repo.facts import Facts
from bot.settings import Config

ID = "recipe-mismatch"
CODE = "BB301"
SEVERITY = Severity.WARNING
SUMMARY = "a serve command differs from the official vLLM recipe or SGLang cookbook in a MAJOR setting"

NAMED = 4  # differences named in the message


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    got = attached(facts)
    if got is None:
        return
    sources, notes = got.sources, got.notes
    wanted = [e for e in facts.entries if not e.multinode and engine_of(e) in ("vllm", "sglang")
              and (got.only is None or e.name in got.only)]
    if not wanted:
        return
    if not sources:
        first = wanted[0]
        why = "; ".join(notes) or "no recipe source was given"
        yield Finding(ID, CODE, Severity.INFO, first.path, 1, 1,
                      f"recipe parity not checked: no recipe source could be read ({why})", key="no-source")
        return
    by_entry: dict[tuple[str, str, str], list[Comparison]] = {}
    for c in comparisons(facts, sources, wanted):
        if c.recipe is not None and c.major:
            by_entry.setdefault((c.entry.path, c.entry.name, c.recipe.provenance.path), []).append(c)
    for (_, _, recipe_path), found in by_entry.items():
        yield _finding(found, recipe_path)


def _finding(found: list[Comparison], recipe_path: str) -> Finding:
    first = found[0]
    entry = first.entry
    assert first.recipe is not None
    prov = first.recipe.provenance
    keys: dict[str, Difference] = {}
    for c in found:
        for d in c.major:
            keys.setdefault(d.key, d)
    major = [d for d in keys.values() if d.klass == "MAJOR"]
    spec = [d for d in keys.values() if d.klass == "MAJOR-spec"]
    counts = ", ".join(p for p in (_count(len(major), "MAJOR"), _count(len(spec), "MAJOR-spec")) if p)
    named = "; ".join(_say(d) for d in [*major, *spec][:NAMED])
    more = f"; and {len(keys) - NAMED} more" if len(keys) > NAMED else ""
    fallback = f", {prov.fallback}" if prov.fallback else ""
    groups = f" ({len(found)} point groups)" if len(found) > 1 else ""
    at = "" if prov.revision.startswith("tree:") else f" @ {prov.revision[:12]}"  # ``tree:``: kept in the repo
    msg = (f"{entry.name}: the serve command differs from {_source_name(first)} {recipe_path}{at}{fallback} "
           f"in {counts}{groups}: {named}{more}")
    related = []
    for d in keys.values():
        if d.where:
            path, _, at = d.where.rpartition(":")
            related.append(Related(path or d.where, int(at) if at.isdigit() else 1, f"{d.key}: {_say(d)}"))
    return Finding(ID, CODE, SEVERITY, entry.path, entry.pos.line, entry.pos.col, msg, tuple(related), (entry.name,),
                   key=f"{entry.name}|{recipe_path}")


def _count(n: int, what: str) -> str:
    return f"{n} {what} difference{'s' if n != 1 else ''}" if n else ""


def _source_name(c: Comparison) -> str:
    return "the vLLM recipe" if c.engine == "vllm" else "the SGLang cookbook config"


def _say(d: Difference) -> str:
    if d.status == "missing-in-script":
        return f"{d.key} is {_v(d.recipe)} in the recipe, not set by the script"
    if d.status == "extra-in-script":
        return f"{d.key} is {_v(d.script)} in the script, not in the recipe"
    return f"{d.key} is {_v(d.script)} (recipe: {_v(d.recipe)})"


def _v(value: object) -> str:
    if value is True:
        return "on"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
