"""vLLM recipe rendering (``bot.recipes.vllm_recipe.render``) on a hand-written recipe collection
in the vllm-project/recipes layout (tests/fixtures/recipes/vllm): real parses through
``LocalSource``; broken files are written into a temporary copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.recipes.model import Miss, Query, Rendered
from bot.recipes.sources import LocalSource
from bot.recipes.vllm_recipe import dedupe, render, spec_method
from bot.recipes.vllm_select import base_name
from tests.conftest import FIXTURES

ROOT = FIXTURES / "recipes" / "vllm"
ZEPHYR = "models/acme-ai/Zephyr-9X.yaml"
KESTREL2 = "models/northwind/Kestrel-2.yaml"
KESTREL3 = "models/northwind/Kestrel-3.yaml"


def ok(q: Query, root: Path = ROOT) -> Rendered:
    got = render(LocalSource(root, "vllm"), q)
    assert isinstance(got, Rendered), got
    return got


def miss(q: Query, root: Path = ROOT) -> Miss:
    got = render(LocalSource(root, "vllm"), q)
    assert isinstance(got, Miss), got
    return got


def sel(r: Rendered) -> dict[str, str]:
    return dict(r.provenance.selection)


def vq(model: str, hardware: str, precision: str, **kw: object) -> Query:
    return Query("vllm", model, hardware, precision, **kw)  # type: ignore[arg-type]


# -- composition -------------------------------------------------------------------------------

def test_composition_order_variant_then_strategy_then_hardware_then_features() -> None:
    r = ok(vq("nvidia/Zephyr-9X-NVFP4", "b200", "fp4", tp=8))
    assert r.argv == (
        "nvidia/Zephyr-9X-NVFP4",
        "--trust-remote-code", "--max-model-len", "65536",  # base_args
        "--kv-cache-dtype", "fp8",  # variant extra_args
        "--max-num-seqs", "256",  # the variant's exact-GPU override (the site emits it with the variant)
        "--tensor-parallel-size", "8",  # strategy + size
        "--max-num-batched-tokens", "32768",  # recipe hardware_overrides.blackwell (beats the nvidia block)
        "--moe-backend", "flashinfer_cutlass",  # variant hardware_overrides.blackwell, layered on
        "--enable-auto-tool-choice", "--tool-call-parser", "zephyr", "--reasoning-parser", "zephyr",  # features
    )
    # env: base, variant, the variant's exact GPU, then the generation block (later wins)
    assert r.env == (("ZEPHYR_BASE", "1"), ("SHARED_KEY", "hardware"), ("ZEPHYR_FP4", "1"), ("ZEPHYR_B200_ONLY", "1"))
    assert r.provenance.path == ZEPHYR and r.provenance.fallback is None
    assert r.provenance.source == str(ROOT) and r.provenance.revision.startswith("local:")
    assert sel(r) == {"hardware": "b200", "variant": "nvfp4 (serves nvidia/Zephyr-9X-NVFP4)",
                      "strategy": "single_node_tp", "parallel": "--tensor-parallel-size 8",
                      "features": "tool_calling,reasoning"}
    assert r.engine == "vllm" and r.notes == ()


def test_later_flag_wins_and_takes_its_later_place() -> None:
    r = ok(vq("acme-ai/Zephyr-9X", "mi300x", "bf16", tp=8))
    assert r.argv[:6] == ("acme-ai/Zephyr-9X", "--trust-remote-code", "--tensor-parallel-size", "8",
                          "--max-model-len", "32768")  # the amd block's value, where the amd block is
    assert r.argv.count("--max-model-len") == 1
    assert ("VLLM_ROCM_USE_AITER", "1") in r.env


def test_dedupe_keeps_last_pair_and_lone_flags() -> None:
    assert dedupe(["--a", "1", "--b", "--a", "2", "--b", "x", "pos"]) == ["--a", "2", "--b", "x", "pos"]
    assert dedupe(["--x", "--x"]) == ["--x"]


def test_hopper_generation_block_beats_the_nvidia_brand_block() -> None:
    r = ok(vq("acme-ai/Zephyr-9X-FP8", "h200", "fp8", tp=8))
    assert "--compilation-config" not in r.argv
    assert r.argv[1:8] == ("--trust-remote-code", "--max-model-len", "65536", "--tensor-parallel-size", "8",
                           "--max-num-batched-tokens", "16384")
    assert dict(r.env) == {"ZEPHYR_BASE": "1", "SHARED_KEY": "base", "ZEPHYR_HOPPER": "1"}


# -- variants ----------------------------------------------------------------------------------

def test_variant_by_model_id_is_case_insensitive() -> None:
    r = ok(vq("ACME-AI/zephyr-9x-fp8", "h200", "fp8", tp=8))
    assert r.argv[0] == "acme-ai/Zephyr-9X-FP8"
    assert sel(r)["variant"].startswith("fp8 (serves")


@pytest.mark.parametrize(("model", "hw", "precision", "variant", "served"), [
    ("acme-ai/Zephyr-9X-FP8-Dynamic", "h200", "fp8", "fp8", "acme-ai/Zephyr-9X-FP8"),
    ("someone/Zephyr-9X-FP4", "b200", "fp4", "nvfp4", "nvidia/Zephyr-9X-NVFP4"),
    ("someone/Zephyr-9X-FP4", "mi355x", "fp4", "mxfp4", "amd/Zephyr-9X-MXFP4"),
])
def test_variant_by_precision(model: str, hw: str, precision: str, variant: str, served: str) -> None:
    r = ok(vq(model, hw, precision, tp=8))
    assert r.argv[0] == served
    why = sel(r)["variant"]
    assert why.startswith(f"{variant} (by precision {precision}") and f"it serves {served}, not {model}" in why
    assert any("no variant of it names" in n for n in r.notes)


def test_no_variant_of_the_precision_falls_back_to_default_and_says_so() -> None:
    r = ok(vq("acme-ai/Zephyr-9X-INT4", "h200", "int4", tp=8))
    assert r.argv[0] == "acme-ai/Zephyr-9X"
    assert sel(r)["variant"].startswith("default (no int4 variant; the default is bf16")


def test_variant_level_exact_gpu_override_applies_only_to_that_gpu() -> None:
    gb200 = ok(vq("nvidia/Zephyr-9X-NVFP4", "gb200", "fp4", tp=4))
    assert "--max-num-seqs" not in gb200.argv and "ZEPHYR_B200_ONLY" not in dict(gb200.env)
    assert "--moe-backend" in gb200.argv  # the variant's blackwell block still applies
    mi355 = ok(vq("amd/Zephyr-9X-MXFP4", "mi355x", "fp4", tp=8))
    assert mi355.argv[1:8] == ("--trust-remote-code", "--block-size", "64", "--tensor-parallel-size", "8",
                               "--max-model-len", "32768")


# -- hardware ----------------------------------------------------------------------------------

def test_b300_marked_unsupported_falls_back_to_b200_and_says_so() -> None:
    r = ok(vq("nvidia/Zephyr-9X-NVFP4", "b300", "fp4", tp=8))
    assert r.provenance.fallback == "b300 -> b200"
    assert sel(r)["hardware"] == "b200"
    assert "--max-num-seqs" in r.argv  # the b200 override is the one rendered
    assert any("b300 -> b200" in n and "unsupported" in n for n in r.notes)


def test_gb300_missing_from_the_taxonomy_falls_back_to_gb200() -> None:
    r = ok(vq("northwind/Kestrel-2", "gb300", "fp8", tp=4))
    assert r.provenance.fallback == "gb300 -> gb200" and sel(r)["hardware"] == "gb200"


@pytest.mark.parametrize(("model", "hw", "precision", "says"), [
    ("acme-ai/Zephyr-9X", "h100", "bf16", "the recipe marks h100 unsupported"),
    ("acme-ai/Zephyr-9X", "mi325x", "bf16", "the taxonomy has no hardware mi325x"),
    ("nvidia/Zephyr-9X-NVFP4", "h200", "fp4", "needs blackwell hardware, not h200"),
    ("amd/Zephyr-9X-MXFP4", "mi300x", "fp4", "runs only on mi355x, not mi300x"),
])
def test_hardware_without_recipe_is_a_miss(model: str, hw: str, precision: str, says: str) -> None:
    m = miss(vq(model, hw, precision, tp=8))
    assert m.reason.startswith(f"no recipe for hardware {hw}: ") and says in m.reason
    assert m.path == ZEPHYR


def test_runner_label_with_a_suffix_maps_to_its_profile() -> None:
    assert sel(ok(vq("acme-ai/Zephyr-9X", "mi300x-amds", "bf16", tp=8)))["hardware"] == "mi300x"


# -- strategies --------------------------------------------------------------------------------

def test_ep_selects_tep_with_its_strategy_override() -> None:
    r = ok(vq("northwind/Kestrel-2", "h200", "fp8", tp=8, ep=8, spec="mtp"))
    assert sel(r)["strategy"] == "single_node_tep"
    assert r.argv[:8] == ("northwind/Kestrel-2", "--trust-remote-code", "--enable-expert-parallel",
                          "--tensor-parallel-size", "8", "--max-num-seqs", "128", "--enable-auto-tool-choice")
    assert dict(r.env) == {"KESTREL_HOPPER": "1"}


def test_dp_attention_selects_dep_whose_hardware_block_replaces_the_recipe_one() -> None:
    r = ok(vq("northwind/Kestrel-2", "b200", "fp8", tp=8, ep=8, dp_attn=True, spec="mtp"))
    assert sel(r)["strategy"] == "single_node_dep"
    assert r.argv[1:11] == ("--trust-remote-code", "--enable-expert-parallel", "--data-parallel-size", "8",
                            "--max-num-seqs", "512", "--all2all-backend", "deepep_low_latency", "--enable-dbo",
                            "--enable-auto-tool-choice")
    assert "--attention-backend" not in r.argv  # the recipe's blackwell block is replaced
    assert dict(r.env) == {"KESTREL_DEP": "1"}


def test_strategy_not_offered_is_a_miss() -> None:
    m = miss(vq("acme-ai/Zephyr-9X-FP8", "h200", "fp8", tp=8, dp_attn=True))
    assert "does not offer single_node_dep on h200" in m.reason and "single_node_tp, single_node_tep" in m.reason


def test_parallel_size_is_the_entry_tp_and_the_recipe_size_is_noted() -> None:
    r = ok(vq("northwind/Kestrel-2", "h200", "fp8", tp=8, spec="mtp"))
    assert r.argv[2:4] == ("--tensor-parallel-size", "8")
    assert any("own --tensor-parallel-size on h200 is 4 (strategy_overrides.single_node_tp.tp)" in n for n in r.notes)
    assert not any("own" in n for n in ok(vq("northwind/Kestrel-2", "h200", "fp8", tp=4, spec="mtp")).notes)


def test_multi_node_and_other_engines_are_misses() -> None:
    assert miss(vq("acme-ai/Zephyr-9X", "h200", "bf16", tp=8, nodes=2)).reason == "multi-node recipes are not compared"
    assert "not a vLLM" in miss(Query("sglang", "acme-ai/Zephyr-9X", "h200", "bf16")).reason


# -- features and speculative decoding ---------------------------------------------------------

def test_default_on_spec_is_removed_for_stp_and_kept_for_mtp() -> None:
    stp = ok(vq("northwind/Kestrel-2", "h200", "fp8", tp=4, spec="none"))
    mtp = ok(vq("northwind/Kestrel-2", "h200", "fp8", tp=4, spec="mtp"))
    assert "--speculative-config.method" not in stp.argv
    assert any("spec_decoding is on by default" in n for n in stp.notes)
    assert mtp.argv[-6:] == ("--speculative-config.method", "mtp", "--speculative-config.num_speculative_tokens", "1",
                             "--mm-encoder-tp-mode", "data")
    assert sel(mtp)["features"] == "tool_calling,spec_decoding,encoder_dp" and mtp.notes == ()


def test_opt_in_spec_is_turned_on_for_a_spec_point() -> None:
    r = ok(vq("acme-ai/Zephyr-9X-FP8", "h200", "fp8", tp=8, spec="mtp"))
    assert r.argv[-2:] == ("--speculative-config", '{"method":"mtp","num_speculative_tokens":2}')
    assert sel(r)["features"] == "tool_calling,reasoning,spec_decoding"
    assert any("opt-in" in n for n in r.notes)


def test_a_spec_method_other_than_the_entry_one_is_noted() -> None:
    r = ok(vq("acme-ai/Zephyr-9X-FP8", "h200", "fp8", tp=8, spec="eagle3"))
    assert "the recipe's spec_decoding method is mtp; the entry runs spec eagle3" in r.notes
    assert spec_method(["--speculative-config.method", "qwen3_5_mtp"]) == "mtp"
    assert spec_method(["--speculative-config", '{"model": "d", "method": "EAGLE3"}']) == "eagle3"
    assert spec_method(["--speculative-config.method"]) is None


def test_hardware_opt_in_feature_is_off_on_that_gpu() -> None:
    r = ok(vq("northwind/Kestrel-2", "gb200", "fp8", tp=4, spec="mtp"))
    assert "--mm-encoder-tp-mode" not in r.argv and sel(r)["features"] == "tool_calling,spec_decoding"


@pytest.mark.parametrize(("model", "hw", "spec", "mode", "noted"), [
    ("northwind/Kestrel-3", "h200", "mtp", "mtp", False),
    ("northwind/Kestrel-3", "h200", "eagle3", "eagle3", False),
    ("northwind/Kestrel-3", "mi355x", "eagle3", "mtp", True),  # eagle3 is unsupported on amd
    ("northwind/Kestrel-3", "h200", "dspark", "mtp", True),  # dspark is only on the DSpark variant
    ("northwind/Kestrel-3", "h200", "ngram", "mtp", True),
    ("northwind/Kestrel-3-DSpark", "h200", "dspark", "dspark", False),
    ("northwind/Kestrel-3-DSpark", "h200", "ngram", "dspark", True),  # the variant's default mode
])
def test_spec_mode_follows_the_entry(model: str, hw: str, spec: str, mode: str, noted: bool) -> None:
    r = ok(vq(model, hw, "bf16", tp=1, spec=spec))
    assert sel(r)["features"].split(",")[-1] == f"spec_decoding:{mode}"
    assert r.argv[-2] == "--speculative-config" and f'"method":"{mode}"' in r.argv[-1]
    assert r.argv.count("--speculative-config") == 1
    assert any(f"no {spec} mode" in n for n in r.notes) == noted


def test_variant_default_mode_is_dropped_for_stp() -> None:
    r = ok(vq("northwind/Kestrel-3-DSpark", "h200", "bf16", tp=1, spec="none"))
    assert "--speculative-config" not in r.argv and sel(r)["features"] == "reasoning"


def test_feature_hardware_override_replaces_its_args() -> None:
    amd = ok(vq("northwind/Kestrel-3", "mi355x", "bf16", tp=1))
    assert amd.argv[-2:] == ("--reasoning-parser", "kestrel_rocm")
    assert ok(vq("northwind/Kestrel-3", "h200", "bf16", tp=1)).argv[-2:] == ("--reasoning-parser", "kestrel")


# -- misses and bad input ----------------------------------------------------------------------

def test_unknown_model_is_a_miss() -> None:
    assert miss(vq("nobody/Nothing-1B", "h200", "bf16")).reason == "no vLLM recipe for model nobody/Nothing-1B"


def test_base_name_strips_only_quantization_tails() -> None:
    assert base_name("nvidia/Foo-7B-NVFP4-v2") == "foo-7b"
    assert base_name("Qwen/Qwen3-8B-FP8-dynamic") == "qwen3-8b"
    assert base_name("deepseek-ai/DeepSeek-V2") is None
    assert base_name("FP8") is None


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    root = tmp_path / "vllm"
    shutil.copytree(ROOT, root)
    return root


LAUGHS = ("a: &x [1,1,1,1,1,1,1,1,1]\nb: &y [*x,*x,*x,*x,*x,*x,*x,*x,*x]\nc: &z [*y,*y,*y,*y,*y,*y,*y,*y,*y]\n"
          "d: &w [*z,*z,*z,*z,*z,*z,*z,*z,*z]\ne: &v [*w,*w,*w,*w,*w,*w,*w,*w,*w]\nf: &u [*v,*v,*v,*v,*v,*v,*v,*v,*v]\n"
          "g: [*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u,*u]\n")


@pytest.mark.parametrize(("text", "says"), [
    pytest.param("model: [unclosed\n", f"{ZEPHYR}:2: YAML error", id="unclosed"),
    pytest.param("- just\n- a list\n", f"{ZEPHYR}:1: not a YAML mapping", id="list"),
    pytest.param("a: &a [*a]\n", f"{ZEPHYR}:1: YAML error", id="recursive-alias"),
    pytest.param(LAUGHS, f"{ZEPHYR}:7: YAML error: document too large", id="billion-laughs"),
])
def test_malformed_yaml_is_a_miss_with_path_and_line(broken: Path, text: str, says: str) -> None:
    (broken / ZEPHYR).write_text(text)
    m = miss(vq("acme-ai/Zephyr-9X", "h200", "bf16", tp=8), broken)
    assert m.reason.startswith(says) and m.path == ZEPHYR


@pytest.mark.parametrize(("old", "new", "says"), [
    pytest.param('    extra_args:\n      - "--kv-cache-dtype"\n      - "fp8"\n', "    extra_args: oops\n",
                 ":56: variants.nvfp4.extra_args must be a list of strings, not a string", id="args-string"),
    pytest.param('      - "--kv-cache-dtype"\n', "      - {a: 1}\n",
                 ":57: variants.nvfp4.extra_args[0] must be a string, not a mapping", id="arg-mapping"),
    pytest.param("variants:\n  default:\n", "variants:\n  zzz: 1\n  default:\n",
                 ":45: variants.zzz must be a mapping", id="variant-number"),
    pytest.param("  base_env:\n", "  base_env: [1]\n  old_env:\n",
                 ":19: model.base_env must be a mapping, not a list", id="env-list"),
    pytest.param("opt_in_features:\n  - spec_decoding\n", "opt_in_features: 3\n",
                 ":41: opt_in_features must be a list of strings, not a number", id="opt-in-number"),
    pytest.param('      ZEPHYR_FP4: "1"\n', "      ZEPHYR_FP4: [1]\n",
                 ":60: variants.nvfp4.extra_env.ZEPHYR_FP4 must be a string, not a list", id="env-value-list"),
])
def test_wrong_types_are_a_miss_with_path_and_line(broken: Path, old: str, new: str, says: str) -> None:
    path = broken / ZEPHYR
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    m = miss(vq("nvidia/Zephyr-9X-NVFP4", "b200", "fp4", tp=8), broken)
    assert m.reason.startswith(ZEPHYR) and says in m.reason, m.reason


def test_broken_strategy_or_taxonomy_is_a_miss(broken: Path) -> None:
    (broken / "taxonomy.yaml").write_text("hardware_profiles: [")
    assert miss(vq("acme-ai/Zephyr-9X", "h200", "bf16", tp=8), broken).reason.startswith("taxonomy.yaml:2: YAML error")
    shutil.copy(ROOT / "taxonomy.yaml", broken / "taxonomy.yaml")
    (broken / "strategies" / "single_node_tp.yaml").unlink()
    m = miss(vq("acme-ai/Zephyr-9X", "h200", "bf16", tp=8), broken)
    assert m.reason == "strategies/single_node_tp.yaml: missing or unreadable" and m.path == ZEPHYR


def test_a_broken_file_does_not_stop_the_promoted_variant_search(broken: Path) -> None:
    (broken / KESTREL3).write_bytes(b"\x00\xff: [\n")
    assert ok(vq("nvidia/Zephyr-9X-NVFP4", "b200", "fp4", tp=8), broken).argv[0] == "nvidia/Zephyr-9X-NVFP4"
    m = miss(vq("nobody/Nothing-1B", "h200", "bf16"), broken)
    assert m.reason == "no vLLM recipe for model nobody/Nothing-1B (1 recipe files could not be read)"


def test_omni_recipe_is_a_miss(broken: Path) -> None:
    path = broken / KESTREL3
    path.write_text(path.read_text().replace("  tasks:\n    - text\n", "  tasks:\n    - omni\n"))
    assert "omni" in miss(vq("northwind/Kestrel-3", "h200", "bf16"), broken).reason


def test_files_are_read_once_per_revision() -> None:
    reads: list[str] = []

    class Counting(LocalSource):
        def get(self, path: str) -> str | None:
            reads.append(path)
            return super().get(path)

    src = Counting(ROOT, "vllm", revision="counting-test")
    first = render(src, vq("nvidia/Zephyr-9X-NVFP4", "b200", "fp4", tp=8))
    n = len(reads)
    again = render(Counting(ROOT, "vllm", revision="counting-test"), vq("nvidia/Zephyr-9X-NVFP4", "b200", "fp4", tp=8))
    assert first == again and len(reads) == n and n > 0
