"""vLLM normalization: the rows of recipes.md 4.2 that bot.serve.vllm implements."""

from __future__ import annotations

import pytest

from bot.serve import normalize
from bot.serve.model import MARK, SPEC_KEYS, Tok
from tests.serve.helpers import lined, toks, yaml_file


def v(line: str, **kw: object) -> object:
    return normalize("vllm", toks(line), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("flag", "dest"), [
    ("-tp", "tensor_parallel_size"), ("--tensor-parallel-size", "tensor_parallel_size"),
    ("-pp", "pipeline_parallel_size"), ("--pipeline-parallel-size", "pipeline_parallel_size"),
    ("-dp", "data_parallel_size"), ("--data-parallel-size", "data_parallel_size"),
    ("-dpl", "data_parallel_size_local"), ("-dpr", "data_parallel_start_rank"), ("-dpn", "data_parallel_rank"),
    ("-dpa", "data_parallel_address"), ("-dpp", "data_parallel_rpc_port"), ("-dpb", "data_parallel_backend"),
    ("-dcp", "decode_context_parallel_size"), ("-pcp", "prefill_context_parallel_size"),
    ("-q", "quantization"), ("--quantization", "quantization"), ("-n", "nnodes"), ("-r", "node_rank"),
    ("-asc", "api_server_count"), ("--api-server-count", "api_server_count"),
    ("--tensor_parallel_size", "tensor_parallel_size"), ("--max_model_len", "max_model_len"),
])
def test_value_aliases(flag: str, dest: str) -> None:
    c = normalize("vllm", lined("M", flag, "4"))
    assert c.model == "M"
    assert c.args == {dest: 4}
    assert c.sources[dest] == "s.sh:2"
    assert c.unknown == ()


@pytest.mark.parametrize("flag", ["-dph", "-dpe", "-dpm", "-ep", "--enable-expert-parallel",
                                  "--enable_expert_parallel"])
def test_bool_short_flags_take_no_value(flag: str) -> None:
    c = normalize("vllm", lined(flag, "M"))  # a flag before the model must not swallow it
    assert c.model == "M"
    assert list(c.args.values()) == [True]
    assert c.unknown == ()


@pytest.mark.parametrize("flag", ["-sc", "--speculative-config", "--speculative_config"])
def test_json_speculative_config_with_spaces(flag: str) -> None:
    c = normalize("vllm", [Tok("M", "a:1"), Tok(flag, "a:2"),
                           Tok('{"method": "mtp", "num_speculative_tokens": 3}', "a:2")])
    assert c.args["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 3}
    assert c.spec is not None and set(c.spec) == set(SPEC_KEYS)
    assert (c.spec["method"], c.spec["kind"], c.spec["num_speculative_tokens"]) == ("mtp", "mtp", 3)


@pytest.mark.parametrize(("flag", "dest"), [
    ("-cc", "compilation_config"), ("-ac", "attention_config"), ("-dc", "diffusion_config"),
    ("--kv-transfer-config", "kv_transfer_config"),
])
def test_json_configs(flag: str, dest: str) -> None:
    c = normalize("vllm", [Tok("M", "a:1"), Tok(flag, "a:2"), Tok('{"a": {"b": 1}}', "a:2")])
    assert c.args == {dest: {"a": {"b": 1}}}


@pytest.mark.parametrize("form", ["-O3", "-O=3", "-O 3", "--optimization-level 3"])
def test_optimization_level(form: str) -> None:
    assert v(f"M {form}").args == {"optimization_level": 3}  # type: ignore[attr-defined]


def test_flag_equals_value_and_no_flag() -> None:
    c = normalize("vllm", toks("M --max-model-len=10240 --no-enable-prefix-caching --gpu_memory_utilization=0.9"))
    assert c.args == {"max_model_len": 10240, "enable_prefix_caching": False, "gpu_memory_utilization": 0.9}


def test_dotted_flags_merge_and_append() -> None:
    c = normalize("vllm", toks(
        "M --compilation_config.pass_config.fuse_allreduce_rms true -cc.mode=3 "
        "--compilation-config.cudagraph_capture_sizes+ 1,2 --compilation-config.cudagraph_capture_sizes+ 4"))
    assert c.args["compilation_config"] == {
        "pass_config": {"fuse_allreduce_rms": True}, "mode": 3, "cudagraph_capture_sizes": [1, 2, 4]}


def test_dotted_speculative_keys() -> None:
    c = v("M --speculative-config.method mtp --speculative-config.num_speculative_tokens 3")
    assert c.spec["kind"] == "mtp" and c.spec["num_speculative_tokens"] == 3  # type: ignore[attr-defined]


def test_spec_shorthands() -> None:
    c = v("M --spec-method eagle3 --spec-model org/draft --spec-tokens 3")
    assert c.args["speculative_config"] == {  # type: ignore[attr-defined]
        "method": "eagle3", "model": "org/draft", "num_speculative_tokens": 3}
    assert c.spec["kind"] == "eagle3" and c.spec["draft_model"] == "org/draft"  # type: ignore[attr-defined]


@pytest.mark.parametrize("method", ["deepseek_mtp", "qwen3_5_mtp", "glm4_moe_mtp", "mimo_v2_mtp",
                                    "qwen3_next_mtp", "minimax_m3_mtp", "ernie_mtp"])
def test_deprecated_mtp_methods(method: str) -> None:
    c = normalize("vllm", [Tok("M", "a:1"), Tok("-sc", "a:2"), Tok(f'{{"method": "{method}"}}', "a:2")])
    assert c.args["speculative_config"]["method"] == method  # args keep what was written
    assert c.spec is not None and c.spec["method"] == "mtp" and c.spec["kind"] == "mtp"
    assert any("deprecated alias of 'mtp'" in n for n in c.notes)


def test_synthetic_rejection_keys() -> None:
    sc = ('{"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic",'
          ' "synthetic_acceptance_length": 2.5, "draft_sample_method": "greedy"}')
    c = normalize("vllm", [Tok("M", "a:1"), Tok("-sc", "a:2"), Tok(sc, "a:2")])
    assert c.spec is not None
    assert c.spec["rejection_sample_method"] == "synthetic" and c.spec["synthetic_acceptance_length"] == 2.5
    assert c.spec["draft_sample_method"] == "greedy"


def test_model_flag_and_attention_backend_note() -> None:
    c = v("--model org/M -tp 2 --attention-backend FLASH_ATTN")
    assert c.model == "org/M" and c.sources["model"] == "s.sh:10"  # type: ignore[attr-defined]
    assert c.args == {"tensor_parallel_size": 2, "attention_backend": "FLASH_ATTN"}  # type: ignore[attr-defined]
    assert any("attention_config.backend" in n for n in c.notes)  # type: ignore[attr-defined]
    assert any("--model" in n for n in c.notes)  # type: ignore[attr-defined]


def test_list_flags() -> None:
    c = v("M --cudagraph-capture-sizes 1 2 4 --port 8000")
    assert c.args == {"cudagraph_capture_sizes": [1, 2, 4], "port": 8000}  # type: ignore[attr-defined]


def test_stray_positional_and_negative_number() -> None:
    c = v("M extra --seed -1")
    assert c.args == {"seed": -1}  # type: ignore[attr-defined]
    assert any("'extra'" in u for u in c.unknown)  # type: ignore[attr-defined]


def test_bad_json() -> None:
    c = normalize("vllm", [Tok("M", "a:1"), Tok("--speculative-config", "a:2"), Tok('{"method": mtp}', "a:2")])
    assert c.args["speculative_config"] == '{"method": mtp}'
    assert any(u.startswith("speculative_config: not JSON:") for u in c.unknown)
    assert c.spec is not None and c.spec["method"] is None


def test_config_yaml_cli_wins() -> None:
    text = ("tensor-parallel-size: 4\nmax_num_seqs: 64\nno-enable-prefix-caching: true\nenforce-eager: true\n"
            "compilation-config:\n  pass_config:\n    fuse_allreduce_rms: true\n"
            "speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n"
            "cudagraph-capture-sizes: [1, 2]\n")
    c = normalize("vllm", lined("M", "--config", "cfg.yaml", "-tp", "8"), files=yaml_file("cfg.yaml", text))
    assert c.args["tensor_parallel_size"] == 8 and c.sources["tensor_parallel_size"] == "s.sh:4"
    assert c.args["max_num_seqs"] == 64 and c.sources["max_num_seqs"] == "s.sh:3"
    assert c.args["enable_prefix_caching"] is False and c.args["enforce_eager"] is True
    assert c.args["compilation_config"] == {"pass_config": {"fuse_allreduce_rms": True}}
    assert c.args["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert c.args["cudagraph_capture_sizes"] == [1, 2]
    assert any("overrides --config" in n for n in c.notes)
    assert c.unknown == ()


def test_config_missing_or_unknown_or_bad() -> None:
    c = normalize("vllm", toks("M --config nope.yaml -tp 2"))
    assert c.args["tensor_parallel_size"] == 2 and any("nope.yaml" in u for u in c.unknown)
    c = normalize("vllm", toks("M --config c.yaml"), files=yaml_file("c.yaml", f"max-num-seqs: {MARK}\nport: 1\n"))
    assert c.args["max_num_seqs"] is None and c.args["port"] == 1
    assert any(u.startswith("max_num_seqs: value unknown") for u in c.unknown)
    c = normalize("vllm", toks("M --config=c.yaml"), files=yaml_file("c.yaml", "a: [1\n"))
    assert any("not YAML" in u and "c.yaml" in u for u in c.unknown)


def test_mark_value_and_mark_word() -> None:
    c = normalize("vllm", [Tok("M", "s.sh:1"), Tok("-tp", "s.sh:2"), Tok(MARK, "s.sh:2"), Tok(MARK, "s.sh:3"),
                           Tok("--enforce-eager", "s.sh:4"), Tok(MARK, "s.sh:5")])
    assert c.args["tensor_parallel_size"] is None
    assert f"tensor_parallel_size: value unknown ({MARK}) at s.sh:2" in c.unknown
    assert "unknown words at s.sh:5 (an unset or computed variable)" in c.unknown
    assert c.args["enforce_eager"] is True


def test_env_copied_and_argv() -> None:
    c = normalize("vllm", toks("M"), env={"VLLM_X": "1"})
    assert c.env == {"VLLM_X": "1"} and c.argv == ("M",) and c.spec is None
