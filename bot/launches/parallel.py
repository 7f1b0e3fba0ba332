"""The parallelism a server really runs with, in the config's own terms (``ep``, ``dp-attn``,
``pp``, ``dcp-size``): what a label in the search space can be held against.

Per engine, from the normalized command (:mod:`bot.serve.normalize`), by the engine's own rules:

- expert parallelism: vLLM and ATOM ``--enable-expert-parallel`` spread the experts over every
  rank, tensor- and data-parallel (``tp * dp``; vLLM's FusedMoE: ``ep_size = tp_size * dp_size``),
  else 1; SGLang ``--ep-size``, or, with an all-to-all MoE backend that sets it (``deepep``,
  ``mooncake``, ``flashinfer``: ServerArgs sets ``ep_size = tp_size``), ``tp``; another backend
  leaves it unknown; TRT-LLM ``moe_expert_parallel_size``;
- data-parallel attention: SGLang, ATOM ``--enable-dp-attention``; TRT-LLM ``enable_attention_dp``;
  vLLM: data parallelism with expert parallelism (``dp > 1``, the DP-attention layout);
- pipeline parallelism and decode context parallelism: the engine's size flags.

None: the command does not let us tell (a flag's value unknown, an engine or backend we do not
model). Facts only; :mod:`bot.rules.unused_config_field` compares.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from bot.serve.model import MARK, Command

if TYPE_CHECKING:
    from bot.repo.facts import Facts
    from bot.repo.load.configs import Entry, Point

_A2A_SETS_EP = frozenset({"deepep", "mooncake", "flashinfer"})  # SGLang ServerArgs: ep_size = tp_size
FIELDS = ("ep", "dp-attn", "pp", "dcp-size")


def _int(args: Mapping[str, Any], *names: str, default: int | None = 1) -> int | None:
    for n in names:
        if n in args:
            v = args[n]
            if isinstance(v, bool) or (isinstance(v, str) and MARK in v):
                return None
            try:
                return int(v)
            except (TypeError, ValueError):
                return None
    return default


def _flag(args: Mapping[str, Any], name: str) -> bool | None:
    v = args.get(name, False)
    return v if isinstance(v, bool) else None


def effective(cmd: Command, field: str) -> str | None:
    """The value ``field`` (``ep``, ``dp-attn``, ``pp``, ``dcp-size``) has on the server ``cmd``
    starts, as the config writes it (``8``, ``true``), or None when the command cannot tell."""
    a, engine = cmd.args, cmd.engine
    if engine in ("vllm", "atom"):
        tp = _int(a, "tensor_parallel_size")
        dp = _int(a, "data_parallel_size")
        ep_on = _flag(a, "enable_expert_parallel")
        if field == "ep":
            return None if ep_on is None or tp is None or dp is None else str(tp * dp if ep_on else 1)
        if field == "dp-attn":
            if engine == "atom" and "enable_dp_attention" in a:
                on = _flag(a, "enable_dp_attention")
                return None if on is None else str(on).lower()
            return None if dp is None or ep_on is None else str(dp > 1 and ep_on).lower()
        if field == "pp":
            return _text(_int(a, "pipeline_parallel_size"))
        if field == "dcp-size":
            return _text(_int(a, "decode_context_parallel_size"))
        return None
    if engine == "sglang":
        if field == "ep":
            if "ep_size" in a:
                return _text(_int(a, "ep_size"))
            backend = a.get("moe_a2a_backend", "none")
            if backend in (None, "none"):
                return "1"
            return _text(_int(a, "tp_size")) if backend in _A2A_SETS_EP else None
        if field == "dp-attn":
            on = _flag(a, "enable_dp_attention")
            return None if on is None else str(on).lower()
        if field == "pp":
            return _text(_int(a, "pp_size"))
        return None
    if engine == "trtllm":
        if field == "ep":
            return _text(_int(a, "moe_expert_parallel_size", default=None))
        if field == "dp-attn":
            on = _flag(a, "enable_attention_dp")
            return None if on is None else str(on).lower()
        if field == "pp":
            return _text(_int(a, "pipeline_parallel_size"))
        return None
    return None


def _text(v: int | None) -> str | None:
    return None if v is None else str(v)


def servers_at(facts: Facts, entry: Entry, points: list[Point]) -> Iterator[tuple[Point, Command]]:
    """(point, the server command) for ``entry`` at each of ``points`` (at its first concurrency),
    as ``serve`` sees them: the lint's own facts with the serve sinks on (what was read is shared;
    evaluations are not: with sinks they record more), made once per lint (``facts.memo``) and
    only when a rule asks."""
    from bot.launches.gather import gather, serve_facts

    served = serve_facts(facts)
    twin = next((e for e in served.entries if e.name == entry.name and e.path == entry.path), None)
    if twin is None:
        return
    lines = {p.pos.line for p in points}
    want = [p for p in twin.points if p.pos.line in lines]
    for launch in gather(served, [twin], points_of=lambda _e: want):
        if launch.server is not None:
            yield launch.point, launch.server
