"""Benchmark client commands -> dashes-to-underscores names (engine "client").

Two spellings reach here: InferenceX's ``run_benchmark_serving`` helper
(``benchmarks/benchmark_lib.sh``: ``--model --port --backend --input-len --output-len
--random-range-ratio --num-prompts --max-concurrency --result-filename --result-dir
--use-chat-template --dsv4 --trust-remote-code --tokenizer ...``) and the
``benchmark_serving.py`` / ``sglang.bench_serving`` / ``vllm bench serve`` argv it builds.
Canonical names are the spelled names with dashes as underscores (no mapping between the
two spellings); flags that take no value are listed; any other option takes at most one
value. The model comes from ``--model``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.serve.argv import Builder, Opt, store, underscored, walk
from bot.serve.model import Command, Tok

BOOL_FLAGS = frozenset({
    "use_chat_template", "dsv4", "trust_remote_code", "ignore_eos", "save_result", "save_detailed",
    "profile", "disable_tqdm", "disable_ignore_eos", "disable_stream", "apply_chat_template",
})


def lookup(raw: str, tok: Tok) -> Opt:
    dest = underscored(raw)
    if dest in BOOL_FLAGS:
        return Opt(dest, "0", kind="bool")
    if dest in ("model", "tokenizer", "backend", "result_filename", "result_dir", "base_url", "endpoint"):
        return Opt(dest, "1", kind="str")
    return Opt(dest, "?")


def normalize_client(toks: Sequence[Tok], env: Mapping[str, str] | None = None) -> Command:
    b = Builder("client", toks, env or {})

    def on_value(opt: Opt, name: str, values: Sequence[Tok], tok: Tok) -> None:
        store(b, opt, values, tok)
        if opt.dest == "model" and values:
            b.put_model(values[0], tok.src)

    walk(toks, b, lookup, on_value, b.stray)
    return b.done(None)
