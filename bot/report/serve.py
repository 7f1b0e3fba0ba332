"""``python -m bot serve``: the serve commands as JSON (a stable contract, docs/serve.md)
and as text (one readable line per flag, each with the line it came from)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot.launches.gather import engine_of
from bot.launches.launch import Launch
from bot.report import visible
from bot.serve.model import Command

VERSION = 1
TP_KEYS = {"vllm": "tensor_parallel_size", "sglang": "tp_size", "trtllm": "tensor_parallel_size",
           "atom": "tensor_parallel_size"}


def point_of(launch: Launch) -> dict[str, Any]:
    p = launch.point
    out: dict[str, Any] = {k: _plain(v) for k, v in p.fields.items()}
    out["scenario"] = p.scenario
    out["isl"] = _plain(p.seq.get("isl"))
    out["osl"] = _plain(p.seq.get("osl"))
    out["spec-decoding"] = p.spec_decoding
    out["conc"] = int(launch.conc) if launch.conc and launch.conc.isdigit() else launch.conc
    return out


def command_json(cmd: Command) -> dict[str, Any]:
    return {"engine": cmd.engine, "model": cmd.model, "argv": list(cmd.argv), "args": _plain(cmd.args),
            "env": dict(cmd.env), "spec": _plain(cmd.spec) if cmd.spec is not None else None,
            "unknown": list(cmd.unknown), "sources": dict(cmd.sources), "notes": list(cmd.notes)}


def launch_json(launch: Launch) -> dict[str, Any]:
    server = launch.server
    out: dict[str, Any] = {
        "entry": launch.entry.name, "point": point_of(launch), "launcher": launch.launcher or None,
        "script": launch.script, "framework": launch.entry.fields.get("framework"),
        "multinode": bool(launch.entry.multinode),
    }
    if server is not None:
        out.update(command_json(server))
    else:
        out.update({"engine": None, "model": None, "argv": [], "args": {}, "env": {}, "spec": None,
                    "unknown": [], "sources": {}, "notes": []})
    out["client"] = ({"argv": list(launch.client.argv), "args": _plain(launch.client.args),
                      "sources": dict(launch.client.sources), "unknown": list(launch.client.unknown)}
                     if launch.client is not None else None)
    out["unexported"] = {k: {"value": v, "source": src} for k, (v, src) in launch.unexported.items()}
    out["handoff"] = {"boundary": launch.handoff or None, "complete": launch.env_complete}
    out["others"] = [command_json(c) for c in launch.others]
    out["reasons"] = list(launch.reasons)
    if launch.recipe is not None or launch.workers:
        out["recipe"] = launch.recipe
        out["workers"] = {role: command_json(c) for role, c in launch.workers.items()}
    out["status"], why = status(launch)
    if why:
        out["reasons"] = list(dict.fromkeys([*out["reasons"], *why]))
    return out


def opaque(cmd: Command) -> bool:
    """Words in flag position we cannot read (``$EXTRA_ARGS`` unknown): any flag may hide there."""
    return any(u.startswith("unknown words") for u in cmd.unknown)


def _known_tp(cmd: Command) -> bool:
    key = TP_KEYS.get(cmd.engine)
    if key is None:
        return False
    if key in cmd.args:
        return cmd.args[key] is not None
    return not opaque(cmd)  # absent, with nothing unknown that could be it: the engine's default


def _known_spec(cmd: Command, point_spec: str) -> bool:
    if cmd.spec is None:
        return not opaque(cmd)  # known to be off (an -mtp point that serves without it is a rule's business)
    return cmd.spec.get("kind") is not None and cmd.spec.get("num_speculative_tokens") is not None


def _gaps(cmd: Command, point_spec: str) -> list[str]:
    gaps = []
    if cmd.model is None:
        gaps.append("model unknown")
    if not _known_tp(cmd):
        gaps.append("tensor parallel size unknown")
    if not _known_spec(cmd, point_spec):
        if cmd.spec is None:
            gaps.append("speculative settings unknown (unknown words could hold them)")
        elif cmd.spec.get("kind") is None:
            gaps.append("speculative method unknown")
        else:
            gaps.append("number of speculative tokens unknown or not given (the engine's default)")
    return gaps


def status(launch: Launch) -> tuple[str, list[str]]:
    """"resolved" (engine, model, TP and spec settings known), "partial" or "none", and why."""
    spec = launch.point.spec_decoding
    if launch.workers:
        gaps = [f"{role}: {g}" for role, c in launch.workers.items() for g in _gaps(c, "")
                if not g.startswith("speculative")]
        return ("partial", gaps) if gaps else ("resolved", [])
    if launch.server is None:
        return "none", list(launch.reasons) or ["no server command found"]
    gaps = _gaps(launch.server, spec) + ([launch.assumed] if launch.assumed else [])
    return ("partial", gaps) if gaps else ("resolved", [])


def coverage(launches: Iterable[Launch]) -> dict[str, Any]:
    """Per engine: resolved / partial / none, with the (entry, point) pairs short of resolved."""
    single: dict[str, dict[str, Any]] = {}
    multi: dict[str, dict[str, Any]] = {}
    for launch in launches:
        engine = launch.server.engine if launch.server is not None else (
            next(iter(launch.workers.values())).engine if launch.workers else engine_of(launch.entry))
        table = multi if launch.entry.multinode else single
        row = table.setdefault(engine, {"resolved": 0, "partial": 0, "none": 0, "short": []})
        state, why = status(launch)
        row[state] += 1
        if state != "resolved":
            row["short"].append({"entry": launch.entry.name, "point": point_of(launch), "status": state,
                                 "reasons": why})
    return {"single_node": dict(sorted(single.items())), "multi_node": dict(sorted(multi.items()))}


def to_json(launches: list[Launch]) -> dict[str, Any]:
    return {"version": VERSION, "commands": [launch_json(x) for x in launches], "coverage": coverage(launches)}


# ------------------------------------------------------------------- text
def text_lines(launches: list[Launch]) -> Iterable[str]:
    for launch in launches:
        p = point_of(launch)
        shown = ", ".join(f"{k}={v}" for k, v in p.items() if k not in ("conc-start", "conc-end", "scenario")
                          and v is not None)
        yield visible(f"{launch.entry.name}  [{shown}]")
        yield visible(f"  {launch.launcher or '(no launcher)'} -> {launch.script or '(no script)'}")
        if launch.server is not None:
            yield from _command_lines(launch.server, "  ")
        for role, cmd in launch.workers.items():
            yield visible(f"  {role} worker (recipe {launch.recipe}):")
            yield from _command_lines(cmd, "    ")
        for other in launch.others:
            yield "  another server command:"
            yield from _command_lines(other, "    ")
        for name, (value, src) in launch.unexported.items():
            yield visible(f"  not exported (never reaches the server): {name}={value}  ({src})")
        if launch.client is not None:
            yield visible(f"  client: {' '.join(launch.client.argv)}")
        state, why = status(launch)
        if state != "resolved":
            yield visible(f"  {state}: " + "; ".join(why))
        yield ""


def _command_lines(cmd: Command, indent: str) -> Iterable[str]:
    yield visible(f"{indent}{cmd.engine} {cmd.model or '(model unknown)'}")
    width = max((len(k) for k in cmd.args), default=0)
    for key, value in cmd.args.items():
        src = cmd.sources.get(key, "")
        shown = "(unknown)" if value is None else _show(value)
        yield visible(f"{indent}  {key:<{width}}  {shown}    {src}")
    for name, value in cmd.env.items():
        yield visible(f"{indent}  env {name}={value}")
    if cmd.spec is not None:
        yield visible(f"{indent}  spec: " + ", ".join(f"{k}={v}" for k, v in cmd.spec.items() if v is not None))
    for u in cmd.unknown:
        yield visible(f"{indent}  unknown: {u}")


def _show(value: Any) -> str:
    import json

    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
