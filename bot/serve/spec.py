"""Speculative-decoding settings of a normalized command, in engine-neutral keys (SPEC_KEYS).

``spec_of(engine, args)`` reads the engine's own canonical args (after normalization) and
returns a dict with exactly SPEC_KEYS (None where the command does not say), or None when
the command has no speculative settings at all.

- vLLM: ``speculative_config`` {method, model, num_speculative_tokens, rejection_sample_method,
  synthetic_acceptance_rate/length, draft_sample_method}; ``*_mtp`` methods are the
  deprecated aliases of ``mtp`` (method and kind "mtp").
- SGLang: ``speculative_algorithm`` (NEXTN is EAGLE), num_steps / eagle_topk /
  num_draft_tokens, ``speculative_draft_model_path``. Kind: EAGLE without a draft -> "mtp"
  (the model's own heads), with a draft -> "eagle"; EAGLE3 -> "eagle3"; NGRAM -> "ngram";
  STANDALONE -> "draft_model". ``num_speculative_tokens`` is num_steps.
- TRT-LLM: ``speculative_config`` {decoding_type, num_nextn_predict_layers | max_draft_len,
  speculative_model_dir | speculative_model}.
- ATOM: ``method``, ``num_speculative_tokens``, ``draft_model`` (semantics unverified).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.serve.model import SPEC_KEYS

_SGLANG_KIND = {"EAGLE3": "eagle3", "NGRAM": "ngram", "STANDALONE": "draft_model", "DFLASH": "dflash"}
_TRT_KIND = {"mtp": "mtp", "eagle3": "eagle3", "eagle": "eagle", "ngram": "ngram", "draft_target": "draft_model",
             "drafttarget": "draft_model", "medusa": "medusa", "lookahead": "lookahead"}


def _empty() -> dict[str, Any]:
    return dict.fromkeys(SPEC_KEYS)


def _get(d: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None


def spec_of(engine: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
    if engine == "vllm":
        return _vllm(args)
    if engine == "sglang":
        return _sglang(args)
    if engine == "trtllm":
        return _trtllm(args)
    if engine == "atom":
        return _atom(args)
    return None


def _vllm(args: Mapping[str, Any]) -> dict[str, Any] | None:
    if "speculative_config" not in args:
        return None
    out = _empty()
    sc = args["speculative_config"]
    if not isinstance(sc, Mapping):
        return out  # on, but unreadable (unknown or not JSON): the reason is in Command.unknown
    method = sc.get("method")
    if isinstance(method, str):
        low = method.lower()
        out["method"] = "mtp" if low.endswith("_mtp") else method
        out["kind"] = "mtp" if low == "mtp" or low.endswith("_mtp") else low
    out["num_speculative_tokens"] = sc.get("num_speculative_tokens")
    out["draft_model"] = sc.get("model")
    for key in ("rejection_sample_method", "synthetic_acceptance_rate", "synthetic_acceptance_length",
                "draft_sample_method"):
        out[key] = sc.get(key)
    return out


def _sglang(args: Mapping[str, Any]) -> dict[str, Any] | None:
    keys = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
            "speculative_num_draft_tokens", "speculative_draft_model_path")
    if not any(k in args for k in keys):
        return None
    out = _empty()
    alg = args.get("speculative_algorithm")
    draft = args.get("speculative_draft_model_path")
    if isinstance(alg, str):
        upper = alg.upper()
        method = "EAGLE" if upper == "NEXTN" else upper  # speculative_hook.py:42-50
        out["method"] = method
        if method == "EAGLE":
            out["kind"] = "eagle" if draft else "mtp"
        else:
            out["kind"] = _SGLANG_KIND.get(method, method.lower())
    out["num_steps"] = args.get("speculative_num_steps")
    out["num_speculative_tokens"] = out["num_steps"]
    out["eagle_topk"] = args.get("speculative_eagle_topk")
    out["num_draft_tokens"] = args.get("speculative_num_draft_tokens")
    out["draft_model"] = draft
    return out


def _trtllm(args: Mapping[str, Any]) -> dict[str, Any] | None:
    if "speculative_config" not in args:
        return None
    out = _empty()
    sc = args["speculative_config"]
    if not isinstance(sc, Mapping):
        return out
    dtype = sc.get("decoding_type")
    if isinstance(dtype, str):
        out["method"] = dtype
        out["kind"] = _TRT_KIND.get(dtype.lower().replace("-", "_"), dtype.lower())
    out["num_speculative_tokens"] = _get(sc, "num_nextn_predict_layers", "max_draft_len")
    out["draft_model"] = _get(sc, "speculative_model_dir", "speculative_model")
    return out


def _atom(args: Mapping[str, Any]) -> dict[str, Any] | None:
    if not any(k in args for k in ("method", "num_speculative_tokens", "draft_model")):
        return None
    out = _empty()
    method = args.get("method")
    if isinstance(method, str):
        out["method"] = method
        out["kind"] = "mtp" if method.lower().endswith("mtp") else method.lower()
    out["num_speculative_tokens"] = args.get("num_speculative_tokens")
    out["draft_model"] = args.get("draft_model")
    return out
