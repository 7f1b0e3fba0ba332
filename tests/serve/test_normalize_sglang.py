"""SGLang normalization: the rows of recipes.md 4.3."""

from __future__ import annotations

import pytest

from bot.serve import normalize
from bot.serve.model import MARK, Tok
from tests.serve.helpers import lined, toks


def s(line: str) -> object:
    return normalize("sglang", toks(line))


@pytest.mark.parametrize(("flag", "field"), [
    ("--tp-size", "tp_size"), ("--tensor-parallel-size", "tp_size"), ("--tp", "tp_size"),
    ("--dp-size", "dp_size"), ("--data-parallel-size", "dp_size"), ("--dp", "dp_size"),
    ("--ep-size", "ep_size"), ("--expert-parallel-size", "ep_size"), ("--ep", "ep_size"),
    ("--pp-size", "pp_size"), ("--pipeline-parallel-size", "pp_size"),
    ("--attn-cp-size", "attn_cp_size"), ("--attention-context-parallel-size", "attn_cp_size"),
    ("--moe-dp-size", "moe_dp_size"), ("--moe-data-parallel-size", "moe_dp_size"),
    ("--cuda-graph-max-bs", "cuda_graph_max_bs_decode"),
    ("--piecewise-cuda-graph-max-tokens", "cuda_graph_max_bs_prefill"),
])
def test_int_aliases(flag: str, field: str) -> None:
    c = normalize("sglang", lined(flag, "8"))
    assert c.args == {field: 8} and c.sources[field] == "s.sh:1"
    assert c.unknown == ()


@pytest.mark.parametrize(("flag", "field", "value"), [
    ("--dist-init-addr", "dist_init_addr", "10.0.0.1:5000"), ("--nccl-init-addr", "dist_init_addr", "10.0.0.1:5000"),
    ("--speculative-draft-model-path", "speculative_draft_model_path", "org/d"),
    ("--speculative-draft-model", "speculative_draft_model_path", "org/d"),
    ("--nsa-prefill-backend", "dsa_prefill_backend", "flashmla"), ("--nsa-decode-backend", "dsa_decode_backend", "x"),
    ("--mamba-scheduler-strategy", "mamba_radix_cache_strategy", "auto"),
    ("--piecewise-cuda-graph-compiler", "cuda_graph_tc_compiler", "eager"),
    ("--dsa-prefill-cp-mode", "cp_strategy", "a"), ("--nsa-prefill-cp-mode", "cp_strategy", "a"),
    ("--prefill-cp-mode", "cp_strategy", "a"),
])
def test_value_aliases(flag: str, field: str, value: str) -> None:
    c = normalize("sglang", lined(flag, value))
    assert c.args == {field: value}


@pytest.mark.parametrize(("flag", "expected"), [
    ("--disable-cuda-graph", {"cuda_graph_backend_decode": "disabled", "cuda_graph_backend_prefill": "disabled"}),
    ("--disable-piecewise-cuda-graph", {"cuda_graph_backend_prefill": "disabled"}),
    ("--enforce-piecewise-cuda-graph", {"cuda_graph_backend_prefill": "tc_piecewise"}),
    ("--enable-breakable-cuda-graph", {"cuda_graph_backend_prefill": "breakable"}),
    ("--enable-dsa-prefill-context-parallel", {"enable_prefill_cp": True}),
    ("--enable-nsa-prefill-context-parallel", {"enable_prefill_cp": True}),
    ("--enable-prefill-context-parallel", {"enable_prefill_cp": True}),
    ("--stream-output", {"incremental_streaming_output": True}),
])
def test_store_const_deprecated(flag: str, expected: dict[str, object]) -> None:
    c = normalize("sglang", lined("--model-path", "M", flag, "--tp", "2"))
    assert c.args == {"model_path": "M", "tp_size": 2, **expected}
    assert any(flag in n and "deprecated" in n for n in c.notes)


def test_list_fields_take_many_values() -> None:
    c = s("--cuda-graph-bs 1 2 4 8 --piecewise-cuda-graph-tokens 16 32 --mem-fraction-static 0.8")
    assert c.args == {"cuda_graph_bs_decode": [1, 2, 4, 8], "cuda_graph_bs_prefill": [16, 32],  # type: ignore[attr-defined]
                      "mem_fraction_static": 0.8}


def test_model_and_equals() -> None:
    for flag in ("--model-path", "--model"):
        c = normalize("sglang", toks(f"{flag}=org/M --tp=4"))
        assert c.model == "org/M" and c.args == {"model_path": "org/M", "tp_size": 4}
        assert c.sources["model"] == "s.sh:10"


def test_pp_abbreviation_is_ambiguous() -> None:
    c = s("--pp 2")
    assert "pp_size" not in c.args  # type: ignore[attr-defined]
    assert any("--pp: ambiguous abbreviation" in u for u in c.unknown)  # type: ignore[attr-defined]


def test_abbreviation_notes() -> None:
    c = s("--tp 8 --speculative-algo EAGLE")
    assert c.args == {"tp_size": 8, "speculative_algorithm": "EAGLE"}  # type: ignore[attr-defined]
    assert any("--speculative-algo -> --speculative-algorithm" in n for n in c.notes)  # type: ignore[attr-defined]


def test_underscores_are_not_sglang() -> None:
    c = s("--kv_cache_dtype fp8 --tp-size 2")
    assert c.args["tp_size"] == 2 and c.args["kv_cache_dtype"] == "fp8"  # type: ignore[attr-defined]
    assert any(u.startswith("--kv_cache_dtype: not an SGLang option") for u in c.unknown)  # type: ignore[attr-defined]


def test_unknown_option_and_no_x() -> None:
    c = s("--no-enable-foo --bogus-flag 3")
    assert c.args == {"no_enable_foo": True, "bogus_flag": 3}  # type: ignore[attr-defined]
    assert any("--no-enable-foo: not an SGLang option" in u for u in c.unknown)  # type: ignore[attr-defined]


def test_bool_fields_are_store_true() -> None:
    c = s("--enable-dp-attention --trust-remote-code --model-path M")
    assert c.args == {"enable_dp_attention": True, "trust_remote_code": True, "model_path": "M"}  # type: ignore[attr-defined]
    c = s("--enable-dp-attention=false")
    assert c.args == {"enable_dp_attention": False}  # type: ignore[attr-defined]
    assert any("store_true" in n for n in c.notes)  # type: ignore[attr-defined]


def test_nextn_spec() -> None:
    c = s("--model-path M --speculative-algorithm nextn --speculative-num-steps 3 --speculative-eagle-topk 1 "
          "--speculative-num-draft-tokens 4")
    assert c.args["speculative_algorithm"] == "NEXTN"  # type: ignore[attr-defined]
    assert c.spec == {**dict.fromkeys(c.spec), "method": "EAGLE", "kind": "mtp",  # type: ignore[attr-defined]
                      "num_speculative_tokens": 3, "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


@pytest.mark.parametrize(("alg", "draft", "kind"), [
    ("EAGLE", "org/d", "eagle"), ("EAGLE3", "org/d", "eagle3"), ("NGRAM", None, "ngram"),
    ("STANDALONE", "org/d", "draft_model"), ("EAGLE", None, "mtp"),
])
def test_spec_kinds(alg: str, draft: str | None, kind: str) -> None:
    line = f"--speculative-algorithm {alg}" + (f" --speculative-draft-model-path {draft}" if draft else "")
    c = s(line)
    assert c.spec["kind"] == kind and c.spec["draft_model"] == draft  # type: ignore[attr-defined]


def test_no_spec_and_env_note() -> None:
    c = normalize("sglang", toks("--model-path M"), env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert c.spec is None and c.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert any("SGLANG_ENABLE_SPEC_V2" in n for n in c.notes)


def test_mark_and_stray() -> None:
    c = normalize("sglang", [Tok("--tp", "a:1"), Tok(MARK, "a:1"), Tok(MARK, "a:2"), Tok("word", "a:3")])
    assert c.args == {"tp_size": None}
    assert f"tp_size: value unknown ({MARK}) at a:1" in c.unknown
    assert "unknown words at a:2 (an unset or computed variable)" in c.unknown
    assert any("'word'" in u for u in c.unknown)
