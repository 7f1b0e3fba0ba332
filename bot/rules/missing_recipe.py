"""missing-recipe: an entry hands a recipe the repo should keep, and does not, to a job tool.

What it does:
    For an entry whose launcher runs no benchmark script but hands the job to an external
    tool (``srtctl apply -f "$CONFIG_FILE"``; the profile's ``external-tools``), looks up
    every recipe its ``additional-settings`` name (``CONFIG_FILE=recipes/...yaml``, any
    ``:override[N]`` selector split off) where the tool will read it: through the copies
    the launcher makes on the entry's paths
    (``cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/x" recipes/x``),
    at the path as written when the tool runs in the repo's checkout, or, when no copy is
    seen, under the profile's ``recipe-roots``. A recipe whose folder the repo has but
    whose file it does not is reported at the entry's ``additional-settings`` line, with
    the closest existing names (as the setting would name them): first those for the
    entry's GPU (its runner label's first word, ``gb300`` of ``gb300-multinode``, found in
    the recipe's file name or folder), then the others. Recipes of folders the
    repo does not bring in come from the tool's own repository (cloned at run time): they
    are not reported, only counted in the summary.

Why is this bad?
    The launcher copies the repo's recipe folder into the tool's checkout and submits the
    job; the file is not there, so the job fails on the cluster after the runner waited
    for nodes (a typo, or a recipe deleted or renamed while the entry still names it).

Example:
    ```yaml
    # file: configs/nvidia-master.yaml
    # the folder has ctx1_gen2_dep8.yaml, not ctx1_gen2_dep16.yaml
    dsr1-fp4-gb200-dynamo-trt:
      image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
      model: nvidia/DeepSeek-R1-0528-FP4-V2
      model-prefix: dsr1
      runner: gb200-multinode
      precision: fp4
      framework: dynamo-trt
      multinode: true
      disagg: true
      scenarios:
        fixed-seq-len:
        - isl: 8192
          osl: 1024
          search-space:
          - conc-list: [64, 128]
            prefill:
              num-worker: 1
              tp: 4
              ep: 4
              dp-attn: true
              additional-settings:
              - "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep16.yaml"
            decode:
              num-worker: 2
              tp: 8
              ep: 8
              dp-attn: true
    ```

    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x:
        - mi300x-amds_0
        - mi300x-amds_1
      gb200-multinode:
        - gb200-nv_0
    ```

    ```sh
    # file: runners/launch_gb200-nv.sh
    #!/usr/bin/env bash
    git clone https://github.com/NVIDIA/srt-slurm.git srt-slurm && cd srt-slurm || exit 1
    cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/trtllm" recipes/trtllm
    srtctl apply -f "$CONFIG_FILE" --tags "gb200,${MODEL_PREFIX}"
    ```

    ```yaml
    # file: benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml
    name: ctx1_gen2_dep8
    model:
      path: dsr1-fp4
      container: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
    ```

Fix:
    Point the setting at the recipe that exists (the message names the closest), or add
    the recipe under the repo's recipe folder. A recipe that lives only in the tool's
    repository belongs in a folder the repo does not keep.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.repo.jobs import Job, RecipeRef
from bot.rules._variants import closest
from bot.settings import Config

ID = "missing-recipe"
CODE = "BB109"
SEVERITY = Severity.ERROR
SUMMARY = "an entry hands a job tool a recipe file the repo should keep and does not"
_WORD = re.compile(r"[^a-z0-9]+")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    jobs = facts.jobs
    for job in jobs.jobs:
        groups: dict[str, list[RecipeRef]] = {}
        for ref in job.refs:
            recipe = job.recipe(ref)
            if recipe.expected is not None:
                groups.setdefault(recipe.expected, []).append(ref)
        for expected, refs in groups.items():
            yield _finding(facts, job, expected, refs)


def _finding(facts: Facts, job: Job, expected: str, refs: list[RecipeRef]) -> Finding:
    entry, first = job.entry, refs[0]
    near = _closest(facts, job, expected)
    at = job.handoffs[0].loc
    message = f"{entry.name} hands {first.setting}={first.value} to {job.tool}, but {expected} does not exist"
    if near:
        message += f"; closest: {', '.join(near)}"
    related = [Related(entry.path, r.pos.line, "names it again") for r in refs[1:4]]
    via = job.recipe(first).via
    if via is not None:
        related.append(Related(via.path, via.line, f"copies the repo's recipes for {job.tool}"))
    related.append(Related(at.path, at.line, f"hands the recipe to {job.tool}"))
    return Finding(ID, CODE, SEVERITY, entry.path, first.pos.line, first.pos.col, message, tuple(related),
                   (entry.name,), key=f"{entry.name}|{expected}")


def _closest(facts: Facts, job: Job, expected: str) -> list[str]:
    """The existing recipes the tool could be given instead, as the setting would name them: what
    the copies bring in, or what the recipe roots hold. Those for the entry's GPU come first (a
    gb300 entry is not pointed at a gb200 recipe), then the closest names."""
    # (repo folder, the tool path it appears as)
    places = [(c.source, c.dest) for c in job.copies if c.folder and expected.startswith(c.source + "/")]
    if not places:
        places = [(root.rstrip("/"), prefix.rstrip("/")) for prefix, root in facts.profile.recipe_roots.items()
                  if expected.startswith(root.rstrip("/") + "/")]
    if not places:
        places = [(posixpath.dirname(expected), "")]
    options: dict[str, str] = {}  # tool path -> repo path
    for source, dest in places:
        for p in facts.tree.glob([f"{source}/**/*.yaml", f"{source}/**/*.yml"]):
            options.setdefault(dest + p[len(source):] if dest else p, p)
    basenames = sorted({posixpath.basename(p) for p in options})
    rank = {name: i for i, name in enumerate(closest(posixpath.basename(expected), basenames, n=len(basenames)))}
    folder = posixpath.dirname(expected)
    skus = _skus(facts)
    gpu = _gpu(job.entry.runner, expected, skus)
    known = skus | {gpu} if gpu else skus
    ranked = sorted((p for p in options if posixpath.basename(p) in rank),
                    key=lambda p: (gpu is not None and gpu not in _hardware(options[p], known),
                                   rank[posixpath.basename(p)], posixpath.dirname(options[p]) != folder, p))
    return ranked[:3]


def _words(text: str) -> list[str]:
    return _WORD.split(text.lower())


def _skus(facts: Facts) -> set[str]:
    """GPU SKUs as the runner labels name them: each label's first word (``gb300`` of ``gb300-multinode``)."""
    return {_words(label.removeprefix("cluster:"))[0] for label in facts.runners.labels} - {""}


def _gpu(runner: str | None, expected: str, skus: set[str]) -> str | None:
    """The entry's GPU: its runner label's first word, else the recipe path's (None: not known)."""
    if runner:
        first = _words(runner.removeprefix("cluster:"))[0]
        if first and (first in skus or not skus):
            return first
    found = _hardware(expected, skus)
    return min(found) if len(found) == 1 else None


def _hardware(path: str, skus: set[str]) -> set[str]:
    """The SKUs a recipe path is for: those its file name names, else its nearest folder that names one."""
    for part in reversed(path.split("/")):
        found = set(_words(part)) & skus
        if found:
            return found
    return set()
