"""Classification of canonical serve keys (InferenceX sign-off lists) and the shipped defaults table."""

from __future__ import annotations

import ast
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bot.recipes import classes
from bot.recipes.classes import classify, classify_env, defaults_for, version_of
from bot.recipes.model import CLASSES
from tests.conftest import ROOT

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
TABLE = ROOT / "bot" / "recipes" / "tables" / "classes.json"


@pytest.mark.parametrize(("engine", "key", "klass"), [
    # MAJOR: parallelism, quantization, kv-cache dtype, backends, allreduce fusion, compilation passes
    ("vllm", "model", "MAJOR"),
    ("vllm", "tensor_parallel_size", "MAJOR"),
    ("vllm", "data_parallel_size", "MAJOR"),
    ("vllm", "enable_expert_parallel", "MAJOR"),
    ("vllm", "quantization", "MAJOR"),
    ("vllm", "kv_cache_dtype", "MAJOR"),
    ("vllm", "attention_config.backend", "MAJOR"),
    ("vllm", "kernel_config.moe_backend", "MAJOR"),
    ("vllm", "compilation_config.pass_config.fuse_allreduce_rms", "MAJOR"),
    ("vllm", "compilation_config.mode", "MAJOR"),
    ("sglang", "tp_size", "MAJOR"),
    ("sglang", "ep_size", "MAJOR"),
    ("sglang", "enable_dp_attention", "MAJOR"),
    ("sglang", "attention_backend", "MAJOR"),
    ("sglang", "moe_runner_backend", "MAJOR"),
    ("sglang", "fp8_gemm_runner_backend", "MAJOR"),
    ("sglang", "enable_flashinfer_allreduce_fusion", "MAJOR"),
    # MAJOR-spec: speculative decoding and the draft model
    ("vllm", "speculative_config.method", "MAJOR-spec"),
    ("vllm", "speculative_config.num_speculative_tokens", "MAJOR-spec"),
    ("vllm", "speculative_config.model", "MAJOR-spec"),
    ("vllm", "speculative_config.attention_backend", "MAJOR-spec"),  # the spec config wins over "backend"
    ("sglang", "speculative_algorithm", "MAJOR-spec"),
    ("sglang", "speculative_num_draft_tokens", "MAJOR-spec"),
    ("sglang", "speculative_draft_model_path", "MAJOR-spec"),
    # tuning: batch / graph / memory sizes, intervals
    ("vllm", "max_num_seqs", "tuning"),
    ("vllm", "max_num_batched_tokens", "tuning"),
    ("vllm", "gpu_memory_utilization", "tuning"),
    ("vllm", "compilation_config.cudagraph_capture_sizes", "tuning"),
    ("vllm", "compilation_config.max_cudagraph_capture_size", "tuning"),
    ("vllm", "stream_interval", "tuning"),
    ("sglang", "mem_fraction_static", "tuning"),
    ("sglang", "chunked_prefill_size", "tuning"),
    ("sglang", "cuda_graph_max_bs_decode", "tuning"),
    ("sglang", "scheduler_recv_interval", "tuning"),
    ("sglang", "max_running_requests", "tuning"),
    # harness
    ("vllm", "host", "harness"),
    ("vllm", "port", "harness"),
    ("vllm", "served_model_name", "harness"),
    ("vllm", "max_model_len", "harness"),
    ("vllm", "enable_prefix_caching", "harness"),
    ("vllm", "trust_remote_code", "harness"),
    ("vllm", "disable_log_requests", "harness"),
    ("sglang", "context_length", "harness"),
    ("sglang", "disable_radix_cache", "harness"),
    ("sglang", "log_level", "harness"),
    # feature
    ("vllm", "tool_call_parser", "feature"),
    ("vllm", "reasoning_parser", "feature"),
    ("vllm", "enable_auto_tool_choice", "feature"),
    ("vllm", "chat_template", "feature"),
    ("vllm", "mm_encoder_tp_mode", "feature"),
    ("vllm", "default_chat_template_kwargs.enable_thinking", "feature"),
    ("sglang", "reasoning_parser", "feature"),
    ("sglang", "tool_call_parser", "feature"),
])
def test_known_keys(engine: str, key: str, klass: str) -> None:
    assert classify(engine, key) == klass


@pytest.mark.parametrize(("key", "klass"), [
    ("some_new_backend", "MAJOR"),
    ("enable_new_allreduce_fusion", "MAJOR"),
    ("moe_something", "MAJOR"),
    ("weight_quant_mode", "MAJOR"),
    ("new_ep_size", "MAJOR"),
    ("speculative_new_knob", "MAJOR-spec"),
    ("draft_tensor_parallel_size", "MAJOR-spec"),
    ("max_something_size", "tuning"),
    ("frobnicate", "tuning"),
    ("separate", "tuning"),  # "ep" only as a word, not inside one
])
def test_unknown_keys_by_name(key: str, klass: str) -> None:
    assert classify("vllm", key) == klass
    assert classify("sglang", key) == klass
    assert classify("trtllm", key) == klass  # an engine without a table: the name decides


@pytest.mark.parametrize(("name", "klass"), [
    ("VLLM_USE_DEEP_GEMM", "MAJOR"),
    ("VLLM_USE_FLASHINFER_MOE_FP4", "MAJOR"),
    ("VLLM_ALL2ALL_BACKEND", "MAJOR"),
    ("SGLANG_ENABLE_JIT_DEEPGEMM", "MAJOR"),
    ("AITER_ENABLE_VSKIP", "MAJOR"),
    ("SGLANG_ENABLE_SPEC_V2", "MAJOR-spec"),
    ("VLLM_MTP_RETURN_NORMALIZED_HIDDEN", "MAJOR-spec"),
    ("VLLM_LOGGING_LEVEL", "harness"),
    ("VLLM_ENGINE_READY_TIMEOUT_S", "harness"),
    ("VLLM_HOST_IP", "harness"),
    ("CUDA_VISIBLE_DEVICES", "harness"),
    ("ROCR_VISIBLE_DEVICES", "harness"),
    ("HF_HUB_OFFLINE", "harness"),
    ("NCCL_DEBUG", "harness"),
    ("NCCL_NVLS_ENABLE", "tuning"),
    ("OMP_NUM_THREADS", "tuning"),
    ("PYTORCH_CUDA_ALLOC_CONF", "tuning"),
    ("NCCL_ALGO_ALLREDUCE", "MAJOR"),  # the name says allreduce
])
def test_env(name: str, klass: str) -> None:
    assert classify_env(name) == klass
    assert classify("vllm", f"env.{name}") == klass


def test_every_class_is_one_of_classes() -> None:
    for engine in ("vllm", "sglang", "trtllm", "atom"):
        for key in ("model", "x", "tp_size", "env.VLLM_X", "speculative_config.method", "port"):
            assert classify(engine, key) in CLASSES


def test_table_shape() -> None:
    raw: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    for engine, by_class in raw["classes"].items():
        assert set(by_class) <= set(CLASSES), engine
        seen: set[str] = set()
        for names in by_class.values():
            assert names == sorted(names)
            assert not seen & set(names), f"{engine}: in two classes: {seen & set(names)}"
            seen |= set(names)
    assert set(raw["defaults"]) == {"vllm", "sglang"}
    assert TABLE.read_text(encoding="utf-8") == json.dumps(raw, indent=1, sort_keys=True) + "\n"


def test_table_ships() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "*.json" in data["bot.recipes.tables"]
    assert classes.table().defaults["vllm"].version == "0.25.1"


def test_defaults() -> None:
    vllm = defaults_for("vllm")
    sglang = defaults_for("sglang")
    assert vllm is not None and sglang is not None
    assert (vllm.version, vllm.values["gpu_memory_utilization"]) == ("0.25.1", 0.92)  # recipes.md 4.1 rule 4
    assert (sglang.version, sglang.values["kv_cache_dtype"], sglang.values["port"]) == ("0.5.14", "auto", 30000)
    assert defaults_for("trtllm") is None


@pytest.mark.parametrize(("text", "version"), [
    ("0.25.1", "0.25.1"), ("v0.25.1", "0.25.1"), ("vllm/vllm-openai:v0.25.1", "0.25.1"),
    ("lmsysorg/sglang:v0.5.14-cu130", "0.5.14"), ("nightly", None), (None, None), ("", None),
])
def test_version_of(text: str | None, version: str | None) -> None:
    assert version_of(text) == version


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")
def test_sglang_table_agrees_with_the_wheel_data() -> None:
    """SGLang defaults: every CLI field's literal default (no None, empty text or JSON text); class
    names: real fields or option strings of SGLang 0.5.14."""
    serverargs = json.loads((DATA / "sglang_0.5.14_serverargs.json").read_text(encoding="utf-8"))
    options = json.loads((DATA / "sglang_0.5.14_option_strings.json").read_text(encoding="utf-8"))
    expected: dict[str, Any] = {}
    for name, f in serverargs["fields"].items():
        if f["no_cli"]:
            continue
        try:
            value = ast.literal_eval(f["default"])
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (bool, int, float, str)) and value != "" and not str(value).startswith(("{", "[")):
            expected[name] = value
    sglang = defaults_for("sglang")
    assert sglang is not None and dict(sglang.values) == expected
    known = set(serverargs["fields"]) | {o.lstrip("-").replace("-", "_") for o in options}
    listed = {k for k, c in classes.table().classes["sglang"].items()}
    assert listed - known == set()
