"""How the profile's env templates become a launcher's env for one (entry, point, node).

A template is text with placeholders: ``{field}`` reads the search-space point, then its
scenario block, then the entry; ``{field|default}``; ``{@name}`` is derived (the run name,
the scenario folder...); ``?`` alone means "set, value unknown".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.repo.load.configs import AGENTIC, Entry, Point
from bot.shell.ir.values import Val, concat, lit, unknown

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def seq_name(isl: Any, osl: Any) -> str:
    names = {(1024, 1024): "1k1k", (8192, 1024): "8k1k", (1024, 8192): "1k8k"}
    try:
        return names.get((int(isl), int(osl)), f"{isl}_{osl}")
    except (TypeError, ValueError):
        return f"{isl}_{osl}"


def _lookup(key: str, entry: Entry, point: Point) -> Any:
    for source in (point.fields, point.seq, entry.fields):
        cur: Any = source
        ok = True
        for part in key.split("."):
            if isinstance(cur, Mapping) and part in cur:
                cur = cur[part]
            else:
                ok = False
                break
        if ok:
            return cur
    return None


def _derived(name: str, entry: Entry, point: Point, node: str, label: str) -> Val | None:
    prefix = entry.fields.get("model-prefix")
    agentic = point.scenario == AGENTIC
    if name == "scenario":
        return lit(point.scenario)
    if name == "scenario-subdir":
        return lit("agentic/" if agentic else "fixed_seq_len/")
    if name == "is-agentic":
        return lit("1" if agentic else "0")
    if name == "exp-name":
        if prefix is None:
            return None
        if agentic:
            return (f"{prefix}_", *unknown("agentic run name"))
        return lit(f"{prefix}_{seq_name(point.seq.get('isl'), point.seq.get('osl'))}")
    if name == "max-model-len":
        # InferenceX's sweep generator: isl + osl + 256 (utils/matrix_logic/generate_sweep_configs.py)
        isl, osl = point.seq.get("isl"), point.seq.get("osl")
        if isinstance(isl, int) and isinstance(osl, int) and not isinstance(isl, bool) and not isinstance(osl, bool):
            return lit(str(isl + osl + 256))
        return unknown("$MAX_MODEL_LEN")
    if name == "conc":
        for key in ("conc-start", "conc", "conc-end"):
            if point.fields.get(key) is not None:
                return lit(str(point.fields[key]))
        cl = point.fields.get("conc-list")
        if isinstance(cl, list) and cl:
            return lit(str(cl[0]))
        return None
    if name == "conc-list":
        cl = point.fields.get("conc-list")
        return lit(" ".join(str(c) for c in cl)) if isinstance(cl, list) else None
    if name == "cpu-dram-gb":
        # agentic points only: 0 without DRAM KV offloading, else a budget from the runner's
        # hardware (agentic_dram_offload_gb): set, its value not known here
        if not agentic:
            return None
        if point.fields.get("kv-offloading", "none") == "dram":
            return unknown("the DRAM offload budget (GB) of the runner")
        return lit("0")
    if name == "duration":
        # agentic points only: DEFAULT_AGENTIC_DURATION_SECONDS (utils/matrix_logic/validation.py)
        return lit("3600") if agentic else None
    if name == "node":
        return lit(node)
    if name == "label":
        return lit(label)
    return None


def render(template: str, entry: Entry, point: Point, node: str, label: str) -> Val | None:
    if template == "?":
        return None
    out: list[Any] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(template):
        out.append(template[pos : m.start()])
        key, has_default, default = m.group(1).partition("|")
        if key.startswith("@"):
            v = _derived(key[1:], entry, point, node, label)
            if v is None:
                if not has_default:
                    return ()  # unset
                v = lit(default)
            out.extend(v)
        else:
            raw = _lookup(key, entry, point)
            if raw is None:
                if not has_default:
                    return ()
                out.append(default)
            else:
                out.append(_yaml_str(raw))
        pos = m.end()
    out.append(template[pos:])
    return concat(tuple(out))  # adjacent text joined, empty text dropped


def _yaml_str(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


@dataclass(frozen=True)
class EnvSpec:
    """The workflow's env for one (entry, point, runner node)."""

    values: Mapping[str, Val]

    def key(self) -> tuple[tuple[str, Val], ...]:
        return tuple(sorted(self.values.items()))


def additional_settings(entry: Entry, point: Point) -> dict[str, Val]:
    """A multinode point's ``additional-settings: [KEY=VALUE, ...]`` (the workflow exports them)."""
    env: dict[str, Val] = {}
    if not entry.multinode:
        return env
    for side in ("prefill", "decode"):
        block = point.fields.get(side)
        settings = block.get("additional-settings") if isinstance(block, Mapping) else None
        for item in settings if isinstance(settings, list) else []:
            if isinstance(item, str) and "=" in item:
                key, _, text = item.partition("=")
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
                    env[key.strip()] = lit(text.strip())
    return env
