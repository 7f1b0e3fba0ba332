"""vLLM ``vllm serve`` arguments -> argparse dest names (vLLM 0.25.1, recipes.md 4.2).

- the model: the positional argument, or ``--model X`` (deprecated with ``vllm serve``);
- short flags from the shipped table (``-tp``, ``-sc``, ``-cc``, ``-asc``, ...) and
  ``-O3`` / ``-O 3`` / ``-O=3`` -> ``optimization_level``;
- ``--foo_bar`` == ``--foo-bar`` (underscores converted before the first ``.``);
- ``--X.a.b v`` merged into the dict X, ``--X.k+ v`` appends (values JSON-parsed, as
  FlexibleArgumentParser does); ``--spec-method/--spec-model/--spec-tokens`` -> keys of
  ``speculative_config``;
- bare flag -> true, ``--no-X`` -> X false; a small table of flags that take no value
  (so that they never swallow a following word) and of list flags (nargs ``+``); any other
  flag takes at most one value;
- ``--config F``: the YAML keys are applied first (they are inserted after the model), so
  command-line flags win.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.serve import configfile, tables
from bot.serve.argv import Builder, Opt, convert, store, walk
from bot.serve.model import Command, File, Tok
from bot.serve.spec import spec_of

# Flags that take no value (store_true / BooleanOptionalAction), by dest.
BOOL_FLAGS = frozenset({
    "trust_remote_code", "enable_expert_parallel", "enable_prefix_caching", "enable_chunked_prefill",
    "enforce_eager", "async_scheduling", "language_model_only", "enable_auto_tool_choice",
    "disable_log_requests", "enable_log_requests", "disable_log_stats", "disable_uvicorn_access_log",
    "enable_eplb", "enable_dbo", "enable_sleep_mode", "disable_custom_all_reduce", "enable_lora",
    "skip_tokenizer_init", "disable_cascade_attn", "disable_sliding_window", "headless",
    "data_parallel_hybrid_lb", "data_parallel_external_lb", "data_parallel_multi_port_external_lb",
    "enable_prompt_tokens_details", "enable_force_include_usage", "enable_server_load_tracking",
    "enable_log_outputs", "enable_flashinfer_autotune", "disable_hybrid_kv_cache_manager",
    "enable_ep_weight_filter", "kv_sharing_fast_prefill", "calculate_kv_scales", "enable_cumem_allocator",
    "enable_return_routed_experts", "disable_fastapi_docs", "enable_request_id_headers",
})
# Flags that take one or more values (nargs="+"), by dest.
LIST_FLAGS = frozenset({
    "cudagraph_capture_sizes", "middleware", "served_model_name", "allowed_origins", "allowed_methods",
    "allowed_headers", "lora_modules", "prompt_adapters", "allowed_local_media_path",
})
# Flags whose value is a JSON object (also parsed when any value starts with { or [).
JSON_FLAGS = frozenset({
    "speculative_config", "compilation_config", "attention_config", "kv_transfer_config", "kernel_config",
    "kv_events_config", "diffusion_config", "hf_overrides", "override_generation_config",
    "limit_mm_per_prompt", "mm_processor_kwargs", "model_loader_extra_config", "default_chat_template_kwargs",
    "chat_template_kwargs", "ec_transfer_config", "structured_outputs_config", "pass_config",
})
SPEC_SHORTHANDS = {  # arg_utils.py:1516-1521, 1724-1737
    "spec_method": "method", "spec_model": "model", "spec_tokens": "num_speculative_tokens",
}
_UNDERSCORES = re.compile(r"(?<=--)[^.]*")


def flexible(name: str) -> str:
    """FlexibleArgumentParser: underscores -> dashes in the part before the first ``.``."""
    if name.startswith("--"):
        return _UNDERSCORES.sub(lambda m: m.group(0).replace("_", "-"), name, count=1)
    return name


def _dest_of(head: str) -> str | None:
    """``--tensor-parallel-size`` / ``-tp`` -> ``tensor_parallel_size``."""
    if head.startswith("--"):
        return head[2:].replace("-", "_") or None
    return tables.vllm().short.get(head)


def lookup(raw: str, tok: Tok) -> Opt:
    name = flexible(raw)
    head, dot, rest = name.partition(".")
    if dot:
        dest = _dest_of(head)
        if dest is None or not rest:
            return Opt(name.lstrip("-").replace("-", "_"), "1", reason=f"{raw}: not a vLLM option at {tok.src}")
        append = rest.endswith("+")
        keys = tuple(rest.rstrip("+").split("."))
        return Opt(dest, "1", kind="dotted", path=keys, append=append)
    dest = _dest_of(name)
    if dest is None:
        return Opt(name.lstrip("-").replace("-", "_"), "?", reason=f"{raw}: not a vLLM option at {tok.src}")
    notes: tuple[str, ...] = ()
    if name.startswith("-") and not name.startswith("--"):
        notes = (f"{raw} -> --{dest.replace('_', '-')} (vLLM short alias)",)
    if dest in SPEC_SHORTHANDS:
        key = SPEC_SHORTHANDS[dest]
        return Opt("speculative_config", "1", kind="int" if key == "num_speculative_tokens" else "str",
                   path=(key,), notes=(f"{raw} -> speculative_config.{key}",))
    if dest == "attention_backend":
        notes += ("--attention-backend: vLLM applies it as attention_config.backend (arg_utils.py:2217-2227)",)
    if dest.startswith("no_") and (dest[3:] in BOOL_FLAGS or dest[3:] not in LIST_FLAGS | JSON_FLAGS):
        return Opt(dest[3:], "0", const={dest[3:]: False}, notes=notes)
    if dest in BOOL_FLAGS:
        return Opt(dest, "0", kind="bool", notes=notes)
    if dest in LIST_FLAGS:
        return Opt(dest, "+", kind="list", notes=notes)
    if dest in ("model", "config"):
        return Opt(dest, "1", kind="str", notes=notes)
    return Opt(dest, "?", kind="json" if dest in JSON_FLAGS else "any", notes=notes)


def _optimization_level(toks: Sequence[Tok]) -> list[Tok]:
    """``-O3`` / ``-O=3`` / ``-O 3`` -> ``--optimization-level 3`` (argparse_utils.py:322-331)."""
    out: list[Tok] = []
    for i, t in enumerate(toks):
        if t.text.startswith("-O") and t.text != "-O" and not t.text.startswith("--"):
            level = t.text[3:] if t.text[2:3] == "=" else t.text[2:]
            out += [Tok("--optimization-level", t.src), Tok(level, t.src)]
        elif t.text == "-O" and i + 1 < len(toks) and toks[i + 1].text in ("0", "1", "2", "3"):
            out.append(Tok("--optimization-level", t.src))
        else:
            out.append(t)
    return out


def _split_config(toks: Sequence[Tok]) -> tuple[list[Tok], tuple[Tok, Tok] | None]:
    """The tokens without ``--config F`` (the first one), and (flag, file) if given."""
    for i, t in enumerate(toks):
        if t.text == "--config" and i + 1 < len(toks):
            return [*toks[:i], *toks[i + 2:]], (t, toks[i + 1])
        if t.text.startswith("--config="):
            return [*toks[:i], *toks[i + 1:]], (t, Tok(t.text[len("--config="):], t.src))
    return list(toks), None


def _apply_config(b: Builder, data: Mapping[str, Any], f: File) -> None:
    """YAML keys as flags (argparse_utils.py load_config_file: true -> bare flag, false ->
    ``--no-key``, list -> values, dict -> JSON)."""
    src = f.src
    for key, raw in data.items():
        fake = Tok("--" + key, src)
        opt = lookup(fake.text, fake)
        if opt.reason:
            b.reason(f"{key} in {f.path}: not a vLLM option (written at {src})")
        value = configfile.clean(b, opt.dest, raw, f)
        if opt.dest == "model":
            if b.model is None and "model" not in b.sources:
                b.model = value if isinstance(value, str) else None
                b.sources["model"] = src
            continue
        if opt.const is not None and isinstance(value, bool):
            b.put(opt.dest, not value, src)  # "no-x: true" -> x false
            continue
        if isinstance(value, str):
            value = convert(b, opt.dest, value, src, opt.kind)
        if opt.path:
            b.merge(opt.dest, opt.path, value, src, append=opt.append)
        else:
            b.put(opt.dest, value, src)


def normalize(toks: Sequence[Tok], files: Mapping[str, File] | None, env: Mapping[str, str]) -> Command:
    b = Builder("vllm", toks, env)
    rest, config = _split_config(_optimization_level(toks))
    from_config: dict[str, str] = {}
    if config is not None:
        flag, value = config
        data, f = configfile.load(b, "--config", value, files)
        if f is not None and data:
            _apply_config(b, data, f)
            from_config = {d: f.path for d in b.args}
        b.sources.setdefault("config", flag.src)

    def on_value(opt: Opt, name: str, values: Sequence[Tok], tok: Tok) -> None:
        if opt.dest in from_config and not opt.path:
            b.note(f"{opt.dest}: the command line ({tok.src}) overrides --config {from_config[opt.dest]}")
        if opt.dest == "model":
            b.note(f"model given with {name} at {tok.src} (vllm serve takes it as the positional argument)")
            if values:
                b.put_model(values[0], tok.src)
            return
        store(b, opt, values, tok)

    walk(rest, b, lookup, on_value, b.positional_model)
    _speculative_notes(b)
    return b.done(spec_of("vllm", b.args))


def _speculative_notes(b: Builder) -> None:
    sc = b.args.get("speculative_config")
    if isinstance(sc, dict):
        method = sc.get("method")
        if isinstance(method, str) and method.endswith("_mtp"):
            b.note(f"speculative method {method!r} is a deprecated alias of 'mtp' (vllm/config/speculative.py)")
    elif isinstance(sc, str) and not sc.lstrip().startswith(("{", "[")):
        b.reason(f"speculative_config: not a JSON object ({sc!r})")
