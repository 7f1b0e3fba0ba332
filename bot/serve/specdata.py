"""Speculative-decoding facts shipped as data: method names per engine and version
(``tables/spec_methods.json``) and native MTP layers per model (``tables/models.json``).

Each table names the file it was read from (a path in the engine's repository at a tag, a
model card); the rules quote it. Nothing here judges: the lookups say what a table says.

Versions. ``version_of(engine, image)`` reads the engine's version from the image tag
(``vllm/vllm-openai:v0.14.1``, ``lmsysorg/sglang:v0.5.9-rocm700-mi30x``,
``nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24``), only when the image's repository is the
engine's own (a vLLM server inside an ATOM image says nothing about vLLM's version). A version
between two tables is judged by both neighbours: a name either of them knows is known, a
requirement counts only when both have it (a name added or dropped in between is never
reported). A version older than every table is judged by the oldest one; a newer one, or an
image whose tag names no version (``nightly-<sha>``, a custom build), by the newest one (its
config keys and values by every table: a nightly may predate a key's removal).

Names. vLLM compares method names exactly (a pydantic ``Literal``); SGLang in upper case (it
upper-cases ``--speculative-algorithm``); TRT-LLM loosely (case, ``_`` and ``-`` ignored),
because its ``decoding_type`` aliases (``DraftTarget`` for ``Draft_Target``) are resolved
before validation and were not all read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

_TABLES = "bot.serve.tables"

# the image repository that ships each engine (``ghcr.io#org/trtllm-x`` counts for TRT-LLM)
_IMAGE_REPO = {"vllm": ("vllm",), "sglang": ("sglang",), "trtllm": ("tensorrt-llm", "tensorrt_llm", "trtllm")}
# a version in a tag: after the start, ``v``, ``-`` or ``_`` (not ``cu13.0.1``, ``py3.12``, ``rocm7.2``)
_VERSION = re.compile(r"(?:^|(?<=[-_v]))(\d+)\.(\d+)(?:\.(\d+))?(?:(rc|\.post|post)(\d+))?(?=$|[-_+.@])")


@dataclass(frozen=True)
class MethodTable:
    """What one engine version accepts, as read from ``source``."""

    engine: str
    version: str
    source: str
    methods: frozenset[str]  # as the engine spells them (compared per ``match``)
    aliases: Mapping[str, str]  # deprecated or alternative name -> the method it stands for
    keys: frozenset[str]  # vLLM: the SpeculativeConfig fields (empty: keys are not checked)
    values: Mapping[str, frozenset[str]]  # vLLM: key -> the values its Literal allows
    needs_model: frozenset[str]  # methods the engine refuses (or misreads) without a draft model
    needs_tokens: frozenset[str]  # TRT-LLM: decoding types that need max_draft_len
    tokens_default: frozenset[str]  # vLLM: methods whose token count has a default without a draft
    eagle_family: frozenset[str]  # SGLang: the algorithms whose draft tokens are steps + 1 at topk 1


@dataclass(frozen=True)
class EngineMethods:
    """The tables that judge one (engine, image): one, or the two around the image's version."""

    engine: str
    name: str  # vLLM, SGLang, TRT-LLM
    match: str  # exact | upper | loose
    tables: tuple[MethodTable, ...]
    version: str | None  # read from the image tag; None: the tag names none
    basis: str  # how the tables were chosen, for messages
    # the tables that judge config keys and values: ``tables``, or every table when the tag names
    # no version (keys come and go; a key of an older release in a nightly is not reported)
    key_tables: tuple[MethodTable, ...] = ()

    def _norm(self, name: str) -> str:
        if self.match == "upper":
            return name.upper()
        if self.match == "loose":
            return name.lower().replace("_", "").replace("-", "")
        return name

    def _has(self, names: Iterable[str], name: str) -> bool:
        want = self._norm(name)
        return any(self._norm(n) == want for n in names)

    def known(self, method: str) -> bool:
        return any(self._has(t.methods, method) for t in self.tables)

    def canonical(self, method: str) -> str:
        """The method an alias stands for (``deepseek_mtp`` -> ``mtp``, ``NEXTN`` -> ``EAGLE``)."""
        for t in self.tables:
            for alias, target in t.aliases.items():
                if self._norm(alias) == self._norm(method):
                    return target
        return method

    def needs_model(self, method: str) -> bool:
        return all(self._has(t.needs_model, method) for t in self.tables)

    def needs_tokens(self, method: str) -> bool:
        return all(self._has(t.needs_tokens, method) for t in self.tables)

    def tokens_default(self, method: str) -> bool:
        return any(self._has(t.tokens_default, method) for t in self.tables)

    def eagle_family(self, method: str) -> bool:
        return all(self._has(t.eagle_family, method) for t in self.tables)

    def unknown_keys(self, keys: Iterable[str]) -> list[str]:
        """Keys no table allows (empty when the tables do not list keys)."""
        judges = self.key_tables or self.tables
        if not all(t.keys for t in judges):
            return []
        return [k for k in keys if not any(k in t.keys for t in judges)]

    def bad_value(self, key: str, value: str) -> tuple[str, ...] | None:
        """The allowed values when no table allows ``value`` for ``key`` (None: allowed or unchecked)."""
        judges = self.key_tables or self.tables
        if not all(key in t.values for t in judges):
            return None
        if any(value in t.values[key] for t in judges):
            return None
        return tuple(sorted({v for t in judges for v in t.values[key]}))

    def methods_text(self, limit: int = 16) -> str:
        """The methods the tables know, deprecated aliases left out (``mtp, eagle, eagle3, ...``)."""
        seen: dict[str, str] = {}
        for t in self.tables:
            for m in sorted(t.methods):
                if self.match == "exact" and m in t.aliases:
                    continue
                seen.setdefault(self._norm(m), m)
        names = sorted(seen.values())
        more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
        return ", ".join(names[:limit]) + more

    @property
    def sources(self) -> str:
        return "; ".join(f"{t.source} ({self.repo_of(t)})" for t in self.tables)

    @staticmethod
    def repo_of(table: MethodTable) -> str:
        return str(_engine_data(table.engine).get("repo", ""))


@dataclass(frozen=True)
class ModelFact:
    """Native MTP layers of the models matching ``match`` (and none of ``exclude``)."""

    name: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    mtp_layers: int
    source: str

    def matches(self, model: str) -> bool:
        low = model.lower()
        return (any(fnmatchcase(low, p.lower()) for p in self.match)
                and not any(fnmatchcase(low, p.lower()) for p in self.exclude))


def _load(name: str) -> dict[str, Any]:
    text = resources.files(_TABLES).joinpath(name).read_text(encoding="utf-8")
    data = json.loads(text)
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def _methods_data() -> Mapping[str, Any]:
    return MappingProxyType(_load("spec_methods.json"))


def _engine_data(engine: str) -> Mapping[str, Any]:
    got = _methods_data().get(engine)
    return got if isinstance(got, dict) else {}


def _strs(value: Any) -> frozenset[str]:
    return frozenset(str(v) for v in value) if isinstance(value, list) else frozenset()


@lru_cache(maxsize=8)
def tables(engine: str) -> tuple[MethodTable, ...]:
    """The tables of ``engine``, oldest first (empty for an engine without data, such as ATOM)."""
    out = []
    for t in _engine_data(engine).get("tables", ()):
        values = {str(k): _strs(v) for k, v in (t.get("values") or {}).items()}
        out.append(MethodTable(
            engine=engine, version=str(t.get("version", "")), source=str(t.get("source", "")),
            methods=_strs(t.get("methods")), aliases=MappingProxyType(dict(t.get("aliases") or {})),
            keys=_strs(t.get("keys")), values=MappingProxyType(values), needs_model=_strs(t.get("needs_model")),
            needs_tokens=_strs(t.get("needs_tokens")), tokens_default=_strs(t.get("tokens_default")),
            eagle_family=_strs(t.get("eagle_family"))))
    return tuple(sorted(out, key=lambda t: version_key(t.version) or ()))


def version_key(text: str) -> tuple[int, ...] | None:
    """``0.25.1`` -> (0, 25, 1, 1, 0); ``1.3.0rc24`` -> (1, 3, 0, 0, 24); ``0.5.12.post1`` -> (0, 5, 12, 2, 1)."""
    m = _VERSION.search(text)
    if m is None:
        return None
    major, minor, patch, stage, n = m.groups()
    rank = 1 if stage is None else 0 if stage == "rc" else 2
    return int(major), int(minor), int(patch or 0), rank, int(n or 0)


def version_of(engine: str, image: str | None) -> str | None:
    """The engine version an image's tag names, when the image is the engine's own."""
    if not image or engine not in _IMAGE_REPO:
        return None
    ref = image.split("@", 1)[0]
    repo, sep, tag = ref.rpartition(":")
    if not sep or "/" in tag:
        return None
    if not any(word in repo.lower() for word in _IMAGE_REPO[engine]):
        return None
    m = _VERSION.search(tag)
    return m.group(0).lstrip("v") if m is not None else None


def methods_for(engine: str, image: str | None) -> EngineMethods | None:
    """The tables that judge ``engine`` in ``image`` (None: no data for the engine)."""
    known = tables(engine)
    if not known:
        return None
    data = _engine_data(engine)
    name, match = str(data.get("name", engine)), str(data.get("match", "exact"))
    version = version_of(engine, image)
    key = version_key(version) if version else None
    if key is None:
        newest = known[-1]
        why = f"the image tag names no {name} version" if image else "the entry names no image"
        return EngineMethods(engine, name, match, (newest,), None, f"{name} {newest.version}, the newest table ({why})",
                             key_tables=known)
    below = [t for t in known if (version_key(t.version) or ()) <= key]
    above = [t for t in known if (version_key(t.version) or ()) >= key]
    chosen: list[MethodTable] = []
    if below:
        chosen.append(below[-1])
    if above and above[0] not in chosen:
        chosen.append(above[0])
    if len(chosen) == 1 and chosen[0].version == version:
        basis = f"{name} {version}"
    elif len(chosen) == 2:
        basis = f"{name} {version} (the tables of {chosen[0].version} and {chosen[1].version})"
    else:
        basis = f"{name} {version} (the table of {chosen[0].version})"
    return EngineMethods(engine, name, match, tuple(chosen), version, basis)


@lru_cache(maxsize=1)
def models() -> tuple[ModelFact, ...]:
    out = []
    for m in _load("models.json").get("models", ()):
        layers = m.get("mtp_layers")
        if not isinstance(layers, int) or isinstance(layers, bool):
            continue
        out.append(ModelFact(str(m.get("name", "")), tuple(str(p) for p in m.get("match", ())),
                             tuple(str(p) for p in m.get("except", ())), layers, str(m.get("source", ""))))
    return tuple(out)


def native_mtp(model: str) -> ModelFact | None:
    """The shipped fact for ``model`` (the first whose globs match), or None."""
    return next((m for m in models() if m.matches(model)), None)
