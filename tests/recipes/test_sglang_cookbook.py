"""bot.recipes.sglang_cookbook: cookbook cells selected and rendered for a query, read through
LocalSource from hand-written configs in the cookbook's shape (tests/fixtures/recipes/sglang)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.recipes import jsx, sglang_cookbook
from bot.recipes.model import Miss, Query, Rendered
from bot.recipes.sglang_cookbook import normalize_hw, render
from bot.recipes.sources import LocalSource

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "recipes" / "sglang"
WIDGET = "docs_new/src/snippets/configs/acme/widget3.jsx"
GIZMO = "docs_new/src/snippets/configs/gizmo/gizmo-2.jsx"
BROKEN = "docs_new/src/snippets/configs/broken/broken-1.jsx"


@pytest.fixture
def source() -> LocalSource:
    return LocalSource(ROOT, "sglang")


def q(model: str, hw: str, precision: str, **kw: object) -> Query:
    return Query(engine="sglang", model=model, hardware=hw, precision=precision, **kw)  # type: ignore[arg-type]


def rendered(source: LocalSource, query: Query) -> Rendered:
    out = render(source, query)
    assert isinstance(out, Rendered), out
    return out


def missed(source: LocalSource, query: Query) -> Miss:
    out = render(source, query)
    assert isinstance(out, Miss), out
    return out


def has_spec(r: Rendered) -> bool:
    return any(a.startswith("--speculative") for a in r.argv)


def test_mtp_takes_the_low_latency_cell_with_spec_flags(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b200", "fp8", tp=4, spec="mtp"))
    assert r.engine == "sglang"
    assert r.argv == ("--model-path", "Acme/Widget3-100B-FP8", "--tp", "4", "--speculative-algorithm", "EAGLE",
                      "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                      "--speculative-num-draft-tokens", "4", "--mem-fraction-static", "0.8",
                      "--host", "0.0.0.0", "--port", "8888")
    p = r.provenance
    assert p.path == WIDGET and p.source == str(ROOT) and p.revision == source.revision and p.fallback is None
    assert p.selection == (("hw", "b200"), ("variant", "100b"), ("quant", "fp8"), ("strategy", "low-latency"),
                           ("nodes", "single"))
    assert "cell verified in the cookbook" in r.notes


def test_stp_never_gets_spec_flags_and_prefers_balanced(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b200", "fp8", tp=4))
    assert not has_spec(r)
    assert dict(r.provenance.selection)["strategy"] == "balanced"
    assert r.argv[:6] == ("--model-path", "Acme/Widget3-100B-FP8", "--tp", "4", "--ep", "4")
    # the low-latency cell (TP 4 too) fits without its speculative flags, after balanced
    assert "other strategies that fit: low-latency, high-throughput" in r.notes


def test_stp_follows_the_query_dp_attention(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b200", "fp8", tp=4, dp_attn=True))
    assert dict(r.provenance.selection)["strategy"] == "high-throughput"
    assert "--enable-dp-attention" in r.argv and not has_spec(r)


def test_stp_without_a_balanced_tier_takes_high_throughput(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B", "h200", "bf16", tp=8))
    assert dict(r.provenance.selection)["strategy"] == "high-throughput"
    assert not has_spec(r) and r.env == ()


def test_stp_takes_a_speculative_cell_without_its_speculative_flags(source: LocalSource) -> None:
    """Every b300 cell runs MTP: a plain entry is compared with it, its spec flags left out."""
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b300", "fp8"))
    assert r.provenance.path == WIDGET and dict(r.provenance.selection)["strategy"] == "low-latency"
    assert not has_spec(r) and "--tp" in r.argv
    assert "the low-latency cell's speculative flags are left out: the entry runs without speculative decoding" \
        in r.notes


def test_mtp_misses_without_a_speculative_cell(source: LocalSource) -> None:
    m = missed(source, q("Gizmo/Gizmo-2", "b200", "fp8", spec="mtp"))
    assert m.path == GIZMO and "runs speculative decoding (mtp)" in m.reason


def test_env_and_mtp_algorithm(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B", "h200", "bf16", tp=8, spec="mtp"))
    assert r.env == (("SGLANG_USE_CUDA_IPC_TRANSPORT", "1"),)
    assert r.argv[r.argv.index("--speculative-algorithm") + 1] == "NEXTN"
    assert not any("algorithm" in n for n in r.notes)


def test_a_spec_kind_the_cell_does_not_implement_is_noted(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B", "h200", "bf16", spec="eagle3"))
    assert has_spec(r)
    assert any("speculative algorithm NEXTN is not the query's eagle3" in n for n in r.notes)


def test_selection_by_hw_variant_quant_key_and_fallback(source: LocalSource) -> None:
    r = rendered(source, q("vendor/Widget3-100B-NVFP4", "b300", "fp4", spec="mtp"))
    p = r.provenance
    assert p.fallback == "b300 -> b200"
    assert dict(p.selection) == {"hw": "b200", "variant": "100b", "quant": "fp4", "strategy": "low-latency",
                                 "nodes": "single"}
    assert r.argv[:2] == ("--model-path", "vendor/Widget3-100B-NVFP4")
    assert "--quantization" in r.argv


def test_fallback_gb300_to_gb200_and_multi_node(source: LocalSource) -> None:
    r = rendered(source, q("Gizmo/Gizmo-2", "gb300", "fp4", nodes=2))
    assert r.provenance.fallback == "gb300 -> gb200"
    assert dict(r.provenance.selection)["nodes"] == "multi-2"
    assert r.argv[-2:] == ("--nnodes", "2")
    assert r.env == (("NCCL_MNNVL_ENABLE", "1"),)


def test_no_fallback_other_than_b300_and_gb300(source: LocalSource) -> None:
    m = missed(source, q("Gizmo/Gizmo-2", "h200", "fp4"))
    assert "no h200 cell" in m.reason and m.path == GIZMO
    m = missed(source, q("Acme/Widget3-100B-FP8", "h100", "fp8"))
    assert "no h100 cell" in m.reason


def test_precision_picks_among_keys_naming_the_same_model(source: LocalSource) -> None:
    fp4 = rendered(source, q("Gizmo/Gizmo-2", "b200", "fp4"))
    fp8 = rendered(source, q("Gizmo/Gizmo-2", "b200", "fp8"))
    assert dict(fp4.provenance.selection)["quant"] == "fp4"
    assert dict(fp8.provenance.selection)["quant"] == "fp8"
    nvfp4 = rendered(source, q("Gizmo/Gizmo-2", "b200", "nvfp4"))
    assert dict(nvfp4.provenance.selection)["quant"] == "fp4"


def test_a_precision_no_key_fits_still_renders_and_says_so(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b200", "bf16"))
    assert dict(r.provenance.selection)["quant"] == "fp8"
    assert any("does not match the precision 'bf16'" in n for n in r.notes)


def test_placeholders_substituted_and_model_flag_first(source: LocalSource) -> None:
    r = rendered(source, q("Gizmo/Gizmo-2", "b200", "fp4", spec="mtp"))
    assert r.argv[:3] == ("--model-path", "Gizmo/Gizmo-2", "--trust-remote-code")
    assert not any("{{" in a for a in r.argv)
    assert r.argv[-4:] == ("--host", "0.0.0.0", "--port", "8888")
    # one flag string holding several words, and a quoted JSON value, both split with shlex
    assert r.argv[r.argv.index("--speculative-algorithm"):][:4] == (
        "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1")
    assert r.argv[r.argv.index("--deepep-config") + 1] == '{"normal_dispatch":{"num_sms":96}}'
    assert r.env == (("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "1024"), ("SGLANG_FLAG", "a=b"))


def test_a_cell_without_a_model_flag_gets_one(source: LocalSource) -> None:
    r = rendered(source, q("Gizmo/Gizmo-2", "b200", "fp8"))
    assert r.argv == ("--model-path", "Gizmo/Gizmo-2", "--trust-remote-code", "--tp", "8",
                      "--host", "0.0.0.0", "--port", "8888")
    assert "the cell has no --model-path; added" in r.notes


def test_model_match_is_case_insensitive(source: LocalSource) -> None:
    r = rendered(source, q("acme/widget3-100b-fp8", "b200", "fp8"))
    assert r.provenance.path == WIDGET
    assert r.argv[1] == "Acme/Widget3-100B-FP8"  # the cookbook's spelling
    assert not any("the cookbook serves" in n for n in r.notes)  # a difference of case only is no difference


def test_runner_suffixes_are_dropped() -> None:
    assert normalize_hw("b200-dgxc") == "b200"
    assert normalize_hw("GB300-nv") == "gb300"
    assert normalize_hw("mi355x-disagg") == "mi355x"
    assert normalize_hw("rtx6000pro-lat") == "rtx6000"


def test_runner_type_with_suffix_renders(source: LocalSource) -> None:
    r = rendered(source, q("Acme/Widget3-100B-FP8", "b200-dgxc", "fp8", spec="mtp"))
    assert dict(r.provenance.selection)["hw"] == "b200" and r.provenance.fallback is None


def test_no_config_is_a_miss(source: LocalSource) -> None:
    m = missed(source, q("Nobody/Nothing-1", "b200", "fp8"))
    assert "no SGLang cookbook config" in m.reason and "Nobody/Nothing-1" in m.reason and m.path is None


def test_companion_files_are_skipped(source: LocalSource) -> None:
    # gizmo-2-benchmarks.jsx mentions the model but exports `benchmarks`, not `config`
    assert rendered(source, q("Gizmo/Gizmo-2", "b200", "fp4")).provenance.path == GIZMO


def test_unparseable_config_is_a_miss_with_its_position(source: LocalSource) -> None:
    m = missed(source, q("Broken/Broken-1", "b200", "fp8"))
    assert f"{BROKEN}:11:14:" in m.reason and "function call" in m.reason
    assert m.path == BROKEN


def test_other_engines_are_a_miss(source: LocalSource) -> None:
    assert isinstance(render(source, Query("vllm", "Acme/Widget3-100B-FP8", "b200", "fp8")), Miss)


def test_parsed_configs_are_memoized_and_bounded(source: LocalSource, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sglang_cookbook, "_PARSED", type(sglang_cookbook._PARSED)())
    calls: list[str] = []
    real = jsx.parse_export

    def counting(text: str, name: str = "config") -> object:
        calls.append(name)
        return real(text, name)

    monkeypatch.setattr(sglang_cookbook, "parse_export", counting)
    rendered(source, q("Acme/Widget3-100B-FP8", "b200", "fp8"))
    first = len(calls)
    rendered(source, q("Acme/Widget3-100B-FP8", "b200", "fp8", spec="mtp"))
    assert first >= 1 and len(calls) == first
    monkeypatch.setattr(sglang_cookbook, "CACHE_MAX", 1)
    rendered(source, q("Gizmo/Gizmo-2", "b200", "fp4"))
    assert len(sglang_cookbook._PARSED) == 1


def test_files_not_mentioning_the_model_are_not_parsed(source: LocalSource, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sglang_cookbook, "_PARSED", type(sglang_cookbook._PARSED)())
    rendered(source, q("Gizmo/Gizmo-2", "b200", "fp4"))
    benchmarks = "docs_new/src/snippets/configs/gizmo/gizmo-2-benchmarks.jsx"
    assert {k[2] for k in sglang_cookbook._PARSED} == {GIZMO, benchmarks}
