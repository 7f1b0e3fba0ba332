"""The serve model's records: what a server or a benchmark client is started with.

Facts only. The evaluator hands ``bot.serve.normalize`` a command as tokens (its words,
each with the file:line it came from) and the files the script wrote; the normalizer
returns a :class:`Command` with the engine's own canonical names. Nothing here judges.

Unknown text: a token or a file may contain parts the repository cannot know (``$(nproc)``,
the output of ``hf download``). Those parts are replaced by :data:`MARK`; a value that
contains it is unknown, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MARK = "\u27e8?\u27e9"  # stands for text the repository cannot know ("⟨?⟩")

ENGINES = ("vllm", "sglang", "trtllm", "atom")


@dataclass(frozen=True)
class Tok:
    """One word of a command line after expansion and field splitting."""

    text: str  # unknown parts are MARK
    src: str  # "path:line" of the word (or of the array element / variable it came from)

    @property
    def known(self) -> bool:
        return MARK not in self.text


@dataclass(frozen=True)
class File:
    """A file the script wrote before the command (``cat > F <<EOF``, ``echo ... >> F``)."""

    path: str
    text: str  # unknown parts are MARK
    src: str  # "path:line" of the (first) write


# Keys of ``Spec``, the same for every engine (None when the command does not say).
SPEC_KEYS = (
    "method",  # the engine's own canonical method (vLLM "mtp"/"eagle3", SGLang "EAGLE", TRT-LLM "MTP")
    "kind",  # engine-neutral: "mtp" (native heads), "eagle", "eagle3", "dspark", "draft_model", "ngram", ...
    "num_speculative_tokens",  # tokens drafted per step (vLLM tokens, SGLang steps, TRT-LLM layers/max_draft_len)
    "num_steps",  # SGLang speculative_num_steps
    "eagle_topk",  # SGLang speculative_eagle_topk
    "num_draft_tokens",  # SGLang speculative_num_draft_tokens
    "draft_model",  # draft checkpoint (external drafts)
    "rejection_sample_method",  # vLLM: standard | synthetic | block
    "synthetic_acceptance_rate",
    "synthetic_acceptance_length",
    "draft_sample_method",
)


@dataclass(frozen=True)
class Command:
    """One normalized server (or client) command."""

    engine: str  # vllm | sglang | trtllm | atom | client
    model: str | None  # None: not given or unknown
    argv: tuple[str, ...]  # the words as evaluated (unknown parts MARK)
    args: Mapping[str, Any]  # canonical name -> value (JSON scalars, dicts for JSON/YAML configs)
    sources: Mapping[str, str]  # canonical name -> "path:line"
    env: Mapping[str, str] = field(default_factory=dict)  # what reaches the process
    spec: Mapping[str, Any] | None = None  # SPEC_KEYS -> value, None when speculative decoding is off
    unknown: tuple[str, ...] = ()  # what could not be read, one reason each
    notes: tuple[str, ...] = ()  # alias resolutions and other facts worth showing


# Environment variables that configure an engine or its libraries (what ``Command.env``
# keeps of the environment that reaches a server, and what ``unexported`` reports).
ENGINE_ENV_PREFIXES = (
    "VLLM_", "SGLANG_", "SGL_", "TRTLLM_", "TLLM_", "TRT_LLM_", "ATOM_", "AITER_", "NCCL_", "RCCL_", "TORCH_",
    "PYTORCH_", "CUDA_", "HIP_", "ROCM_", "HSA_", "MIOPEN_", "NVSHMEM_", "UCX_", "FLASHINFER_", "TRITON_",
    "DG_", "MC_", "MORI_", "OMP_", "TOKENIZERS_", "HF_HUB_", "NVIDIA_", "DYN_", "MOONCAKE_", "NIXL_",
    "LMCACHE_", "TORCHINDUCTOR_", "AMD_", "PYTHONNOUSERSITE",
)


def engine_env(name: str) -> bool:
    """Whether an environment variable configures an engine (``VLLM_USE_DEEP_GEMM``)."""
    return name.startswith(ENGINE_ENV_PREFIXES)


# What ``unexported`` reports: variables an engine or its libraries read from the
# environment. Narrower than ``ENGINE_ENV_PREFIXES``: scripts keep their own values in
# variables such as ``CUDA_GRAPH_MAX_BATCH_SIZE`` that are flags, not environment.
UNEXPORTED_PREFIXES = (
    "VLLM_", "SGLANG_", "SGL_", "TRTLLM_", "TLLM_", "TRT_LLM_", "ATOM_", "AITER_", "NCCL_", "RCCL_", "TORCH_",
    "PYTORCH_", "HIP_", "ROCM_", "HSA_", "FLASHINFER_", "NVSHMEM_", "UCX_", "MORI_", "MC_", "DG_", "TORCHINDUCTOR_",
)
UNEXPORTED_NAMES = frozenset({"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                              "PYTHONNOUSERSITE", "OMP_NUM_THREADS"})


def engine_env_var(name: str) -> bool:
    """Whether a variable set without ``export`` looks like one an engine reads."""
    return name.startswith(UNEXPORTED_PREFIXES) or name in UNEXPORTED_NAMES
