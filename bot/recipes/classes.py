"""Which class a canonical serve-argument key belongs to, and what an engine's default for it is.

Classes follow InferenceX's sign-off lists (recipes.md 4.1 rule 5, Check 3(c) "MAJOR SERVER ARGS
MATCH"), in ``bot.recipes.model.CLASSES``:

- ``MAJOR``: parallelism (TP/EP/DP/PP sizes, expert parallel, DP attention), quantization, kv-cache
  dtype, attention / MoE / GEMM / linear backends, allreduce fusion, compilation passes, and
  environment variables that change kernels (``VLLM_*``, ``SGLANG_*``, ``AITER_*``, ...);
- ``MAJOR-spec``: speculative decoding (``speculative_config.*``, ``speculative_*``, the draft model);
- ``tuning``: batch, graph and memory sizes, scheduler intervals;
- ``harness``: host, port, served model name, max model length / context length, prefix or radix
  cache, logging, trust-remote-code;
- ``feature``: tool and reasoning parsers, chat templates, multimodal encoder modes.

How a key is classified (``classify``), first hit wins:

1. ``model`` is MAJOR; ``env.NAME`` goes to :func:`classify_env`;
2. the engine's table in ``tables/classes.json``: the key itself, then each shorter dotted prefix
   (``compilation_config.cudagraph_capture_sizes`` is tuning, any other ``compilation_config.*``
   MAJOR through ``compilation_config``);
3. the name: speculative words (``speculative``, ``draft``, ``mtp``, ``eagle``, ``nextn``) give
   MAJOR-spec; MAJOR words (``backend``, ``quant``, ``parallel``, ``fusion``, ``allreduce``,
   ``expert``, ``moe``, ``gemm``, ``attention``, ``dtype``, ``compile``, a ``tp``/``ep``/``dp``/``pp``
   part...) give MAJOR;
4. anything else is tuning.

Defaults (``defaults_for``) are per engine and version: SGLang 0.5.14's from its ServerArgs fields
(the literal ones), vLLM 0.25.1's a hand-kept list of the arguments whose default is a plain value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from bot.recipes.model import CLASSES


@dataclass(frozen=True)
class Defaults:
    """An engine's defaults for one version: canonical key -> value."""

    engine: str
    version: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Table:
    classes: Mapping[str, Mapping[str, str]]  # engine -> key -> class
    defaults: Mapping[str, Defaults]  # engine -> defaults


@lru_cache(maxsize=1)
def table() -> Table:
    """The shipped table (``bot/recipes/tables/classes.json``), read once."""
    text = resources.files("bot.recipes.tables").joinpath("classes.json").read_text(encoding="utf-8")
    data = json.loads(text)
    classes: dict[str, Mapping[str, str]] = {}
    for engine, by_class in data.get("classes", {}).items():
        keys = {key: klass for klass, names in by_class.items() if klass in CLASSES for key in names}
        classes[engine] = MappingProxyType(keys)
    defaults = {engine: Defaults(engine, str(d.get("version", "")), MappingProxyType(dict(d.get("values", {}))))
                for engine, d in data.get("defaults", {}).items()}
    return Table(MappingProxyType(classes), MappingProxyType(defaults))


_SPEC_WORDS = frozenset({"speculative", "spec", "draft", "mtp", "eagle", "eagle3", "nextn"})
_MAJOR_PARTS = ("backend", "quant", "parallel", "fusion", "fuse", "allreduce", "all_reduce", "all2all", "a2a",
                "expert", "deepep", "moe", "gemm", "kernel", "attention", "attn", "dtype", "compile",
                "compilation", "deep_gemm", "deepgemm", "fp8", "fp4", "nvfp4", "mxfp4", "int4")
_MAJOR_WORDS = frozenset({"tp", "ep", "dp", "pp", "cp", "eplb"})
_WORDS = re.compile(r"[a-z0-9]+")


def _words(key: str) -> set[str]:
    return set(_WORDS.findall(key.lower()))


def by_name(key: str) -> str:
    """The class a name says by itself (rule 3 and 4 above): MAJOR-spec, MAJOR, or tuning."""
    low = key.lower()
    words = _words(low)
    if words & _SPEC_WORDS or low.startswith("speculative"):
        return "MAJOR-spec"
    if words & _MAJOR_WORDS or any(part in low for part in _MAJOR_PARTS):
        return "MAJOR"
    return "tuning"


# Environment variables. Harness: logging, addresses, timeouts, paths, telemetry, device lists.
_ENV_HARNESS_WORDS = frozenset({"log", "logging", "logs", "debug", "verbose", "host", "ip", "port", "timeout",
                                "dir", "path", "root", "usage", "stats", "track", "rpc", "multiproc", "visible",
                                "dev", "profiler", "trace", "key", "offline"})
_ENV_HARNESS_PREFIXES = ("HF_HUB_", "NVIDIA_", "TOKENIZERS_", "PYTHON")
# Libraries whose variables select kernels or code paths: MAJOR unless the name says harness.
_ENV_KERNEL_PREFIXES = ("VLLM_", "SGLANG_", "SGL_", "AITER_", "FLASHINFER_", "TRTLLM_", "TLLM_", "TRT_LLM_",
                        "ATOM_", "DG_", "TRITON_", "TORCHINDUCTOR_")


def classify_env(name: str) -> str:
    """The class of environment variable ``name`` (without the ``env.`` prefix).

    Simulation knobs (synthetic acceptance) -> harness; speculative words -> MAJOR-spec;
    logging, addresses, timeouts, paths, device lists -> harness;
    ``VLLM_*``, ``SGLANG_*`` and other kernel libraries' variables -> MAJOR; other engine variables
    (``NCCL_*``, ``TORCH_*``, ``OMP_*``, ``CUDA_*``...) -> MAJOR when the name says so, else tuning.
    """
    words = _words(name)
    if "simulate" in words:  # SGLANG_SIMULATE_ACC_*: synthetic acceptance, the benchmark's method (policy-judged)
        return "harness"
    if words & _SPEC_WORDS:
        return "MAJOR-spec"
    if words & _ENV_HARNESS_WORDS or name.startswith(_ENV_HARNESS_PREFIXES):
        return "harness"
    if name.startswith(_ENV_KERNEL_PREFIXES):
        return "MAJOR"
    return "MAJOR" if by_name(name) == "MAJOR" else "tuning"


def classify(engine: str, key: str) -> str:
    """The class (one of ``CLASSES``) of canonical key ``key`` of ``engine`` (see the module doc)."""
    if key == "model":
        return "MAJOR"
    if key.startswith("env."):
        return classify_env(key[4:])
    known = table().classes.get(engine, {})
    parts = key.split(".")
    for n in range(len(parts), 0, -1):
        klass = known.get(".".join(parts[:n]))
        if klass is not None:
            return klass
    return by_name(key)


def defaults_for(engine: str) -> Defaults | None:
    """The shipped defaults of ``engine`` (one version each), or None when there are none."""
    return table().defaults.get(engine)


def version_of(text: str | None) -> str | None:
    """``v0.25.1-cu130`` / ``vllm/vllm-openai:v0.25.1`` -> ``0.25.1``; None when no version is in it."""
    if not text:
        return None
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None
