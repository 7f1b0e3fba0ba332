"""ATOM (``python3 -m atom.entrypoints.openai_server``) arguments -> dashes-to-underscores names.

ATOM's argument parser was not read: its semantics are **unverified**. What is assumed,
from the spellings InferenceX scripts use (recipes.md 4.4): argparse-like; ``--model``
gives the model; ``-tp`` is ``--tensor-parallel-size``; both ``--kv_cache_dtype`` and
``--kv-cache-dtype`` are accepted (canonical: underscores); bare flag -> true, ``--no-X`` ->
X false; ``--method mtp --num-speculative-tokens N`` (``--draft-model M`` for EAGLE3) is
speculative decoding. Flags known to take no value are listed in ``BOOL_FLAGS``; any other
option takes at most one value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.serve.argv import Builder, Opt, store, underscored, walk
from bot.serve.model import Command, File, Tok
from bot.serve.spec import spec_of

SHORT = {"-tp": "tensor_parallel_size", "-pp": "pipeline_parallel_size", "-dp": "data_parallel_size"}
BOOL_FLAGS = frozenset({
    "trust_remote_code", "enable_expert_parallel", "enable_dp_attention", "enable_prefix_caching",
    "enforce_eager", "enable_chunked_prefill",
})
_NOTE = "ATOM argument semantics are unverified (its parser was not read)"


def lookup(raw: str, tok: Tok) -> Opt:
    if raw in SHORT:
        return Opt(SHORT[raw], "1", notes=(f"{raw} -> {SHORT[raw]}",))
    if not raw.startswith("--"):
        return Opt(underscored(raw), "?", reason=f"{raw}: not a known ATOM option at {tok.src}")
    dest = underscored(raw)
    if dest.startswith("no_") and len(dest) > 3:
        return Opt(dest[3:], "0", const={dest[3:]: False})
    if dest in BOOL_FLAGS:
        return Opt(dest, "0", kind="bool")
    if dest == "num_speculative_tokens":
        return Opt(dest, "1", kind="int")
    if dest in ("model", "method", "draft_model"):
        return Opt(dest, "1", kind="str")
    return Opt(dest, "?")


def normalize(toks: Sequence[Tok], files: Mapping[str, File] | None, env: Mapping[str, str]) -> Command:
    del files
    b = Builder("atom", toks, env)
    b.note(_NOTE)

    def on_value(opt: Opt, name: str, values: Sequence[Tok], tok: Tok) -> None:
        if opt.dest == "model" and values:
            b.put_model(values[0], tok.src)
        store(b, opt, values, tok)

    walk(toks, b, lookup, on_value, b.stray)
    return b.done(spec_of("atom", b.args))
