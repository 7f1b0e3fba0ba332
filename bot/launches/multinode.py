"""Multinode entries handed to an external tool: the engine args their recipe states.

An srt-slurm recipe (``benchmarks/multi_node/srt-slurm-recipes/.../*.yaml``) names its
engine in ``backend.type`` and gives each worker's args under ``backend.<type>_config``:
``prefill`` / ``decode`` (disaggregated) or ``aggregated``. SGLang and vLLM keys are flag
names (``tp-size: 8``, ``enable-dp-attention: true``); TRT-LLM keys are LLM-API keys. The
entry's selector (``CONFIG_FILE=x.yaml:zip_override_lowlat[1]``) picks an override block,
merged over the base (a list value of a ``zip_override`` block is indexed by the selector).

The recipes are found by :mod:`bot.repo.jobs` (copies, recipe roots); this module only
reads the one each point names. Facts only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import yaml

from bot.launches.launch import Launch, concurrencies
from bot.repo.facts import Facts
from bot.repo.load import recipefile
from bot.repo.load.configs import Entry, Point
from bot.repo.load.yamlfile import YList, YMap
from bot.serve import normalize
from bot.serve.model import Command, File, Tok

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
ROLES = ("prefill", "decode", "aggregated", "agg", "worker")
_INDEX = re.compile(r"\[(\d+)\]\Z")


def recipe_launches(facts: Facts, entry: Entry, keep: Callable[[Point, str], bool] | None = None,
                    only: re.Pattern[str] | None = None) -> Iterator[Launch]:
    """The launches of a multinode entry handed to a tool; ``keep(point, recipe)``: read only
    the recipes it keeps (the others are skipped, not yielded); ``only``: normalize only the
    worker args whose names it matches (what the caller needs: the spec rules, their
    speculative settings)."""
    job = facts.jobs.of(entry)
    assert job is not None
    launcher = job.launchers[0] if job.launchers else ""
    for point in entry.points:
        concs = concurrencies(point)
        conc = concs[0] if concs else None
        refs = [r for r in job.refs if r.point is point]
        if not refs:
            yield Launch(entry, point, conc, launcher, None, None, None,
                         reasons=(f"the entry is handed to {job.tool}; no recipe file is named for this point",))
            continue
        ref = refs[0]
        recipe = job.recipe(ref)
        if recipe.found is None:
            where = "only the tool's own repository has it" if recipe.external else "it is not in the repository"
            yield Launch(entry, point, conc, launcher, None, None, None, recipe=ref.path,
                         reasons=(f"recipe {ref.path}: {where}",))
            continue
        if keep is not None and not keep(point, recipe.found):
            continue
        doc, err = recipefile.document(facts, recipe.found)
        if err is not None or not isinstance(doc, YMap):
            yield Launch(entry, point, conc, launcher, None, None, None, recipe=recipe.found,
                         reasons=(f"recipe {recipe.found} cannot be read: {err.message if err else 'not a mapping'}",))
            continue
        memo = facts.memo.setdefault("serve.recipes", {})
        key = (recipe.found, ref.selector, only.pattern if only is not None else None)
        if key not in memo:
            memo[key] = recipe_workers(doc, recipe.found, ref.selector, only)
        workers, reasons = memo[key]
        yield Launch(entry, point, conc, launcher, None, None, None, recipe=recipe.found,
                     workers=dict(workers), reasons=tuple(reasons))


def recipe_workers(doc: YMap, path: str, selector: str = "", only: re.Pattern[str] | None = None
                   ) -> tuple[dict[str, Command], list[str]]:
    """Each worker's normalized command in a recipe (``selector`` picks an override; ``only``:
    the args whose names it matches, the others left out)."""
    reasons: list[str] = []
    base = doc.get("base") if isinstance(doc.get("base"), YMap) else doc
    if selector:
        m = _INDEX.search(selector)
        name = selector[: m.start()] if m else selector
        block = doc.get(name)
        if isinstance(block, Mapping):
            base = _merge(base, block, int(m.group(1)) if m else None)
        else:
            reasons.append(f"the selector {selector!r} names no block of the recipe")
    backend = base.get("backend") if isinstance(base, Mapping) else None
    if not isinstance(backend, Mapping):
        return {}, reasons + [f"recipe {path} has no backend block"]
    engine = str(backend.get("type") or "").lower()
    if not engine:  # older recipes name no type: the one ``<engine>_config`` block says it
        found = [e for e in ("sglang", "vllm", "trtllm") if isinstance(backend.get(f"{e}_config"), Mapping)]
        engine = found[0] if len(found) == 1 else ""
    engine = {"trt": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm"}.get(engine, engine)
    config = backend.get(f"{engine}_config")
    if engine not in ("sglang", "vllm", "trtllm") or not isinstance(config, Mapping):
        return {}, reasons + [f"recipe {path}: backend type {engine or '(none)'} with no {engine}_config block"]
    model = base.get("model") if isinstance(base, Mapping) else None
    model_name = str(model.get("path")) if isinstance(model, Mapping) and model.get("path") else None
    envs = {role: backend.get(f"{role}_environment") for role in ROLES}
    workers: dict[str, Command] = {}
    for role, args in config.items():
        if not isinstance(args, Mapping):
            continue
        env = envs.get(str(role))
        env_map = {str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else {}
        if only is not None and isinstance(args, YMap):
            args = _subset(args, only)
        cmd = _worker(engine, args, path, env_map)
        if cmd.model is None and model_name:
            cmd = Command(cmd.engine, model_name, cmd.argv, cmd.args, {**cmd.sources, "model": f"{path}:1"},
                          cmd.env, cmd.spec, cmd.unknown,
                          (*cmd.notes, f"model: the recipe's model.path ({model_name})"))
        workers[str(role)] = cmd
    if not workers:
        reasons.append(f"recipe {path}: {engine}_config has no worker blocks")
    return workers, reasons


def _worker(engine: str, args: Mapping[str, Any], path: str, env: dict[str, str]) -> Command:
    line = _line(args, path)
    if engine == "trtllm":
        name = f"{path}#worker"
        text = yaml.dump(_plain(args), Dumper=_DUMPER, sort_keys=False)
        return normalize(engine, [Tok("--extra_llm_api_options", line), Tok(name, line)],
                         {name: File(name, text, line)}, env)
    toks: list[Tok] = []
    for key, value in args.items():
        src = _line_of(args, key, path)
        flag = f"--{key}"
        if value is True:
            toks.append(Tok(flag, src))
        elif value is False:
            if engine == "vllm":
                toks.append(Tok(f"--no-{key}", src))
        elif value is None:
            continue
        elif isinstance(value, (Mapping, list)):
            toks += [Tok(flag, src), Tok(json.dumps(_plain(value)), src)]
        else:
            toks += [Tok(flag, src), Tok(str(value), src)]
    return normalize(engine, toks, {}, env)


def _subset(args: YMap, only: re.Pattern[str]) -> YMap:
    """The args whose names ``only`` matches, with their positions."""
    kept = YMap((k, v) for k, v in args.items() if only.search(str(k)))
    kept.pos = args.pos
    kept.key_pos = {k: m for k, m in getattr(args, "key_pos", {}).items() if k in kept}
    kept.val_pos = {k: m for k, m in getattr(args, "val_pos", {}).items() if k in kept}
    kept.duplicates = []
    kept.blocks = {k for k in getattr(args, "blocks", set()) if k in kept}
    return kept


def _merge(base: Any, over: Mapping[str, Any], index: int | None) -> Any:
    """``over`` merged into ``base`` (dicts deeply; a list value picked by ``index``)."""
    if not isinstance(base, Mapping):
        return over
    out: dict[str, Any] = dict(base)
    for k, v in over.items():
        if isinstance(v, (list, YList)) and index is not None and not isinstance(base.get(k), list):
            v = v[index] if 0 <= index < len(v) else None
        out[k] = _merge(base.get(k), v, index) if isinstance(v, Mapping) else v
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _line(node: Any, path: str) -> str:
    pos = getattr(node, "pos", None)
    return f"{path}:{pos.line}" if pos is not None else f"{path}:1"


def _line_of(node: Any, key: str, path: str) -> str:
    pos = getattr(node, "key_pos", {}).get(key) if isinstance(node, YMap) else None
    return f"{path}:{pos.line}" if pos is not None else _line(node, path)
