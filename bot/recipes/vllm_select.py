"""Reading a vllm-project/recipes collection and choosing what to render for a query.

The collection is ``models/<hf_org>/<hf_repo>.yaml`` (one file per model), ``strategies/*.yaml``
and ``taxonomy.yaml``. This module finds the model file (directly, or through a variant whose
own ``model_id`` is the query's model: a "promoted variant"), the hardware profile, the variant
and the checks the site makes before rendering (``src/lib/command-synthesis.js``). The argv
itself is composed in ``bot.recipes.vllm_recipe``.

Every reader here raises :class:`Bad` (a message with the path and line) on a file that does
not follow the schema, so the caller can turn it into a ``Miss`` instead of an exception.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from bot.recipes.model import Source
from bot.repo.load.yamlfile import YList, YMap, load, pos_of

MEMO_MAX = 8  # collections (source, revision) kept parsed at once
# The fallbacks InferenceX scripts document ("no B300 recipe: reuse the B200 one"). Not
# gb200 -> b200: an NVL4 tray has 4 GPUs, an HGX node 8, and upstream treats them as different.
FALLBACK = {"b300": "b200", "gb300": "gb200"}
# An entry's precision -> the recipe precisions that serve it, best first, per brand. The recipe
# precisions in use at 8959cf6: bf16 fp8 nvfp4 int4 mxfp4 int8 int2/4/8 mxfp8 fp4.
PRECISIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "nvidia": {"fp4": ("nvfp4", "fp4", "mxfp4"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16"),
               "int4": ("int4", "int2/4/8"), "int8": ("int8", "int2/4/8")},
    "amd": {"fp4": ("mxfp4", "fp4"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16"),
            "int4": ("int4", "int2/4/8"), "int8": ("int8", "int2/4/8")},
}
# Precisions the site only offers on some hardware unless a variant says otherwise
# (``PRECISION_HARDWARE_CONSTRAINTS``; ``precision_hardware`` overrides it).
PRECISION_HW = {"nvfp4": {"brand": "NVIDIA", "generation": "blackwell"},
                "fp4": {"brand": "NVIDIA", "generation": "blackwell"}}


class Bad(Exception):
    """A recipe file that cannot be read as the schema says (the message names path and line)."""


def _line(parent: Any, key: str | int | None) -> int:
    return pos_of(parent, key).line


def fail(path: str, parent: Any, key: str | int | None, what: str) -> Bad:
    """A Bad naming ``path:line`` of ``parent[key]`` (the parent itself when key is None)."""
    return Bad(f"{path}:{_line(parent, key)}: {what}")


def kind(value: Any) -> str:
    """A YAML value's kind, as an author would name it."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else f"a {type(value).__name__}"


def get_map(path: str, parent: Any, key: str, where: str) -> dict[str, Any]:
    """``parent[key]`` as a mapping; absent or null is empty, anything else is Bad."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(path, parent, key, f"{where} must be a mapping, not {kind(value)}")
    return value


def scalar(value: Any, keep_falsy: bool = False) -> str:
    """A YAML scalar as the site's JavaScript would print it. In a command, falsy values
    (null, false, 0, "") become "" and are dropped later, as ``args.filter(Boolean)`` does;
    ``keep_falsy`` (env values) prints them."""
    if value is None or (not value and not keep_falsy):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def get_args(path: str, parent: Any, key: str, where: str) -> list[str]:
    """``parent[key]`` as a list of command words; a nested list or mapping is Bad."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(path, parent, key, f"{where} must be a list of strings, not {kind(value)}")
    for i, item in enumerate(value):
        if isinstance(item, dict | list):
            raise fail(path, value if isinstance(value, YList) else parent, i if isinstance(value, YList) else key,
                       f"{where}[{i}] must be a string, not {kind(item)}")
    return [scalar(v) for v in value]


def get_env(path: str, parent: Any, key: str, where: str) -> dict[str, str]:
    """``parent[key]`` as environment variables (scalar values, printed as the site does)."""
    env = get_map(path, parent, key, where)
    for name, value in env.items():
        if isinstance(value, dict | list):
            raise fail(path, env, name, f"{where}.{name} must be a string, not {kind(value)}")
    return {name: scalar(value, keep_falsy=True) for name, value in env.items()}


def get_str(path: str, parent: Any, key: str, where: str) -> str | None:
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(path, parent, key, f"{where} must be a string, not {kind(value)}")
    return value


@dataclass
class Collection:
    """One collection at one revision: file listing and parsed files, read once."""

    source: Source
    models: dict[str, str] = field(default_factory=dict)  # "org/repo" lowercased -> path
    docs: dict[str, YMap | Bad] = field(default_factory=dict)  # path -> parsed file or why not
    promoted: dict[str, str] | None = None  # a variant's model_id lowercased -> its model file

    def doc(self, path: str) -> YMap:
        """The parsed file (a mapping); Bad when missing, not YAML or not a mapping."""
        if path not in self.docs:
            self.docs[path] = _parse(self.source, path)
        got = self.docs[path]
        if isinstance(got, Bad):
            raise got
        return got

    def model_path(self, model: str) -> tuple[str | None, int]:
        """The model file for an HF id (case-insensitive): its own file, else the file one of
        whose variants serves that id. Also the number of files that could not be read."""
        direct = self.models.get(model.strip().lower())
        if direct is not None:
            return direct, 0
        promoted = self._promoted()
        unread = sum(1 for p in self.models.values() if isinstance(self.docs.get(p), Bad))
        found = promoted.get(model.strip().lower())
        if found is not None:
            return found, unread
        base = base_name(model)
        if base is None:
            return None, unread
        # a quantized checkpoint no variant names ("Qwen/Qwen3.5-397B-A17B-FP8"): the one file
        # serving its base name under any org, where a variant may match by precision
        named = {p for key, p in [*self.models.items(), *promoted.items()] if key.rsplit("/", 1)[-1] == base}
        return (named.pop() if len(named) == 1 else None), unread

    def _promoted(self) -> dict[str, str]:
        if self.promoted is None:
            self.promoted = {}
            for path in self.models.values():
                try:
                    variants = get_map(path, self.doc(path), "variants", "variants")
                except Bad:
                    continue
                for v in variants.values():
                    mid = v.get("model_id") if isinstance(v, dict) else None
                    if isinstance(mid, str):
                        self.promoted.setdefault(mid.strip().lower(), path)
        return self.promoted


# Checkpoint-name tails that say how a model was quantized ("-FP8", "-NVFP4-v2", "-GPTQ-Int4",
# "-FP8-dynamic", ".w8a8"): seen on the variant model_ids of the recipes at 8959cf6.
_QUANT_TAIL = re.compile(r"(?:[-_.](?:nvfp4|mxfp4|mxfp8|fp8|fp4|bf16|fp16|int4|int8|awq|gptq|w4a16|w8a8|w4a8"
                         r"|quantized|dynamic|block|v\d+))+$", re.IGNORECASE)
_QUANT_CORE = re.compile(r"nvfp4|mxfp4|mxfp8|fp8|fp4|bf16|fp16|int4|int8|awq|gptq|w4a16|w8a8|w4a8", re.IGNORECASE)


def base_name(model: str) -> str | None:
    """The repo name of a quantized checkpoint without its quantization tail, lowercased
    ("nvidia/Foo-7B-NVFP4" -> "foo-7b"); None when the name has no such tail."""
    repo = model.strip().rsplit("/", 1)[-1]
    m = _QUANT_TAIL.search(repo)
    if m is None or m.start() == 0 or not _QUANT_CORE.search(m.group()):
        return None
    return repo[:m.start()].lower()


_MEMO: OrderedDict[tuple[str, str], Collection] = OrderedDict()


def collection(source: Source) -> Collection:
    """The collection of a source, memoized per (name, revision); a revision names fixed content."""
    key = (source.name, source.revision)
    got = _MEMO.get(key)
    if got is not None:
        _MEMO.move_to_end(key)
        return got
    coll = Collection(source)
    for path in source.list("models"):
        if path.endswith(".yaml") and path.count("/") == 2:
            coll.models.setdefault(path[len("models/"):-len(".yaml")].lower(), path)
    _MEMO[key] = coll
    while len(_MEMO) > MEMO_MAX:
        _MEMO.popitem(last=False)
    return coll


def _parse(source: Source, path: str) -> YMap | Bad:
    text = source.get(path)
    if text is None:
        return Bad(f"{path}: missing or unreadable")
    doc, err = load(text)
    if err is not None:
        return Bad(f"{path}:{err.line}: YAML error: {err.message}")
    if not isinstance(doc, YMap):
        return Bad(f"{path}:1: not a YAML mapping")
    return doc


def generation(profile: dict[str, Any]) -> str | None:
    """A profile's generation (the first of a list, as ``normalizeGeneration`` does)."""
    gen = profile.get("generation") or profile.get("gpu_generation")
    if isinstance(gen, list):
        gen = gen[0] if gen else None
    return gen if isinstance(gen, str) else None


def brand(profile: dict[str, Any]) -> str:
    b = profile.get("brand")
    return b.lower() if isinstance(b, str) else ""


def hw_keyed(table: Any, profile: dict[str, Any], hw: str) -> Any:
    """A hardware-keyed value: exact GPU id > generation > brand > ``default`` (``hardwareKeyedValue``)."""
    if not isinstance(table, dict):
        return None
    for key in (hw, generation(profile), brand(profile), "default"):
        if key and table.get(key) is not None:
            return table[key]
    return None


def hardware_id(runner: str, profiles: dict[str, Any]) -> str:
    """The taxonomy id for an InferenceX runner type: itself, else its part before '-' or '_'
    (``mi300x-amds`` -> ``mi300x``), else itself (unknown to the taxonomy)."""
    hw = runner.strip().lower()
    if hw in profiles:
        return hw
    head = hw.replace("_", "-").split("-", 1)[0]
    return head if head in profiles else hw


def runs_on(path: str, variants: dict[str, Any], key: str, profile: dict[str, Any], hw: str) -> str | None:
    """Why variant ``key`` cannot render on ``hw`` (None when it can): its ``supported_hardware``
    list, or its precision's hardware constraint (NVFP4 needs Blackwell unless
    ``precision_hardware`` widens it)."""
    variant = variants[key]
    supported = variant.get("supported_hardware")
    if isinstance(supported, list) and supported and hw not in supported:
        return f"variant {key} runs only on {', '.join(map(str, supported))}, not {hw}"
    constraint = variant.get("precision_hardware") or PRECISION_HW.get(str(variant.get("precision")))
    if not isinstance(constraint, dict):
        return None
    want_brand, want_gen = constraint.get("brand"), constraint.get("generation")
    if want_brand and profile.get("brand") != want_brand:
        return f"variant {key} ({variant.get('precision')}) needs {want_brand} hardware, not {hw}"
    gens = profile.get("generation") or profile.get("gpu_generation")
    if want_gen and want_gen not in (gens if isinstance(gens, list) else [gens]):
        return f"variant {key} ({variant.get('precision')}) needs {want_gen} hardware, not {hw}"
    return None


def pick_variant(path: str, doc: YMap, model: str, precision: str, profile: dict[str, Any], hw: str,
                 ) -> tuple[str, str] | str:
    """The variant to render, with why: (key, reason); or a string saying why none can.

    A variant whose served id (its ``model_id``, else the model's) is the query's model wins;
    among several, the one whose precision matches. Else a precision match (the entry's
    precision mapped per brand, see PRECISIONS), the ``default`` variant first; else ``default``."""
    variants = get_map(path, doc, "variants", "variants")
    for key in variants:
        if not isinstance(variants[key], dict):
            raise fail(path, variants, key, f"variants.{key} must be a mapping")
    if "default" not in variants:
        raise fail(path, doc, "variants", "variants has no default variant")
    base = get_str(path, get_map(path, doc, "model", "model"), "model_id", "model.model_id") or ""
    wanted = PRECISIONS.get(brand(profile), {}).get(precision.lower(), (precision.lower(),))

    def served(key: str) -> str:
        return (get_str(path, variants[key], "model_id", f"variants.{key}.model_id") or base).strip()

    def other(key: str) -> str:
        return "" if served(key).lower() == model.strip().lower() else f"; it serves {served(key)}, not {model}"

    def ordered(keys: list[str]) -> list[str]:
        by_prec = [k for p in wanted for k in sorted(keys, key=lambda k: k != "default")
                   if str(variants[k].get("precision", "")).lower() == p]
        return by_prec + [k for k in sorted(keys, key=lambda k: k != "default") if k not in by_prec]

    exact = [k for k in variants if served(k).lower() == model.strip().lower()]
    if exact:
        runnable = [k for k in ordered(exact) if runs_on(path, variants, k, profile, hw) is None]
        if not runnable:
            return runs_on(path, variants, ordered(exact)[0], profile, hw) or f"no variant runs on {hw}"
        key = runnable[0]
        prec = str(variants[key].get("precision"))
        note = "" if prec.lower() in wanted else f"; its precision {prec} is not the entry's {precision}"
        return key, f"serves {model}{note}"
    fitting = [k for k in variants if runs_on(path, variants, k, profile, hw) is None]
    for key in ordered(fitting):
        prec = str(variants[key].get("precision", "")).lower()
        if prec in wanted:
            how = "" if prec == precision.lower() else f" -> {prec}"
            return key, f"by precision {precision}{how} on {brand(profile) or hw}{other(key)}"
    if "default" in fitting:
        prec = variants["default"].get("precision")
        return "default", f"no {precision} variant; the default is {prec}{other('default')}"
    return runs_on(path, variants, "default", profile, hw) or f"no variant runs on {hw}"
