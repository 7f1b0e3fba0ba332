"""``normalize(engine, toks, files, env) -> Command``: one server command in the engine's own names.

Dispatches to the per-engine modules (``vllm``, ``sglang``, ``trtllm``, ``atom``, and
``client`` for benchmark clients). ``toks`` are the arguments after the launch words
(``detect`` says where they start); ``files`` the files the script wrote, by path (vLLM
``--config``, TRT-LLM ``--extra_llm_api_options``); ``env`` what reaches the process, copied
unchanged. Never raises: anything unreadable is a reason in ``Command.unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bot.serve import atom, client, sglang, trtllm, vllm
from bot.serve.argv import Builder
from bot.serve.model import Command, File, Tok

Normalizer = Callable[[Sequence[Tok], Mapping[str, File] | None, Mapping[str, str]], Command]

_ENGINES: dict[str, Normalizer] = {
    "vllm": vllm.normalize,
    "sglang": sglang.normalize,
    "trtllm": trtllm.normalize,
    "atom": atom.normalize,
    "client": lambda toks, files, env: client.normalize_client(toks, env),
}


def normalize(
    engine: str,
    toks: Sequence[Tok],
    files: Mapping[str, File] | None = None,
    env: Mapping[str, str] | None = None,
) -> Command:
    env = env or {}
    run = _ENGINES.get(engine)
    if run is None:
        b = Builder(engine, toks, env)
        b.reason(f"unknown engine {engine!r}")
        return b.done(None)
    try:
        return run(toks, files, env)
    except Exception as e:  # noqa: BLE001 - the contract is "never raise"; keep what was asked
        b = Builder(engine, toks, env)
        b.reason(f"internal error while normalizing: {type(e).__name__}: {e}")
        return b.done(None)
