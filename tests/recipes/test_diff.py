"""The normalized diff between a script's serve command and a recipe's (bot.recipes.diff).

Both sides go through the real normalizers: scripts through ``bot.serve.normalize`` from argv
words (one word per line, so ``where`` is checkable), recipes through ``recipe_command``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

import pytest

from bot.recipes.diff import (
    OPAQUE_NOTE,
    RECIPE_UNKNOWN_NOTE,
    UNKNOWN_NOTE,
    coerce,
    diff,
    flatten,
    recipe_command,
    same,
)
from bot.recipes.model import CLASSES, Difference, Provenance, Rendered
from bot.serve import normalize
from bot.serve.model import MARK, Command, File, Tok
from tests.serve.helpers import lined

RECIPE_PATH = "models/zai-org/GLM-5.yaml"
ATTENTION_NOTE = "script: --attention-backend: vLLM applies it as attention_config.backend (arg_utils.py:2217-2227)"


def script(engine: str, line: str, files: Mapping[str, File] | None = None,
           env: Mapping[str, str] | None = None) -> Command:
    """A script's command: word i of ``line`` (shell-split) is on s.sh line i + 1."""
    return normalize(engine, lined(*shlex.split(line)), files, env)


def recipe(engine: str, line: str, env: Mapping[str, str] | None = None) -> Command:
    r = Rendered(engine, tuple(shlex.split(line)), tuple((env or {}).items()),
                 Provenance("vllm-project/recipes", "8959cf6", RECIPE_PATH, (("hardware", "b200"),)))
    return recipe_command(r)


def at(line: str, word: str) -> str:
    """Where ``script(engine, line)`` has ``word`` (its first occurrence)."""
    return f"s.sh:{shlex.split(line).index(word) + 1}"


def keys(ds: list[Difference]) -> dict[str, str]:
    return {d.key: d.status for d in ds}


# --- recipe_command ------------------------------------------------------------------------------------------


def test_recipe_command_normalizes_like_a_script() -> None:
    c = recipe("vllm", "zai-org/GLM-5 -tp 8 --trust-remote-code", {"VLLM_USE_DEEP_GEMM": "1"})
    assert c.model == "zai-org/GLM-5"
    assert c.args == {"tensor_parallel_size": 8, "trust_remote_code": True}
    assert c.sources == {"model": RECIPE_PATH, "tensor_parallel_size": RECIPE_PATH, "trust_remote_code": RECIPE_PATH}
    assert c.env == {"VLLM_USE_DEEP_GEMM": "1"}
    s = recipe("sglang", "--model-path zai-org/GLM-5 --tp-size 8")
    assert (s.engine, s.model, s.args["tp_size"]) == ("sglang", "zai-org/GLM-5", 8)


# --- normalization both sides share --------------------------------------------------------------------------


@pytest.mark.parametrize(("engine", "script_line", "recipe_line"), [
    ("vllm", "M -tp 8", "M --tensor-parallel-size 8"),
    ("vllm", "M --tensor_parallel_size=8 -ep", "M --tensor-parallel-size 8 --enable-expert-parallel"),
    ("sglang", "--model-path M --tp 8", "--model M --tp-size 8"),
    ("sglang", "--model-path M --tensor-parallel-size 8 --dp 2", "--model-path M --tp-size 8 --dp-size 2"),
    ("vllm", "M --speculative-config.method mtp --speculative-config.num_speculative_tokens 3",
     """M --speculative-config '{"method":"mtp","num_speculative_tokens":3}'"""),
    ("vllm", "M --spec-method mtp --spec-tokens 3", """M -sc '{"method": "mtp", "num_speculative_tokens": 3}'"""),
    ("vllm", "M --speculative-config.method deepseek_mtp", """M --speculative-config '{"method":"mtp"}'"""),
    ("vllm", "M --compilation_config.pass_config.fuse_allreduce_rms true",
     """M -cc '{"pass_config": {"fuse_allreduce_rms": true}}'"""),
    ("sglang", "--model-path M --speculative-algorithm NEXTN", "--model-path M --speculative-algorithm EAGLE"),
    ("sglang", "--model-path M --speculative-algo nextn", "--model-path M --speculative-algorithm EAGLE"),
    ("sglang", "--model-path M --cuda-graph-max-bs 128", "--model-path M --cuda-graph-max-bs-decode 128"),
    ("vllm", "M --kv-cache-dtype fp8", "M --kv-cache-dtype fp8_e4m3"),
    ("vllm", "M --attention-backend flashinfer_mla", """M -ac '{"backend": "FLASHINFER_MLA"}'"""),
    ("vllm", "M --moe-backend flashinfer-cutlass", """M --kernel-config '{"moe_backend": "flashinfer_cutlass"}'"""),
    ("vllm", "M --max-cudagraph-capture-size 512", "M -cc.max_cudagraph_capture_size=512"),
    ("vllm", "M --no-enable-prefix-caching", "M --enable-prefix-caching=false"),
    ("vllm", """M -sc '{"num_speculative_tokens": "3", "x": "true", "y": "0.5"}'""",
     """M -sc '{"num_speculative_tokens": 3, "x": true, "y": 0.5}'"""),
    ("vllm", "M --served-model-name glm5", "M --served-model-name glm5"),
], ids=lambda v: v if len(v) < 40 else v[:40])
def test_spellings_that_are_equal(engine: str, script_line: str, recipe_line: str) -> None:
    s, r = script(engine, script_line), recipe(engine, recipe_line)
    assert diff(s, r) == []
    assert all(d.status == "match" for d in diff(s, r, include_matches=True))


def test_matches_are_listed_on_request_with_their_notes() -> None:
    line = "M -tp 8 --kv-cache-dtype fp8 --attention-backend flashinfer_mla"
    s = script("vllm", line)
    r = recipe("vllm", """M -tp 8 --kv-cache-dtype fp8_e4m3 -ac '{"backend":"FLASHINFER_MLA"}'""")
    assert diff(s, r) == []
    assert diff(s, r, include_matches=True) == [
        Difference("attention_config.backend", "MAJOR", "match", "FLASHINFER_MLA", "FLASHINFER_MLA",
                   at(line, "--attention-backend"),
                   (ATTENTION_NOTE,)),
        Difference("kv_cache_dtype", "MAJOR", "match", "fp8_e4m3", "fp8_e4m3", at(line, "--kv-cache-dtype"),
                   ("script: kv_cache_dtype 'fp8' is fp8_e4m3 on CUDA/ROCm (vllm/config/cache.py:78)",)),
        Difference("model", "MAJOR", "match", "M", "M", "s.sh:1"),
        Difference("tensor_parallel_size", "MAJOR", "match", 8, 8, at(line, "-tp")),
    ]


def test_sglang_kv_cache_dtypes_are_not_folded() -> None:
    """SGLang has no "fp8" alias to fold: fp8_e4m3 and fp8_e5m2 are different choices."""
    ds = diff(script("sglang", "--model-path M --kv-cache-dtype fp8_e5m2"),
              recipe("sglang", "--model-path M --kv-cache-dtype fp8_e4m3"))
    assert ds == [Difference("kv_cache_dtype", "MAJOR", "value-differs", "fp8_e4m3", "fp8_e5m2", "s.sh:3")]


def test_vllm_config_file_against_flags() -> None:
    files = {"/tmp/c.yaml": File("/tmp/c.yaml", (
        "tensor-parallel-size: 8\n"
        "no-enable-prefix-caching: true\n"
        "max-num-batched-tokens: 8192\n"
        "speculative-config: '{\"method\": \"eagle3\", \"model\": \"nvidia/gpt-oss-120b-Eagle3\", "
        "\"num_speculative_tokens\": 3}'\n"
        "compilation-config:\n  pass_config:\n    fuse_allreduce_rms: true\n"
    ), "s.sh:3")}
    s = script("vllm", "openai/gpt-oss-120b --config /tmp/c.yaml --max-num-seqs 512", files)
    r = recipe("vllm", "openai/gpt-oss-120b -tp 8 --no-enable-prefix-caching --max-num-batched-tokens 16384 "
                       """-sc '{"method":"eagle3","model":"nvidia/gpt-oss-120b-Eagle3","num_speculative_tokens":3}' """
                       "--compilation-config.pass_config.fuse_allreduce_rms true --max-num-seqs 512")
    assert diff(s, r) == [
        Difference("max_num_batched_tokens", "tuning", "value-differs", 16384, 8192, "s.sh:3"),
    ]


def test_bools_equal_only_bools() -> None:
    ds = diff(script("vllm", """M -cc '{"pass_config": {"fuse_allreduce_rms": 1}}'"""),
              recipe("vllm", "M -cc.pass_config.fuse_allreduce_rms true"))
    assert keys(ds) == {"compilation_config.pass_config.fuse_allreduce_rms": "value-differs"}


# --- env -----------------------------------------------------------------------------------------------------


def test_env_only_engine_variables() -> None:
    s = script("vllm", "M", env={"VLLM_USE_DEEP_GEMM": "0", "HOME": "/root", "NCCL_DEBUG": "INFO",
                                 "ROCR_VISIBLE_DEVICES": "0,1", "VLLM_LOGGING_LEVEL": "DEBUG", "RESULT_DIR": "/r"})
    r = recipe("vllm", "M", env={"VLLM_USE_DEEP_GEMM": "1", "VLLM_USE_FLASHINFER_MOE_FP4": "1",
                                 "VLLM_LOGGING_LEVEL": "DEBUG"})
    assert diff(s, r) == [
        Difference("env.VLLM_USE_DEEP_GEMM", "MAJOR", "value-differs", "1", "0"),
        Difference("env.VLLM_USE_FLASHINFER_MOE_FP4", "MAJOR", "missing-in-script", "1", None),
        Difference("env.NCCL_DEBUG", "harness", "extra-in-script", None, "INFO"),
        Difference("env.ROCR_VISIBLE_DEVICES", "harness", "extra-in-script", None, "0,1"),
    ]


def test_env_notes_of_the_normalizer_are_kept() -> None:
    ds = diff(script("sglang", "--model-path M", env={"SGLANG_ENABLE_SPEC_V2": "1"}),
              recipe("sglang", "--model-path M"))
    assert ds == [Difference("env.SGLANG_ENABLE_SPEC_V2", "MAJOR-spec", "extra-in-script", None, "1", None,
                             ("script: SGLANG_ENABLE_SPEC_V2 has no effect from SGLang 0.5.14 on "
                              "(speculative_hook.py:67-74)",))]


def test_unknown_env_value() -> None:
    ds = diff(script("vllm", "M", env={"VLLM_USE_DEEP_GEMM": MARK}),
              recipe("vllm", "M", env={"VLLM_USE_DEEP_GEMM": "1"}))
    assert ds == [Difference("env.VLLM_USE_DEEP_GEMM", "MAJOR", "match", "1", MARK, None, (UNKNOWN_NOTE,))]


# --- defaults ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "status", "note"), [
    ("v0.25.1", "default-equivalent", "0.92 is the vllm 0.25.1 default (defaults table used: vllm 0.25.1)"),
    (None, "default-equivalent",
     "0.92 is the vllm default (defaults table used: vllm 0.25.1; the engine version was not given)"),
    ("0.24.0", "extra-in-script",
     "0.92 is the vllm 0.25.1 default, but the engine is 0.24.0, whose default is not known here"),
])
def test_default_equivalent_by_version(version: str | None, status: str, note: str) -> None:
    ds = diff(script("vllm", "M --gpu-memory-utilization 0.92"), recipe("vllm", "M"), version)
    assert ds == [Difference("gpu_memory_utilization", "tuning", status, None, 0.92, "s.sh:2", (note,))]


def test_default_equivalent_either_side_and_sglang() -> None:
    ds = diff(script("sglang", "--model-path M --mem-fraction-static 0.8"),
              recipe("sglang", "--model-path M --kv-cache-dtype auto --tp-size 1 --mem-fraction-static 0.8"), "0.5.14")
    assert ds == [
        Difference("kv_cache_dtype", "MAJOR", "default-equivalent", "auto", None, None,
                   ("'auto' is the sglang 0.5.14 default (defaults table used: sglang 0.5.14)",)),
        Difference("tp_size", "MAJOR", "default-equivalent", 1, None, None,
                   ("1 is the sglang 0.5.14 default (defaults table used: sglang 0.5.14)",)),
    ]


def test_not_the_default_is_missing() -> None:
    ds = diff(script("sglang", "--model-path M"), recipe("sglang", "--model-path M --tp-size 8"), "0.5.14")
    assert ds == [Difference("tp_size", "MAJOR", "missing-in-script", 8, None)]


def test_no_defaults_known_for_the_key() -> None:
    ds = diff(script("vllm", "M --max-num-seqs 256"), recipe("vllm", "M"), "0.25.1")
    assert ds == [Difference("max_num_seqs", "tuning", "extra-in-script", None, 256, "s.sh:2")]


# --- unknown values ------------------------------------------------------------------------------------------


def test_unknown_value_is_never_value_differs() -> None:
    s = script("vllm", f"M --max-num-seqs {MARK} -tp 8")
    ds = diff(s, recipe("vllm", "M --max-num-seqs 256 -tp 4"))
    assert ds == [
        Difference("tensor_parallel_size", "MAJOR", "value-differs", 4, 8, "s.sh:4"),
        Difference("max_num_seqs", "tuning", "match", 256, MARK, "s.sh:2", (UNKNOWN_NOTE,)),
    ]


def test_unknown_whole_json_stands_for_each_recipe_key() -> None:
    s = script("vllm", f"M --speculative-config {MARK}")
    r = recipe("vllm", """M --speculative-config '{"method":"mtp","num_speculative_tokens":3}'""")
    assert diff(s, r) == [
        Difference("speculative_config.method", "MAJOR-spec", "match", "mtp", MARK, "s.sh:2", (UNKNOWN_NOTE,)),
        Difference("speculative_config.num_speculative_tokens", "MAJOR-spec", "match", 3, MARK, "s.sh:2",
                   (UNKNOWN_NOTE,)),
    ]
    # the recipe without speculative decoding: the script's unknown config is extra, said unknown
    assert diff(s, recipe("vllm", "M")) == [
        Difference("speculative_config", "MAJOR-spec", "extra-in-script", None, MARK, "s.sh:2", (UNKNOWN_NOTE,)),
    ]


def test_partly_unknown_json() -> None:
    s = normalize("vllm", [Tok("M", "s.sh:1"), Tok("-sc", "s.sh:2"),
                           Tok('{"method": "mtp", "num_speculative_tokens": ' + MARK + '}', "s.sh:2")])
    r = recipe("vllm", """M -sc '{"method": "mtp", "num_speculative_tokens": 1}'""")
    assert diff(s, r) == [Difference("speculative_config.num_speculative_tokens", "MAJOR-spec", "match", 1, MARK,
                                     "s.sh:2", (UNKNOWN_NOTE,))]


def test_unknown_words_may_set_what_is_missing() -> None:
    s = normalize("vllm", [Tok("M", "s.sh:1"), Tok(MARK, "s.sh:2"), Tok(MARK, "s.sh:2")])
    ds = diff(s, recipe("vllm", "M -tp 8"))
    assert ds == [Difference("tensor_parallel_size", "MAJOR", "missing-in-script", 8, None, None, (OPAQUE_NOTE,))]


def test_unknown_model() -> None:
    ds = diff(script("vllm", f"{MARK} -tp 8"), recipe("vllm", "zai-org/GLM-5 -tp 8"))
    assert ds == [Difference("model", "MAJOR", "match", "zai-org/GLM-5", MARK, "s.sh:1", (UNKNOWN_NOTE,))]


def test_recipe_unknown_value() -> None:
    """Recipes are known text; the rule is symmetric all the same."""
    r = normalize("vllm", [Tok("M", "r:1"), Tok("-tp", "r:1"), Tok(MARK, "r:1")])
    assert diff(script("vllm", "M -tp 8"), r) == [
        Difference("tensor_parallel_size", "MAJOR", "match", MARK, 8, "s.sh:2", (RECIPE_UNKNOWN_NOTE,)),
    ]


# --- the model -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("served", "note"), [
    ("Zai-Org/glm-5", "differs only in letter case"),
    ("/models/GLM-5", "local path: its name is the recipe checkpoint's (glm-5); which weights it holds is not "
                      "known statically"),
    ("/root/.cache/huggingface/hub/models--zai-org--GLM-5/snapshots/abc",
     "local path: the Hugging Face cache of zai-org/GLM-5"),
    ("/data/weights/glm5-fp8", "local path"),
    ("someone/GLM-5", "same checkpoint name, another organization"),
])
def test_model_differences_are_said(served: str, note: str) -> None:
    ds = diff(script("vllm", f"{served} -tp 8"), recipe("vllm", "zai-org/GLM-5 -tp 8"))
    assert ds == [Difference("model", "MAJOR", "value-differs", "zai-org/GLM-5", served, "s.sh:1", (note,))]


def test_other_model() -> None:
    ds = diff(script("sglang", "--model-path zai-org/GLM-5-FP8"), recipe("sglang", "--model-path zai-org/GLM-5"))
    assert ds == [Difference("model", "MAJOR", "value-differs", "zai-org/GLM-5", "zai-org/GLM-5-FP8", "s.sh:1")]


def test_engines_differ() -> None:
    ds = diff(script("sglang", "--model-path M"), recipe("vllm", "M"))
    assert [(d.key, d.status, d.recipe, d.script) for d in ds] == [("engine", "value-differs", "vllm", "sglang")]


# --- order ---------------------------------------------------------------------------------------------------


def test_order_by_class_then_key() -> None:
    s = script("vllm", "M --tool-call-parser glm47 --port 8888 --max-num-seqs 64 -sc.num_speculative_tokens 2 "
                       "-tp 4 --max-model-len 8192 --kv-cache-dtype fp8 --async-scheduling")
    r = recipe("vllm", "M")
    ds = diff(s, r)
    assert [d.key for d in ds] == [
        "kv_cache_dtype", "tensor_parallel_size",
        "speculative_config.num_speculative_tokens",
        "async_scheduling", "max_num_seqs",
        "max_model_len", "port",
        "tool_call_parser",
    ]
    assert [CLASSES.index(d.klass) for d in ds] == sorted(CLASSES.index(d.klass) for d in ds)


# --- golden: two realistic commands --------------------------------------------------------------------------


def test_golden_vllm_mtp() -> None:
    """An InferenceX-style GLM-5 FP8 MTP script on B200 against the vLLM recipe rendering."""
    line = (
        "zai-org/GLM-5-FP8 --host 0.0.0.0 --port 8888 -tp 8 --enable-expert-parallel "
        "--gpu-memory-utilization 0.9 --max-model-len 10240 --max-num-seqs 256 --kv-cache-dtype fp8 "
        "--no-enable-prefix-caching --trust-remote-code "
        """--speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":3}' """
        "--compilation_config.pass_config.fuse_allreduce_rms true --attention-backend FLASHINFER_MLA "
        "--disable-log-requests"
    )
    s = script("vllm", line, env={"VLLM_USE_DEEP_GEMM": "0", "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
                                  "PATH": "/usr/bin"})
    r = recipe("vllm", (
        "zai-org/GLM-5-FP8 --tensor-parallel-size 8 --enable-expert-parallel --kv-cache-dtype fp8 "
        "--trust-remote-code --tool-call-parser glm47 --reasoning-parser glm45 --enable-auto-tool-choice "
        "--speculative-config.method mtp --speculative-config.num_speculative_tokens 1 "
        "--gpu-memory-utilization 0.92"
    ), env={"VLLM_USE_DEEP_GEMM": "1"})
    assert diff(s, r, "0.25.1") == [
        Difference("attention_config.backend", "MAJOR", "extra-in-script", None, "FLASHINFER_MLA",
                   at(line, "--attention-backend"),
                   (ATTENTION_NOTE,)),
        Difference("compilation_config.pass_config.fuse_allreduce_rms", "MAJOR", "extra-in-script", None, True,
                   at(line, "--compilation_config.pass_config.fuse_allreduce_rms")),
        Difference("env.VLLM_USE_DEEP_GEMM", "MAJOR", "value-differs", "1", "0"),
        Difference("speculative_config.num_speculative_tokens", "MAJOR-spec", "value-differs", 1, 3,
                   at(line, "--speculative-config")),  # the method matches: deepseek_mtp is mtp
        Difference("gpu_memory_utilization", "tuning", "value-differs", 0.92, 0.9,
                   at(line, "--gpu-memory-utilization")),
        Difference("max_num_seqs", "tuning", "extra-in-script", None, 256, at(line, "--max-num-seqs")),
        Difference("disable_log_requests", "harness", "extra-in-script", None, True,
                   at(line, "--disable-log-requests")),
        Difference("enable_prefix_caching", "harness", "extra-in-script", None, False,
                   at(line, "--no-enable-prefix-caching")),
        Difference("env.VLLM_ENGINE_READY_TIMEOUT_S", "harness", "extra-in-script", None, "3600"),
        Difference("host", "harness", "extra-in-script", None, "0.0.0.0", at(line, "--host")),
        Difference("max_model_len", "harness", "extra-in-script", None, 10240, at(line, "--max-model-len")),
        Difference("port", "harness", "extra-in-script", None, 8888, at(line, "--port")),
        Difference("enable_auto_tool_choice", "feature", "missing-in-script", True, None),
        Difference("reasoning_parser", "feature", "missing-in-script", "glm45", None),
        Difference("tool_call_parser", "feature", "missing-in-script", "glm47", None),
    ]


def test_golden_sglang_eagle() -> None:
    """An InferenceX-style DeepSeek-R1 FP8 MTP script on B200 against the SGLang cookbook rendering."""
    line = (
        "--model-path deepseek-ai/DeepSeek-R1-0528 --host 0.0.0.0 --port 8888 --tp 8 --trust-remote-code "
        "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --mem-fraction-static 0.82 --cuda-graph-max-bs 128 "
        "--chunked-prefill-size 16384 --disable-radix-cache --scheduler-recv-interval 10 "
        "--kv-cache-dtype fp8_e4m3 --attention-backend trtllm_mla --moe-runner-backend flashinfer_trtllm "
        "--enable-flashinfer-allreduce-fusion"
    )
    s = script("sglang", line, env={"SGLANG_ENABLE_SPEC_V2": "1", "SGLANG_ENABLE_JIT_DEEPGEMM": "false"})
    r = recipe("sglang", (
        "--model-path deepseek-ai/DeepSeek-R1-0528 --tp-size 8 --trust-remote-code "
        "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --attention-backend trtllm_mla --moe-runner-backend flashinfer_trtllm "
        "--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 --cuda-graph-max-bs 256 --enable-symm-mem "
        "--reasoning-parser deepseek-r1"
    ))
    assert diff(s, r, "v0.5.14") == [
        Difference("enable_flashinfer_allreduce_fusion", "MAJOR", "extra-in-script", None, True,
                   at(line, "--enable-flashinfer-allreduce-fusion")),
        Difference("enable_symm_mem", "MAJOR", "missing-in-script", True, None),
        Difference("env.SGLANG_ENABLE_JIT_DEEPGEMM", "MAJOR", "extra-in-script", None, "false"),
        Difference("env.SGLANG_ENABLE_SPEC_V2", "MAJOR-spec", "extra-in-script", None, "1", None,
                   ("script: SGLANG_ENABLE_SPEC_V2 has no effect from SGLang 0.5.14 on "
                    "(speculative_hook.py:67-74)",)),
        Difference("chunked_prefill_size", "tuning", "extra-in-script", None, 16384,
                   at(line, "--chunked-prefill-size")),
        Difference("cuda_graph_max_bs_decode", "tuning", "value-differs", 256, 128, at(line, "--cuda-graph-max-bs"),
                   ("script: --cuda-graph-max-bs is deprecated in SGLang 0.5.14: use --cuda-graph-max-bs-decode",
                    "recipe: --cuda-graph-max-bs is deprecated in SGLang 0.5.14: use --cuda-graph-max-bs-decode")),
        Difference("mem_fraction_static", "tuning", "value-differs", 0.85, 0.82, at(line, "--mem-fraction-static")),
        Difference("scheduler_recv_interval", "tuning", "extra-in-script", None, 10,
                   at(line, "--scheduler-recv-interval")),
        Difference("disable_radix_cache", "harness", "extra-in-script", None, True, at(line, "--disable-radix-cache")),
        Difference("host", "harness", "extra-in-script", None, "0.0.0.0", at(line, "--host")),
        Difference("port", "harness", "extra-in-script", None, 8888, at(line, "--port")),
        Difference("reasoning_parser", "feature", "missing-in-script", "deepseek-r1", None),
    ]


# --- the value helpers ---------------------------------------------------------------------------------------


def test_coerce_flatten_same() -> None:
    assert coerce(["0.8", "true", "8", "FALSE", "x", 3]) == [0.8, True, 8, False, "x", 3]
    assert list(flatten({"a": {"b": 1, "c": {}}, "d": '{"e": "f"}'}, "k")) == [("k.a.b", 1), ("k.a.c", {}),
                                                                             ("k.d.e", "f")]
    assert list(flatten("{not json", "k")) == [("k", "{not json")]
    assert same(8, 8.0) and same(["x"], "x") and same([1, 2], [1.0, 2])
    assert not same(True, 1) and not same(0, False) and not same("8", 8) and not same([1], [1, 2])
