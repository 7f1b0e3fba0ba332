"""The records recipe parity passes around (no behaviour beyond the ``Source`` protocol).

- ``Source``: one upstream recipe collection at one revision (a local checkout or the GitHub
  contents API, cached): ``get(path) -> text``, ``list(prefix) -> paths``, ``revision``.
- ``Query``: what an entry asks of a recipe (engine, model, hardware, precision, parallelism,
  speculative decoding, nodes).
- ``Rendered``: one recipe rendered for a query: the serve arguments after the launch words,
  the env, and where it came from (``Provenance``). ``Miss``: why there is none.
- ``Difference``: one key of the normalized commands, classified, with its status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

KINDS = ("vllm", "sglang")  # vllm: vllm-project/recipes; sglang: the SGLang cookbook configs
CLASSES = ("MAJOR", "MAJOR-spec", "tuning", "harness", "feature")
STATUSES = ("match", "value-differs", "missing-in-script", "extra-in-script", "default-equivalent")


class Source(Protocol):
    """One recipe collection at one revision. Paths are relative to the collection's root
    (the repository root: ``models/zai-org/GLM-5.yaml``,
    ``docs_new/src/snippets/configs/qwen/qwen3.5.jsx``)."""

    kind: str  # "vllm" | "sglang"
    name: str  # what the provenance names: "vllm-project/recipes", "/path/to/checkout"

    @property
    def revision(self) -> str:
        """A commit SHA when known, else "local:" plus a content digest."""
        ...

    def get(self, path: str) -> str | None:
        """The file's text; None when it does not exist."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Every file path under ``prefix`` (a folder, no trailing slash needed), sorted."""
        ...


@dataclass(frozen=True)
class Query:
    engine: str  # "vllm" | "sglang"
    model: str  # the entry's ``model`` (an HF id, e.g. "Qwen/Qwen3.5-397B-A17B-FP8")
    hardware: str  # the entry's runner type: "b200", "h200", "mi355x", "gb200", "b300"...
    precision: str  # the entry's ``precision``: "fp4", "fp8", "bf16", "int4", "mxfp4"...
    tp: int = 1
    ep: int = 1
    dp_attn: bool = False
    spec: str = "none"  # the point's ``spec-decoding``: "none", "mtp", "eagle3", "dspark"...
    nodes: int = 1


@dataclass(frozen=True)
class Provenance:
    source: str  # Source.name
    revision: str  # Source.revision
    path: str  # the recipe file read
    selection: tuple[tuple[str, str], ...]  # what was chosen: hardware, variant, strategy, features / match keys
    fallback: str | None = None  # "b300 -> b200" when another hardware's recipe was used


@dataclass(frozen=True)
class Rendered:
    engine: str  # "vllm" | "sglang"
    argv: tuple[str, ...]  # the serve arguments after the launch words; vLLM: the model first
    env: tuple[tuple[str, str], ...]
    provenance: Provenance
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Miss:
    """No recipe for the query: said as information, never an error."""

    reason: str  # "no vLLM recipe for model X", "the recipe has no b300 rendering"...
    path: str | None = None  # the recipe file looked at, when one was


@dataclass(frozen=True)
class Difference:
    key: str  # canonical dotted key: "tensor_parallel_size", "speculative_config.method", "env.VLLM_X"
    klass: str  # one of CLASSES
    status: str  # one of STATUSES
    recipe: Any = None  # the recipe's value (None: absent)
    script: Any = None  # the script's value (None: absent)
    where: str | None = None  # "path:line" in the script, when the script has the key
    notes: tuple[str, ...] = field(default=())


class SourceUnavailable(Exception):
    """A source that cannot be read now; ``reason`` says why, for a note."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
