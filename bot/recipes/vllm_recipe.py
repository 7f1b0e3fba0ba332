"""Render an official vLLM recipe (vllm-project/recipes YAML) for one query.

``render(source, query)`` gives the serve arguments the recipes site would show for the
query's model, hardware, precision, parallelism and speculative decoding (``Rendered``: the
model first, then the flags; the env), or a ``Miss`` saying why there is none. It mirrors
``resolveCommand`` / ``buildArgs`` / ``buildEnv`` of ``src/lib/command-synthesis.js`` for a
single node, in the documented order:

1. ``model.base_args``
2. the variant's ``extra_args`` (and its exact-GPU ``hardware_overrides.<gpu>``, which the
   site emits here, right after the variant args)
3. the strategy's ``vllm_args`` and its ``parallel_flag`` with the entry's size
4. ``strategy_overrides.<strategy>`` (``extra_args``, ``vllm_args``)
5. ``hardware_overrides``: the strategy's own generation block when it has one (it replaces
   the rest), else the recipe's then the variant's block for the generation (brand ``nvidia``
   when the generation has none); then the strategy's exact-GPU block
6. the enabled features, in the recipe's order

then the site's last-wins dedupe of ``--flag value`` pairs. Two choices differ from the site on
purpose: the parallel size is the entry's ``tp`` (the site picks one per hardware: the note
says what it would have been), and the features follow the entry's speculative decoding
(``spec_decoding`` on for a spec point, off for ``none``) rather than the recipe's defaults.
"""

from __future__ import annotations

import re
from typing import Any

from bot.recipes.model import Miss, Provenance, Query, Rendered, Source
from bot.recipes.vllm_select import (
    FALLBACK,
    Bad,
    Collection,
    brand,
    collection,
    fail,
    generation,
    get_args,
    get_env,
    get_map,
    get_str,
    hardware_id,
    hw_keyed,
    pick_variant,
)

SPEC = "spec_decoding"  # the feature key every recipe uses for MTP / EAGLE3 / DSpark
STRATEGY_DIR = "strategies"


def render(source: Source, q: Query) -> Rendered | Miss:
    """The recipe's serve arguments for the query, or why there are none. Never raises on bad
    input: a file that is not YAML, or not of the schema, is a Miss naming its path and line."""
    if q.engine != "vllm" or source.kind != "vllm":
        return Miss(f"not a vLLM query or source ({q.engine} query, {source.kind} source)")
    if q.nodes > 1:
        return Miss("multi-node recipes are not compared")
    try:
        coll = collection(source)
        path, unread = coll.model_path(q.model)
    except Bad as bad:
        return Miss(str(bad))
    if path is None:
        also = f" ({unread} recipe files could not be read)" if unread else ""
        return Miss(f"no vLLM recipe for model {q.model}{also}")
    try:
        return _render(coll, path, q)
    except Bad as bad:
        return Miss(str(bad), path)


def _render(coll: Collection, path: str, q: Query) -> Rendered | Miss:
    doc = coll.doc(path)
    tasks = get_map(path, doc, "meta", "meta").get("tasks")
    if isinstance(tasks, list) and "omni" in tasks:
        return Miss("an omni recipe (vllm serve --omni, one process per task) is not compared", path)
    taxonomy = coll.doc("taxonomy.yaml")
    profiles = get_map("taxonomy.yaml", taxonomy, "hardware_profiles", "hardware_profiles")
    meta_hw = get_map(path, get_map(path, doc, "meta", "meta"), "hardware", "meta.hardware")
    hw = hardware_id(q.hardware, profiles)
    notes: list[str] = []
    tried: list[str] = []
    fallback = None
    chosen: tuple[str, str] | None = None
    for cand in (hw, FALLBACK.get(hw)):
        if cand is None:
            continue
        profile = profiles.get(cand)
        if not isinstance(profile, dict):
            tried.append(f"the taxonomy has no hardware {cand}")
        elif meta_hw.get(cand) == "unsupported":
            tried.append(f"the recipe marks {cand} unsupported")
        else:
            got = pick_variant(path, doc, q.model, q.precision, profile, cand)
            if isinstance(got, str):
                tried.append(got)
            else:
                chosen = got
                if cand != hw:
                    fallback = f"{hw} -> {cand}"
                    notes.append(f"hardware fallback {fallback}: {tried[-1]}")
                hw = cand
                break
    if chosen is None:
        return Miss(f"no recipe for hardware {q.hardware}: {'; '.join(tried)}", path)
    profile = profiles[hw]
    variant_key, variant_why = chosen
    variants = get_map(path, doc, "variants", "variants")
    variant = variants[variant_key]

    name = "single_node_dep" if q.dp_attn else "single_node_tep" if q.ep > 1 else "single_node_tp"
    gate = hw_keyed(get_map(path, doc, "strategy_hardware", "strategy_hardware").get(name), profile, hw)
    compatible = doc.get("compatible_strategies") or []
    if not isinstance(compatible, list):
        raise fail(path, doc, "compatible_strategies", "compatible_strategies must be a list")
    offered = gate != "unsupported" if gate is not None else name in compatible
    if not offered:
        return Miss(f"the recipe does not offer {name} on {hw} (compatible_strategies: "
                    f"{', '.join(map(str, compatible)) or 'none'})", path)
    spath = f"{STRATEGY_DIR}/{name}.yaml"
    strategy = coll.doc(spath)
    if strategy.get("deploy_type", "single_node") != "single_node":
        raise fail(spath, strategy, "deploy_type", f"{name} is not a single-node strategy")
    flag = get_str(spath, strategy, "parallel_flag", "parallel_flag") or "--tensor-parallel-size"
    own = _own_parallel_size(path, doc, variant, variant_key, profile, hw, name)
    if own[0] != q.tp:
        notes.append(f"the recipe's own {flag} on {hw} is {own[0]} ({own[1]}); rendered with the entry's {q.tp}")

    feats, feat_args = _features(path, doc, variant, variant_key, profile, hw, name, q.spec, notes)
    args, env = _compose(path, doc, variant, variant_key, strategy, spath, name, flag, q.tp, profile, hw, feat_args)
    model_id = (get_str(path, variant, "model_id", f"variants.{variant_key}.model_id")
                or get_str(path, get_map(path, doc, "model", "model"), "model_id", "model.model_id"))
    if not model_id:
        raise fail(path, doc, "model", "model.model_id is missing")
    if model_id.lower() != q.model.strip().lower():
        notes.append(f"the recipe serves {model_id}; the entry serves {q.model}, which no variant of it names")
    selection = (("hardware", hw), ("variant", f"{variant_key} ({variant_why})"), ("strategy", name),
                 ("parallel", f"{flag} {q.tp}"), ("features", ",".join(feats)))
    prov = Provenance(coll.source.name, coll.source.revision, path, selection, fallback)
    return Rendered("vllm", (model_id, *args), tuple(env.items()), prov, tuple(notes))


def _own_parallel_size(path: str, doc: Any, variant: Any, variant_key: str, profile: dict[str, Any], hw: str,
                       name: str) -> tuple[int, str]:
    """The size the site would emit (``resolveSingleNodeTp``): for TP the variant's ``tp``, else
    ``strategy_overrides.single_node_tp.tp``, else 1 when the weights fit one GPU, else the
    node's GPU count; TEP and DEP always take the whole node."""
    count = profile.get("gpu_count")
    gpus = count if isinstance(count, int) and count > 0 else 1
    if name != "single_node_tp":
        return gpus, f"{name} takes the node's {gpus} GPUs"
    so = get_map(path, get_map(path, doc, "strategy_overrides", "strategy_overrides"), name, name)
    declared = ((variant.get("tp"), f"variants.{variant_key}.tp"), (so.get("tp"), f"strategy_overrides.{name}.tp"))
    for raw, where in declared:
        tp = raw if isinstance(raw, int) else hw_keyed(raw, profile, hw)
        if isinstance(tp, int) and not isinstance(tp, bool) and tp > 0:
            return min(tp, gpus), where
    vram, need = profile.get("vram_gb"), variant.get("vram_minimum_gb")
    if isinstance(vram, int | float) and isinstance(need, int | float) and need and vram > 0:
        return (1, "fits one GPU") if need <= vram / gpus else (gpus, "needs the whole node")
    return gpus, "the node's GPU count"


def _features(path: str, doc: Any, variant: Any, variant_key: str, profile: dict[str, Any], hw: str, strategy: str,
              spec: str, notes: list[str]) -> tuple[list[str], list[str]]:
    """The enabled features (for the provenance: ``spec_decoding:mtp`` for a mode) and their args.

    Default-on = every feature minus ``opt_in_features`` minus ``hardware_opt_in_features[hw]``,
    plus those a variant's ``default_modes`` turns on; then ``spec_decoding`` follows the entry."""
    features = get_map(path, doc, "features", "features")
    opt_in = set(get_args(path, doc, "opt_in_features", "opt_in_features"))
    opt_in |= set(get_args(path, get_map(path, doc, "hardware_opt_in_features", "hardware_opt_in_features"),
                           hw, f"hardware_opt_in_features.{hw}"))
    forced = set(get_map(path, variant, "default_modes", f"variants.{variant_key}.default_modes"))
    on = [f for f in features if f in forced or f not in opt_in]
    wants = spec.strip().lower() not in ("", "none")
    if SPEC in on and not wants:
        on.remove(SPEC)
        notes.append(f"{SPEC} is on by default in the recipe; left out: the entry runs without speculative decoding")
    elif wants and SPEC not in features:
        notes.append(f"the recipe has no {SPEC} feature; the entry runs spec {spec}")
    elif wants and SPEC not in on:
        on = [f for f in features if f in on or f == SPEC]
        notes.append(f"{SPEC} is opt-in in the recipe; turned on for the entry's spec {spec}")
    names: list[str] = []
    args: list[str] = []
    nvidia = brand(profile) == "nvidia"
    gen = generation(profile)
    for key in on:
        feat = features[key]
        where = f"features.{key}"
        if not isinstance(feat, dict):
            raise fail(path, features, key, f"{where} must be a mapping")
        allow = feat.get("strategies")
        if isinstance(allow, list) and allow and strategy not in allow:
            notes.append(f"feature {key} is not offered with {strategy}; left out")
            continue
        if feat.get("modes") is not None:
            modes = get_map(path, feat, "modes", f"{where}.modes")
            mode = _mode(modes, feat, key, variant, variant_key, profile, hw, spec if key == SPEC else "", notes)
            if mode is None:
                notes.append(f"feature {key} has no mode for variant {variant_key} on {hw}; left out")
                continue
            m = get_map(path, modes, mode, f"{where}.modes.{mode}")
            over = hw_keyed(m.get("hardware_overrides"), profile, hw)
            src = over if isinstance(over, dict) and over.get("args") is not None else m
            args += get_args(path, src, "args", f"{where}.modes.{mode}.args")
            names.append(f"{key}:{mode}")
            continue
        hos = get_map(path, feat, "hardware_overrides", f"{where}.hardware_overrides")
        over = hos.get(gen) if gen and hos.get(gen) is not None else hos.get("nvidia") if nvidia else None
        src = over if isinstance(over, dict) and over.get("args") is not None else feat
        these = get_args(path, src, "args", f"{where}.args")
        method = spec_method(these) if key == SPEC else None
        if method and method != spec.strip().lower():
            notes.append(f"the recipe's {SPEC} method is {method}; the entry runs spec {spec}")
        args += these
        names.append(key)
    return names, args


def _mode(modes: dict[str, Any], feat: dict[str, Any], key: str, variant: Any, variant_key: str,
          profile: dict[str, Any], hw: str, spec: str, notes: list[str]) -> str | None:
    """The mode of a single-select feature (``resolveModeKey``): among the modes allowed for the
    variant and hardware, the entry's spec method when there is one by that name, else the
    variant's ``default_modes``, the feature's ``default_mode``, the first allowed."""
    gen = generation(profile)
    allowed = []
    for k, m in modes.items():
        if not isinstance(m, dict):
            continue
        only = m.get("variants")
        if isinstance(only, list) and only and variant_key not in only:
            continue
        gate = m.get("hardware")
        if isinstance(gate, dict) and "unsupported" in (gate.get(gen or ""), gate.get(hw)):
            continue
        allowed.append(k)
    if not allowed:
        return None
    if spec and spec.lower() in allowed:
        return spec.lower()
    dm = variant.get("default_modes")
    for cand in (dm.get(key) if isinstance(dm, dict) else None, feat.get("default_mode")):
        if cand in allowed:
            chosen = str(cand)
            break
    else:
        chosen = allowed[0]
    if spec:
        notes.append(f"{key} has no {spec} mode here (modes: {', '.join(allowed)}); used {chosen}")
    return chosen


def _compose(path: str, doc: Any, variant: Any, variant_key: str, strategy: Any, spath: str, name: str, flag: str,
             size: int, profile: dict[str, Any], hw: str, feat_args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The deduplicated flags and the env, in the site's order (module docstring)."""
    v = f"variants.{variant_key}"
    model = get_map(path, doc, "model", "model")
    v_hos = get_map(path, variant, "hardware_overrides", f"{v}.hardware_overrides")
    v_exact = get_map(path, v_hos, hw, f"{v}.hardware_overrides.{hw}")
    sos = get_map(path, doc, "strategy_overrides", "strategy_overrides")
    so = get_map(path, sos, name, f"strategy_overrides.{name}")
    so_hos = get_map(path, so, "hardware_overrides", f"strategy_overrides.{name}.hardware_overrides")
    gen = generation(profile) or ""
    nvidia = brand(profile) == "nvidia"

    def by_gen(table: dict[str, Any], where: str) -> tuple[dict[str, Any], str] | None:
        # ``table[gen] || (isNvidia ? table.nvidia : null)``: a generation block, else the brand one
        key = gen if table.get(gen) is not None else "nvidia" if nvidia and table.get("nvidia") is not None else ""
        return (get_map(path, table, key, f"{where}.{key}"), f"{where}.{key}") if key else None

    so_gen = by_gen(so_hos, f"strategy_overrides.{name}.hardware_overrides")
    hw_layers = [so_gen] if so_gen else [  # a strategy's block, even empty, replaces the other two
        by_gen(get_map(path, doc, "hardware_overrides", "hardware_overrides"), "hardware_overrides"),
        by_gen(v_hos, f"{v}.hardware_overrides")]
    so_exact_at = f"strategy_overrides.{name}.hardware_overrides.{hw}"
    hw_layers.append((get_map(path, so_hos, hw, so_exact_at), so_exact_at))

    args = get_args(path, model, "base_args", "model.base_args")
    args += get_args(path, variant, "extra_args", f"{v}.extra_args")
    args += get_args(path, v_exact, "extra_args", f"{v}.hardware_overrides.{hw}.extra_args")
    args += get_args(spath, strategy, "vllm_args", "vllm_args") + [flag, str(size)]
    args += get_args(path, so, "extra_args", f"strategy_overrides.{name}.extra_args")
    args += get_args(path, so, "vllm_args", f"strategy_overrides.{name}.vllm_args")
    layers = [layer for layer in hw_layers if layer is not None]
    for layer, at in layers:
        args += get_args(path, layer, "extra_args", f"{at}.extra_args")
    args += feat_args

    env = get_env(path, model, "base_env", "model.base_env")
    env |= get_env(path, variant, "extra_env", f"{v}.extra_env")
    env |= get_env(path, v_exact, "extra_env", f"{v}.hardware_overrides.{hw}.extra_env")
    env |= get_env(spath, strategy, "env", "env")
    env |= get_env(path, so, "env", f"strategy_overrides.{name}.env")
    env |= get_env(path, so, "extra_env", f"strategy_overrides.{name}.extra_env")
    for layer, at in layers:
        env |= get_env(path, layer, "extra_env", f"{at}.extra_env")
    return dedupe([a for a in args if a]), env


_METHOD = re.compile(r'"method"\s*:\s*"([^"]+)"')


def spec_method(args: list[str]) -> str | None:
    """The speculative method a feature's args name (``{"method":"eagle3",...}`` or
    ``--speculative-config.method mtp``); model-specific MTP names (``qwen3_5_mtp``) read as mtp."""
    for i, word in enumerate(args):
        m = _METHOD.search(word) if word.lstrip().startswith("{") else None
        name = m.group(1) if m else args[i + 1] if word == "--speculative-config.method" and i + 1 < len(args) else None
        if name:
            return "mtp" if name.lower().endswith("mtp") else name.lower()
    return None


def dedupe(args: list[str]) -> list[str]:
    """Keep the last ``--flag [value]`` of each flag (``dedupeArgs``): a word starting with '-'
    followed by one that does not is a pair; other words stay where they are."""
    units: list[tuple[str, ...]] = []
    i = 0
    while i < len(args):
        cur = args[i]
        if cur.startswith("-") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            units.append((cur, args[i + 1]))
            i += 2
        else:
            units.append((cur,))
            i += 1
    seen: set[str] = set()
    keep: list[tuple[str, ...]] = []
    for unit in reversed(units):
        if not unit[0].startswith("-"):
            keep.append(unit)
        elif unit[0] not in seen:
            seen.add(unit[0])
            keep.append(unit)
    return [word for unit in reversed(keep) for word in unit]
