"""TRT-LLM (with heredoc YAML), ATOM and benchmark-client normalization."""

from __future__ import annotations

from bot.serve import normalize, normalize_client
from bot.serve.model import MARK, Tok
from tests.serve.helpers import lined, toks, yaml_file

MTP_YAML = """\
cuda_graph_config:
    enable_padding: true
    max_batch_size: 64
enable_attention_dp: false
kv_cache_config:
    dtype: fp8
    free_gpu_memory_fraction: 0.8
    enable_block_reuse: false
moe_config:
    backend: TRTLLM
speculative_config:
    decoding_type: MTP
    num_nextn_predict_layers: 3
"""


def test_trtllm_cli_names() -> None:
    c = normalize("trtllm", toks(
        "org/M --tp_size 8 --ep_size=8 --pp_size 1 --max_batch_size 256 --max_num_tokens 8192 --max_seq_len 2048 "
        "--backend pytorch --trust_remote_code --kv_cache_free_gpu_memory_fraction 0.8 --host 0.0.0.0 --port=8888"))
    assert c.model == "org/M"
    assert c.args == {
        "tensor_parallel_size": 8, "moe_expert_parallel_size": 8, "pipeline_parallel_size": 1,
        "max_batch_size": 256, "max_num_tokens": 8192, "max_seq_len": 2048, "backend": "pytorch",
        "trust_remote_code": True, "kv_cache_config": {"free_gpu_memory_fraction": 0.8}, "host": "0.0.0.0",
        "port": 8888}
    assert c.unknown == () and c.spec is None


def test_trtllm_heredoc_mtp_file_wins() -> None:
    files = yaml_file("dsr1-fp4-mtp.yml", MTP_YAML, src="s.sh:40")
    c = normalize("trtllm", lined("M", "--kv_cache_free_gpu_memory_fraction", "0.5", "--tp_size=4",
                                  "--extra_llm_api_options=dsr1-fp4-mtp.yml"), files=files)
    assert c.args["kv_cache_config"] == {"dtype": "fp8", "free_gpu_memory_fraction": 0.8, "enable_block_reuse": False}
    assert c.sources["kv_cache_config"] == "s.sh:40" and c.sources["tensor_parallel_size"] == "s.sh:4"
    assert c.args["moe_config"] == {"backend": "TRTLLM"} and c.args["enable_attention_dp"] is False
    assert c.spec is not None
    assert (c.spec["method"], c.spec["kind"], c.spec["num_speculative_tokens"]) == ("MTP", "mtp", 3)
    assert any("overrides the command line" in n for n in c.notes)


def test_trtllm_file_drops_cli_fraction_note_and_eagle3() -> None:
    text = ("kv_cache_config:\n  dtype: fp8\nspeculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n"
            "  speculative_model_dir: Inferact/MiniMax-M3-EAGLE3\n")
    c = normalize("trtllm", toks("M --kv_cache_free_gpu_memory_fraction 0.8 --config x.yml"),
                  files=yaml_file("x.yml", text))
    assert c.args["kv_cache_config"] == {"dtype": "fp8"}
    assert any("free_gpu_memory_fraction dropped" in n for n in c.notes)
    assert c.spec is not None and c.spec["kind"] == "eagle3" and c.spec["num_speculative_tokens"] == 3
    assert c.spec["draft_model"] == "Inferact/MiniMax-M3-EAGLE3"


def test_trtllm_unknown_parts() -> None:
    text = f"speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: {MARK}\n"
    c = normalize("trtllm", toks(f"M --tp-size 8 --max_batch_size {MARK} --extra_llm_api_options x.yml"),
                  files=yaml_file("x.yml", text))
    assert c.args["speculative_config"] == {"decoding_type": "MTP", "num_nextn_predict_layers": None}
    assert c.args["max_batch_size"] is None
    assert any(u.startswith("--tp-size: not a trtllm-serve option") and "--tp_size is" in u for u in c.unknown)
    assert any("speculative_config.num_nextn_predict_layers: value unknown" in u for u in c.unknown)
    bad = normalize("trtllm", toks("M --extra_llm_api_options x.yml"), files=yaml_file("x.yml", "a: [\n"))
    assert any("not YAML" in u and "x.yml" in u for u in bad.unknown)
    missing = normalize("trtllm", toks("M --extra_llm_api_options gone.yml"))
    assert any("gone.yml" in u for u in missing.unknown)


def test_atom_spellings_and_spec() -> None:
    c = normalize("atom", toks("--model org/M --server-port 8000 -tp 8 --kv_cache_dtype fp8 --max-model-len 10240 "
                               "--enable-expert-parallel --enable-dp-attention --no-enable_prefix_caching "
                               "--method mtp --num-speculative-tokens 3 --trust-remote-code"))
    assert c.model == "org/M"
    assert c.args == {
        "model": "org/M", "server_port": 8000, "tensor_parallel_size": 8, "kv_cache_dtype": "fp8",
        "max_model_len": 10240, "enable_expert_parallel": True, "enable_dp_attention": True,
        "enable_prefix_caching": False, "method": "mtp", "num_speculative_tokens": 3, "trust_remote_code": True}
    assert c.spec is not None and (c.spec["kind"], c.spec["num_speculative_tokens"]) == ("mtp", 3)
    assert any("unverified" in n for n in c.notes)


def test_atom_eagle3_draft() -> None:
    c = normalize("atom", toks("--model M --method eagle3 --draft-model Inferact/MiniMax-M3-EAGLE3 "
                               "--num-speculative-tokens 3"))
    assert c.spec is not None and c.spec["kind"] == "eagle3"
    assert c.spec["draft_model"] == "Inferact/MiniMax-M3-EAGLE3"


def test_client_helper_args() -> None:
    c = normalize_client(lined("--model", "org/M", "--port", "8888", "--backend", "vllm", "--input-len", "1024",
                               "--output-len", "1024", "--random-range-ratio", "0.8", "--num-prompts", "640",
                               "--max-concurrency", "64", "--result-filename", "r", "--result-dir", "/workspace/",
                               "--use-chat-template", "--dsv4", "--trust-remote-code", "--tokenizer", "t"))
    assert c.engine == "client" and c.model == "org/M" and c.sources["model"] == "s.sh:1"
    assert c.args == {
        "model": "org/M", "port": 8888, "backend": "vllm", "input_len": 1024, "output_len": 1024,
        "random_range_ratio": 0.8, "num_prompts": 640, "max_concurrency": 64, "result_filename": "r",
        "result_dir": "/workspace/", "use_chat_template": True, "dsv4": True, "trust_remote_code": True,
        "tokenizer": "t"}
    assert c.spec is None


def test_client_via_normalize_and_mark() -> None:
    c = normalize("client", [Tok("--num-prompts", "a:1"), Tok(MARK, "a:1"), Tok("--ignore-eos", "a:2"),
                             Tok("--percentile-metrics", "a:3"), Tok("ttft,tpot,itl,e2el", "a:3")])
    assert c.args == {"num_prompts": None, "ignore_eos": True, "percentile_metrics": "ttft,tpot,itl,e2el"}
    assert f"num_prompts: value unknown ({MARK}) at a:1" in c.unknown


def test_unknown_engine() -> None:
    c = normalize("tgi", toks("--x 1"))
    assert c.engine == "tgi" and c.args == {} and c.unknown == ("unknown engine 'tgi'",)
