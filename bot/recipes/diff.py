"""The normalized difference between a script's serve command and a recipe's (recipes.md 4.1).

``recipe_command(r)`` puts a rendered recipe through the same normalizer as the script
(``bot.serve.normalize``), so both sides use the engine's canonical names. ``diff(script, recipe)``
then compares them key by key and returns one :class:`~bot.recipes.model.Difference` per key.

What both sides become before they are compared:

- every dict value (JSON flags, ``--X.a.b`` dotted flags, ``--config`` YAML) is flattened into dotted
  leaf keys: ``speculative_config.method``, ``compilation_config.pass_config.fuse_allreduce_rms``;
  a string holding a JSON object is parsed first;
- scalars are coerced: ``"0.8"`` -> 0.8, ``"true"`` -> True, ``"8"`` -> 8 (a bool equals only a bool;
  a one-element list equals its element);
- what the normalizers leave as spelled is canonicalized here (recipes.md 4.2 / 4.3):
  vLLM ``attention_backend`` -> ``attention_config.backend`` (uppercased), ``moe_backend`` /
  ``linear_backend`` -> ``kernel_config.*`` (lowercased, ``-`` -> ``_``), ``enable_flashinfer_autotune``
  -> ``kernel_config.*``, ``cudagraph_capture_sizes`` / ``max_cudagraph_capture_size`` ->
  ``compilation_config.*``, a ``*_mtp`` speculative method -> ``mtp``, kv-cache dtype ``fp8`` ->
  ``fp8_e4m3``; SGLang speculative algorithm ``NEXTN`` -> ``EAGLE``. Alias folding (``-tp``,
  ``--tp``, underscores, deprecated SGLang aliases), dotted-flag merging, ``--config`` files and
  SGLang's uppercasing are the normalizers' work and are not repeated here;
- the model is the key ``model``; the engine's own model argument (SGLang ``model_path``) is not
  compared again;
- environment variables are compared only when an engine or its libraries read them
  (``bot.serve.model.engine_env`` / ``engine_env_var``), as ``env.NAME``.

Statuses: ``match`` (left out unless ``include_matches``), ``value-differs``, ``missing-in-script``,
``extra-in-script``, ``default-equivalent`` (one side gives the engine default and the other leaves
the key out; only when the shipped defaults are for the engine version compared, or no version is
given; the note names the table used).

Values not known statically (MARK in the script's words, or None where the normalizer recorded an
unknown value) are never a ``value-differs``: when both sides have the key the status is ``match``
(nothing known differs) with the note "script value not known statically", and such a pair is
listed even without ``include_matches`` (it is not known to match either). The script's value is
shown as MARK. A recipe key under a script value that is wholly unknown (``--speculative-config
"$SPEC"``) is treated the same way. Presence stays known: a key only one side has is still missing
or extra, with the note when its value is unknown.

``where`` is the script's source of the key (``Command.sources`` of its top-level name; for a
moved vLLM key, of the flag the script wrote). Notes: the canonicalizations made here and the
normalizer's notes that name the key or its flag (deprecated spellings, a flag given twice, the
command line overriding ``--config``), each prefixed with its side (``script: ``, ``recipe: ``).

Order: MAJOR, MAJOR-spec, tuning, harness, feature; by key within a class.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.recipes.classes import classify, defaults_for, version_of
from bot.recipes.model import CLASSES, Difference, Rendered
from bot.serve.argv import has_mark, scalar
from bot.serve.model import MARK, Command, Tok, engine_env, engine_env_var
from bot.serve.normalize import normalize

UNKNOWN_NOTE = "script value not known statically"
RECIPE_UNKNOWN_NOTE = "recipe value not known statically"
OPAQUE_NOTE = "the script has words not known statically; it may set this"

# vLLM arguments that are applied under another key (recipes.md 4.2, arg_utils.py).
_VLLM_MOVES = {
    "attention_backend": "attention_config.backend",
    "moe_backend": "kernel_config.moe_backend",
    "linear_backend": "kernel_config.linear_backend",
    "enable_flashinfer_autotune": "kernel_config.enable_flashinfer_autotune",
    "cudagraph_capture_sizes": "compilation_config.cudagraph_capture_sizes",
    "max_cudagraph_capture_size": "compilation_config.max_cudagraph_capture_size",
}
_MODEL_ARGS = frozenset({"model", "model_path"})  # compared as the key "model"
_ALIAS_NOTE = re.compile(r"^\S+ -> --[\w-]+ \(")  # "-tp -> --tensor-parallel-size (vLLM short alias)"
_UNKNOWN_REASON = re.compile(r"^(.+?): (?:value unknown|a key is unknown|merged into a value that is unknown)")


def recipe_command(r: Rendered) -> Command:
    """The recipe's serve arguments normalized like a script's (every word sourced at the recipe file)."""
    toks = [Tok(word, f"{r.provenance.path}") for word in r.argv]
    return normalize(r.engine, toks, None, dict(r.env))


@dataclass(frozen=True)
class _Leaf:
    value: Any  # canonical value; MARK when not known
    top: str  # the command's own top-level name (its key in Command.sources)
    known: bool = True
    notes: tuple[str, ...] = ()


# --- values -------------------------------------------------------------------------------------------------


def coerce(value: Any) -> Any:
    """Scalar text as the value it spells: ``"0.8"`` -> 0.8, ``"true"`` -> True, ``"8"`` -> 8."""
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        return scalar(value.strip())
    if isinstance(value, list):
        return [coerce(v) for v in value]
    if isinstance(value, dict):
        return {k: coerce(v) for k, v in value.items()}
    return value


def flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """Dotted leaf keys of ``value`` under ``prefix`` (a JSON-object string is parsed first)."""
    if isinstance(value, str) and value.lstrip().startswith("{") and MARK not in value:
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            value = parsed
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from flatten(v, f"{prefix}.{k}")
    else:
        yield prefix, value


def same(a: Any, b: Any) -> bool:
    """Equal after coercion: bools only equal bools, numbers compare by value, ``[x]`` equals ``x``."""
    if isinstance(a, list) and len(a) == 1 and not isinstance(b, list):
        a = a[0]
    if isinstance(b, list) and len(b) == 1 and not isinstance(a, list):
        b = b[0]
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def canonical(engine: str, key: str, value: Any) -> tuple[Any, str | None]:
    """Enum values the normalizers keep as spelled, in the engine's canonical form (and a note when changed)."""
    if not isinstance(value, str):
        return value, None
    new = value
    if engine == "vllm":
        if key == "attention_config.backend":
            new = value.upper()
        elif key in ("kernel_config.moe_backend", "kernel_config.linear_backend"):
            new = value.lower().replace("-", "_")
        elif key == "speculative_config.method" and value.lower().endswith("_mtp"):
            return "mtp", f"speculative method {value!r} is the deprecated alias of 'mtp' (vllm/config/speculative.py)"
        elif key == "kv_cache_dtype" and value == "fp8":
            return "fp8_e4m3", "kv_cache_dtype 'fp8' is fp8_e4m3 on CUDA/ROCm (vllm/config/cache.py:78)"
    elif engine == "sglang" and key == "speculative_algorithm":
        new = value.upper()
        if new == "NEXTN":
            new = "EAGLE"  # the normalizer notes it (speculative_hook.py:42-50)
    return new, None


# --- one command's leaves ------------------------------------------------------------------------------------


def _unknown_names(cmd: Command) -> set[str]:
    """The (dotted) names the normalizer recorded as unknown (MARK) in ``Command.unknown``."""
    names: set[str] = set()
    for reason in cmd.unknown:
        m = _UNKNOWN_REASON.match(reason)
        if m and MARK in reason:
            names.update(n.strip() for n in m.group(1).split(", "))
    return names


def _has_none(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_none(v) for v in value)
    return value is None


def _is_unknown(value: Any, top: str, key: str, names: set[str]) -> bool:
    if has_mark(value):
        return True
    return _has_none(value) and any(n in (top, key) or n.startswith((key + ".", key + "[")) for n in names)


def _opaque(cmd: Command) -> bool:
    """Whether part of the command's words (or its ``--config`` file) could not be read at all."""
    return any("unknown words" in r or r.startswith("--config") for r in cmd.unknown)


def _said(cmd: Command, side: str, name: str) -> tuple[str, ...]:
    """The normalizer's notes that name ``name`` or its flag (``--name-with-dashes``), for one side; plain
    alias resolutions (``-tp -> --tensor-parallel-size``) are left out: they change nothing."""
    spelled = re.compile(rf"(?<![\w.-])(?:{re.escape(name)}|--{re.escape(name.replace('_', '-'))})(?![\w-])")
    return tuple(f"{side}: {n}" for n in cmd.notes if spelled.search(n) and not _ALIAS_NOTE.match(n))


def _leaves(cmd: Command, side: str) -> dict[str, _Leaf]:
    names = _unknown_names(cmd)
    out: dict[str, _Leaf] = {}
    for top, value in cmd.args.items():
        if top in _MODEL_ARGS:
            continue
        base = _VLLM_MOVES.get(top, top) if cmd.engine == "vllm" else top
        said = _said(cmd, side, top)
        moved = None
        if base != top and not any(base in n for n in said):
            moved = f"{side}: --{top.replace('_', '-')} is {base} (recipes.md 4.2)"
        for key, raw in flatten(value, base):
            if _is_unknown(raw, top, key, names):
                out[key] = _Leaf(MARK, top, known=False)
                continue
            v, note = canonical(cmd.engine, key, coerce(raw))
            notes = tuple(n for n in (moved, f"{side}: {note}" if note else None) if n) + said
            out[key] = _Leaf(v, top, True, notes)
    for name, text in cmd.env.items():
        if engine_env(name) or engine_env_var(name):
            said = _said(cmd, side, name)
            out["env." + name] = _Leaf(text.strip() if MARK not in text else MARK, "env." + name,
                                       MARK not in text, said)
    return out


def _cover(leaves: Mapping[str, _Leaf], key: str) -> _Leaf | None:
    """The unknown value at a prefix of ``key`` that stands for it (``speculative_config`` for ``.method``)."""
    parts = key.split(".")
    for n in range(len(parts) - 1, 0, -1):
        leaf = leaves.get(".".join(parts[:n]))
        if leaf is not None and not leaf.known:
            return leaf
    return None


# Defaults no engine version has moved: a parallel size of 1, the parallel modes off. A script
# spelling ``--ep 1`` says what every version does without it.
STABLE_DEFAULTS = frozenset({
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel",
    "tp_size", "pp_size", "dp_size", "ep_size", "enable_dp_attention", "moe_dp_size", "attn_cp_size",
    "decode_context_parallel_size", "prefill_context_parallel_size",
    "kernel_config.moe_backend",  # auto: the engine picks
})


# --- the comparison ------------------------------------------------------------------------------------------


def _default(engine: str, key: str, value: Any, engine_version: str | None) -> tuple[bool, str | None]:
    """Whether ``value`` is the engine's default for ``key`` at ``engine_version``, and the note to show."""
    table = defaults_for(engine)
    if table is None or key not in table.values or not same(value, table.values[key]):
        return False, None
    used = f"defaults table used: {engine} {table.version}"
    want = version_of(engine_version)
    if want is None:
        return True, f"{value!r} is the {engine} default ({used}; the engine version was not given)"
    if want == table.version:
        return True, f"{value!r} is the {engine} {want} default ({used})"
    if key in STABLE_DEFAULTS:
        return True, f"{value!r} is the {engine} default (in every version: one GPU per parallel dimension, off)"
    return False, f"{value!r} is the {engine} {table.version} default, but the engine is {want}, whose default " \
                  "is not known here"


def _model_notes(script: str, recipe: str) -> list[str]:
    if script.lower() == recipe.lower():
        return ["differs only in letter case"]
    name = recipe.rstrip("/").split("/")[-1].lower()
    if script.startswith(("/", "./", "../", "~")) or script.count("/") > 1:
        cached = re.search(r"models--([^/]+?)--([^/]+)", script)
        if cached and f"{cached.group(1)}/{cached.group(2)}".lower() == recipe.lower():
            return [f"local path: the Hugging Face cache of {recipe}"]
        if posixpath.basename(script.rstrip("/")).lower() == name:
            return [f"local path: its name is the recipe checkpoint's ({name}); which weights it holds is not "
                    "known statically"]
        return ["local path"]
    if script.rstrip("/").split("/")[-1].lower() == name:
        return ["same checkpoint name, another organization"]
    return []


def _model(script: Command, recipe: Command) -> Difference | None:
    where = script.sources.get("model")
    s, r = script.model, recipe.model
    s_unknown = s is None and "model" in script.sources
    if s is None and r is None and not s_unknown:
        return None
    if s_unknown:
        status = "match" if r is not None else "extra-in-script"
        return Difference("model", "MAJOR", status, r, MARK, where, (UNKNOWN_NOTE,))
    if s is None:
        return Difference("model", "MAJOR", "missing-in-script", r, None, None)
    if r is None:
        return Difference("model", "MAJOR", "extra-in-script", None, s, where)
    if s == r:
        return Difference("model", "MAJOR", "match", r, s, where)
    return Difference("model", "MAJOR", "value-differs", r, s, where, tuple(_model_notes(s, r)))


def _one(engine: str, key: str, sl: _Leaf | None, rl: _Leaf | None, where: str | None,
         engine_version: str | None, opaque: bool) -> tuple[Difference, bool]:
    """The Difference for ``key``, and whether it is listed even as a match (an unknown value)."""
    notes: list[str] = [*(sl.notes if sl else ()), *(rl.notes if rl else ())]
    klass = classify(engine, key)
    s_value = sl.value if sl else None
    r_value = rl.value if rl else None
    if sl is not None and rl is not None:
        if not sl.known or not rl.known:
            notes += [UNKNOWN_NOTE] if not sl.known else []
            notes += [RECIPE_UNKNOWN_NOTE] if not rl.known else []
            return Difference(key, klass, "match", r_value, s_value, where, tuple(notes)), True
        status = "match" if same(sl.value, rl.value) else "value-differs"
        return Difference(key, klass, status, r_value, s_value, where, tuple(notes)), False
    present = sl or rl
    assert present is not None
    status = "extra-in-script" if sl is not None else "missing-in-script"
    if not present.known:
        notes.append(UNKNOWN_NOTE if sl is not None else RECIPE_UNKNOWN_NOTE)
    else:
        is_default, note = _default(engine, key, present.value, engine_version)
        if is_default:
            status = "default-equivalent"
        if note:
            notes.append(note)
    if status == "missing-in-script" and opaque:
        notes.append(OPAQUE_NOTE)
    return Difference(key, klass, status, r_value, s_value, where, tuple(notes)), False


def diff(script: Command, recipe: Command, engine_version: str | None = None, *,
         include_matches: bool = False) -> list[Difference]:
    """Every key on which ``script`` and ``recipe`` (both normalized) differ, classified (see the module doc).

    ``engine_version``: the engine version served (an image tag works: ``v0.25.1``); it decides
    whether the shipped defaults apply. Commands of different engines give one ``engine`` difference.
    """
    if script.engine != recipe.engine:
        return [Difference("engine", "MAJOR", "value-differs", recipe.engine, script.engine, None,
                           ("the script and the recipe use different engines; nothing else is compared",))]
    engine = script.engine
    s, r = _leaves(script, "script"), _leaves(recipe, "recipe")
    opaque = _opaque(script)
    out: list[Difference] = []
    model = _model(script, recipe)
    if model is not None and (include_matches or model.status != "match" or model.notes):
        out.append(model)
    for key in sorted(set(s) | set(r)):
        sl = s.get(key) or _cover(s, key)
        rl = r.get(key) or _cover(r, key)
        own = s.get(key) or r.get(key)
        if own is not None and not own.known and any(k.startswith(key + ".") for k in (*s, *r)):
            continue  # an unknown dict: its keys on the other side are reported one by one
        where = script.sources.get(sl.top) if sl is not None else None
        d, listed = _one(engine, key, sl, rl, where, engine_version, opaque)
        if include_matches or listed or d.status != "match":
            out.append(d)
    out.sort(key=lambda d: (CLASSES.index(d.klass), d.key))
    return out
