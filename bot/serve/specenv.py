"""Environment variables an engine reads for speculative decoding (the shipped table
``bot/serve/tables/spec_env.json``, each variable with the engine source that reads it).

``spec_var(engine, name)`` is the variable's record, or None when the engine is not known
to read it for speculation (a script's own ``SGLANG_BACKEND_PORT`` is not). ``version_of``
reads an engine version from an image tag (``lmsysorg/sglang:v0.5.15.post1-cu130`` ->
(0, 5, 15)) when the image is the engine's. Facts only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

_VERSION = re.compile(r"(?<![0-9.])v?(\d+)\.(\d+)\.(\d+)(?![0-9])")
_IMAGE_WORDS = {"sglang": ("sglang",), "vllm": ("vllm",), "trtllm": ("tensorrt-llm", "tensorrt_llm", "trtllm")}


@dataclass(frozen=True)
class SpecVar:
    name: str
    engine: str  # vllm | sglang | trtllm | atom
    effect: str  # what the server does with it
    missing: str  # what a run does when its server never sees it (a verb phrase)
    noop_from: tuple[int, ...] | None  # the engine version from which it has no effect
    source: str  # where the engine reads it


@lru_cache(maxsize=1)
def table() -> Mapping[str, Mapping[str, SpecVar]]:
    """Engine -> variable name -> record."""
    text = resources.files("bot.serve.tables").joinpath("spec_env.json").read_text(encoding="utf-8")
    data = json.loads(text)
    out: dict[str, Mapping[str, SpecVar]] = {}
    for engine, rows in data.get("engines", {}).items():
        found: dict[str, SpecVar] = {}
        for row in rows:
            noop = row.get("noop_from")
            found[row["name"]] = SpecVar(row["name"], engine, row["effect"], row["missing"],
                                         _parse(noop) if isinstance(noop, str) else None, row["source"])
        out[engine] = MappingProxyType(found)
    return MappingProxyType(out)


def spec_var(engine: str, name: str) -> SpecVar | None:
    return table().get(engine, {}).get(name)


def _parse(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def version_of(image: str, engine: str) -> tuple[int, ...] | None:
    """The engine version an image's tag names: its first ``X.Y.Z``, only when the image's
    repository is the engine's (``lmsysorg/sglang-rocm:v0.5.14-rocm720`` -> (0, 5, 14);
    ``rocm/atom:rocm7.2.3_...`` names a ROCm version, not ATOM's: None)."""
    repo, _, tag = image.split("@", 1)[0].rpartition("/")[2].partition(":")
    if not any(word in repo.lower() for word in _IMAGE_WORDS.get(engine, (engine,))):
        return None
    m = _VERSION.search(tag)
    return tuple(int(g) for g in m.groups()) if m else None


def text_of(version: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version)
