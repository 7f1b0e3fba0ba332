"""TRT-LLM ``trtllm-serve`` arguments -> LLM-API keys.

The CLI is click, read from NVIDIA/TensorRT-LLM ``tensorrt_llm/commands/serve.py`` (commit
00209af1, ``@click.command("serve")``): one positional MODEL; snake_case options; aliases
``--tensor_parallel_size/--tp_size``, ``--pipeline_parallel_size/--pp_size``,
``--context_parallel_size/--cp_size``, ``--moe_expert_parallel_size/--ep_size``,
``--moe_cluster_parallel_size/--cluster_size``,
``--free_gpu_memory_fraction/--kv_cache_free_gpu_memory_fraction`` (-> ``kv_cache_config``
``free_gpu_memory_fraction`` in ``get_llm_args``), ``--config/--extra_llm_api_options``;
flags ``--trust_remote_code``, ``--fail_fast_on_attention_window_too_large``,
``--enable_chunked_prefill``; ``--backend trt`` is an alias of ``tensorrt``. Click takes no
abbreviations and no dashed spellings.

The YAML file (``--extra_llm_api_options F``) holds LLM-API keys. TRT-LLM merges it with
``update_llm_args_with_extra_dict`` (``tensorrt_llm/llmapi/llm_utils.py``):
``llm_args | llm_args_dict``, a shallow merge in which **the file wins** over the command
line, key by key at the top level. So a ``kv_cache_config`` mapping in the file replaces
the one the CLI built, dropping ``--kv_cache_free_gpu_memory_fraction`` (noted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.serve import configfile
from bot.serve.argv import Builder, Opt, store, walk
from bot.serve.model import Command, File, Tok
from bot.serve.spec import spec_of

_ALIASES = {
    "--tp_size": "tensor_parallel_size", "--tensor_parallel_size": "tensor_parallel_size",
    "--pp_size": "pipeline_parallel_size", "--pipeline_parallel_size": "pipeline_parallel_size",
    "--cp_size": "context_parallel_size", "--context_parallel_size": "context_parallel_size",
    "--ep_size": "moe_expert_parallel_size", "--moe_expert_parallel_size": "moe_expert_parallel_size",
    "--cluster_size": "moe_cluster_parallel_size", "--moe_cluster_parallel_size": "moe_cluster_parallel_size",
}
_FLAGS = frozenset({"trust_remote_code", "fail_fast_on_attention_window_too_large", "enable_chunked_prefill"})
_VALUES = {  # option -> kind
    "tokenizer": "str", "custom_tokenizer": "str", "host": "str", "port": "int", "backend": "str",
    "custom_module_dirs": "str", "log_level": "str", "max_beam_width": "int", "max_batch_size": "int",
    "max_num_tokens": "int", "max_seq_len": "int", "gpus_per_node": "int", "num_postprocess_workers": "int",
    "revision": "str", "reasoning_parser": "str", "tool_parser": "str", "metadata_server_config_file": "str",
    "server_role": "str", "otlp_traces_endpoint": "str", "disagg_cluster_uri": "str", "media_io_kwargs": "str",
    "chat_template": "str",
}
_CONFIG = ("--config", "--extra_llm_api_options")
_KV_FRACTION = ("--free_gpu_memory_fraction", "--kv_cache_free_gpu_memory_fraction")


def lookup(raw: str, tok: Tok) -> Opt:
    name = raw[2:] if raw.startswith("--") else raw
    if raw in _ALIASES:
        return Opt(_ALIASES[raw], "1", kind="int")
    if raw in _KV_FRACTION:
        return Opt("kv_cache_config", "1", kind="float", path=("free_gpu_memory_fraction",))
    if raw in _CONFIG:
        return Opt("extra_llm_api_options", "1", kind="str")
    if raw.startswith("--") and name in _FLAGS:
        return Opt(name, "0", kind="bool")
    if raw.startswith("--") and name in _VALUES:
        return Opt(name, "1", kind=_VALUES[name])
    hint = ""
    fixed = raw.replace("-", "_").replace("__", "--", 1) if raw.startswith("--") else raw
    if fixed != raw and (fixed in _ALIASES or fixed[2:] in _FLAGS or fixed[2:] in _VALUES or fixed in _CONFIG):
        hint = f" ({fixed} is)"
    return Opt(raw.lstrip("-").replace("-", "_"), "?", reason=f"{raw}: not a trtllm-serve option at {tok.src}{hint}")


def _merge_file(b: Builder, data: Mapping[str, Any], f: File) -> None:
    for key, raw in data.items():
        value = configfile.clean(b, key, raw, f)
        if key in b.args:
            old = b.args[key]
            if key == "kv_cache_config" and isinstance(old, dict) and isinstance(value, dict):
                lost = sorted(k for k in old if k not in value)
                if lost:
                    b.note(f"kv_cache_config in {f.path} replaces the command line's ({', '.join(lost)} "
                           f"dropped: TRT-LLM merges the file shallowly, the file wins)")
            if old != value:
                b.note(f"{key}: {f.path} overrides the command line ({b.sources.get(key, '?')})")
        b.args[key] = value
        b.sources[key] = f.src


def normalize(toks: Sequence[Tok], files: Mapping[str, File] | None, env: Mapping[str, str]) -> Command:
    b = Builder("trtllm", toks, env)
    config: list[Tok] = []

    def on_value(opt: Opt, name: str, values: Sequence[Tok], tok: Tok) -> None:
        if opt.dest == "extra_llm_api_options" and values:
            config.append(values[0])
        if opt.dest == "custom_module_dirs" and values:  # click multiple=True
            old = b.args.get(opt.dest)
            b.put(opt.dest, [*(old if isinstance(old, list) else []), values[0].text if values[0].known else None],
                  tok.src)
            return
        store(b, opt, values, tok)
        if opt.dest == "backend" and b.args.get("backend") == "trt":
            b.args["backend"] = "tensorrt"
            b.note("--backend trt is an alias of tensorrt")

    walk(toks, b, lookup, on_value, b.positional_model)
    if config:
        data, f = configfile.load(b, "--extra_llm_api_options", config[-1], files)
        if f is not None:
            _merge_file(b, data, f)
    return b.done(spec_of("trtllm", b.args))
