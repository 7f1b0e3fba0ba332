"""recipe-image-mismatch: the repo's recipe runs another container than the entry's image.

What it does:
    For an entry handed to an external job tool (``srtctl``), reads the container each
    of its recipes in the repo states (``model.container``, also ``{image: ...}``, a
    ``base:`` block, or the override block its ``:selector`` picks) and compares it with
    the entry's ``image``. Equal means the same image reference once spelling is set
    aside: ``docker://``, enroot's ``nvcr.io#nvidia/...`` for ``nvcr.io/nvidia/...``,
    ``docker.io/`` and ``library/``, a missing tag read as ``:latest``, a digest on one
    side only. A container that is an alias name (one the launcher's generated
    ``srtslurm.yaml`` maps in ``containers:``, or any bare name such as
    ``dynamo-sglang``) is the launcher's own image file and is not compared. A mismatch is
    reported at the recipe's ``container:`` line, naming both values and the entries.

Why is this bad?
    The tool runs the recipe's container, not the entry's ``image``: the results are
    published under an image that did not produce them (InferenceX: "For image bumps,
    ``model.container`` must equal ``image``"), typically after an image bump that missed
    the recipe or the master config.

Example:
    ```yaml
    # file: configs/nvidia-master.yaml
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
              - "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"
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
    # the image was bumped in the master config, not here
    name: ctx1_gen2_dep8
    model:
      path: dsr1-fp4
      container: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.7.0
    ```

Fix:
    Make the recipe's ``model.container`` the entry's ``image`` (or the entry's ``image``
    the recipe's container, whichever was meant), in the same change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.repo.jobs import RecipeRef
from bot.repo.load.configs import Entry
from bot.repo.load.recipefile import Container
from bot.rules._variants import entries_text
from bot.settings import Config

ID = "recipe-image-mismatch"
CODE = "BB110"
SEVERITY = Severity.ERROR
SUMMARY = "a recipe in the repo states another container than the entry's image"


@dataclass
class _Cause:
    """One image bump not carried over: recipes stating ``container`` for entries of ``image``."""

    container: str
    image: str
    recipes: dict[str, Container] = field(default_factory=dict)  # repo path -> its container line
    entries: dict[str, tuple[Entry, RecipeRef, str]] = field(default_factory=dict)  # name -> (entry, ref, tool)


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    causes: dict[tuple[str, str], _Cause] = {}
    for job in facts.jobs.jobs:
        image = job.entry.fields.get("image")
        if not isinstance(image, str) or not image:
            continue
        for ref in job.refs:
            recipe = job.recipe(ref)
            container = recipe.container(ref.selector) if recipe.found else None
            if recipe.found is None or container is None or same_image(container.value, image, job.aliases):
                continue
            cause = causes.setdefault((container.value, image), _Cause(container.value, image))
            cause.recipes.setdefault(recipe.found, container)
            cause.entries.setdefault(job.entry.name, (job.entry, ref, job.tool))
    for cause in sorted(causes.values(), key=lambda c: min(c.recipes)):
        yield _finding(cause)


def _finding(cause: _Cause) -> Finding:
    paths = sorted(cause.recipes)
    path, container = paths[0], cause.recipes[paths[0]]
    names = sorted(cause.entries)
    tools = sorted({tool for _, _, tool in cause.entries.values()})
    more = f" (and {len(paths) - 1} more recipes)" if len(paths) > 1 else ""
    message = (f"model.container {cause.container}{more} is not the image of {entries_text(names)} "
               f"({cause.image}); {', '.join(tools)} runs the recipe's container")
    related: list[Related] = [Related(p, cause.recipes[p].pos.line, f"also states {cause.container}")
                              for p in paths[1:6]]
    for name in names[:5]:
        entry, ref, _ = cause.entries[name]
        related.append(Related(entry.path, entry.field_pos("image").line, f"{name}: image {cause.image}"))
        related.append(Related(entry.path, ref.pos.line, f"{name}: {ref.setting}={ref.value}"))
    return Finding(ID, CODE, SEVERITY, path, container.pos.line, container.pos.col, message, tuple(related),
                   tuple(names), key=f"{','.join(names)}|{','.join(paths)}")


def same_image(container: str, image: str, aliases: frozenset[str] = frozenset()) -> bool:
    """Whether a recipe's container is the entry's image (see the rule's documentation)."""
    container = container.strip()
    if container in aliases or "$" in container or not any(c in container for c in "/:@#"):
        return True  # an alias the launcher (or the cluster config) maps to its own image file
    a, b = _reference(container), _reference(image.strip())
    if a[:2] != b[:2]:
        return False
    return a[2] is None or b[2] is None or a[2] == b[2]


def _reference(ref: str) -> tuple[str, str, str | None]:
    """(repository, tag, digest) of an image reference, its spelling normalised."""
    for scheme in ("docker://", "docker-daemon://"):
        if ref.startswith(scheme):
            ref = ref[len(scheme):]
    ref = ref.replace("#", "/", 1)
    name, _, digest = ref.partition("@")
    last = name.rsplit("/", 1)[-1]
    repo, tag = (name.rsplit(":", 1) if ":" in last else (name, "latest"))
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if repo.startswith(prefix):
            repo = repo[len(prefix):]
            break
    if repo.startswith("library/"):
        repo = repo[len("library/"):]
    return repo.lower(), tag, digest or None
