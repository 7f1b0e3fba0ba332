"""The shipped speculative-decoding tables: versions read from image tags, the tables that judge a
version, model facts by glob, and the shape of the data (every table names its source)."""

from __future__ import annotations

import pytest

from bot.serve import specdata


@pytest.mark.parametrize(("engine", "image", "version"), [
    ("vllm", "vllm/vllm-openai:v0.14.1", "0.14.1"),
    ("vllm", "vllm/vllm-openai-rocm:v0.27.1", "0.27.1"),
    ("vllm", "vllm/vllm-openai:v0.20.1-ubuntu2404", "0.20.1"),
    ("vllm", "vllm/vllm-openai:vllm-x86_64-cu13-0.25.1-7a33ba9", "0.25.1"),
    ("vllm", "vllm/vllm-openai:nightly-dev-arm64-cu13.0.1-426e59f", None),  # cu13.0.1 is CUDA's
    ("vllm", "vllm/vllm-openai:nightly-5e35a6f4f9bbc217c599692157ca985c894373f7", None),
    ("vllm", "vllm/vllm-openai:kimi-k3", None),
    ("vllm", "rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.3", None),  # not vLLM's image
    ("sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi30x", "0.5.9"),
    ("sglang", "lmsysorg/sglang:v0.5.12.post1", "0.5.12.post1"),
    ("sglang", "lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3",
     "0.5.14"),
    ("sglang", "lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-20260726", "0.5.16"),
    ("sglang", "lmsysorg/sglang:nightly-dev-cu13-20260805-211ee642", None),
    ("trtllm", "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc22.post1", "1.3.0rc22"),
    ("trtllm", "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14", "1.3.0rc14"),
    ("trtllm", "ghcr.io#semianalysisai/trtllm-deepseek-v4:feat-deepseek_v4-c185066", None),
    ("atom", "rocm/atom:rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.3", None),
    ("vllm", "localhost:5000/vllm", None),  # a registry port is no tag
])
def test_version_of_an_image(engine: str, image: str, version: str | None) -> None:
    assert specdata.version_of(engine, image) == version


def test_version_order() -> None:
    keys = [specdata.version_key(v) for v in ("0.5.12", "0.5.12.post1", "0.5.14", "1.3.0rc14", "1.3.0rc24", "1.3.0")]
    assert keys == sorted(keys)  # type: ignore[type-var]


def test_the_tables_around_a_version() -> None:
    exact = specdata.methods_for("vllm", "vllm/vllm-openai:v0.25.1")
    assert exact is not None and [t.version for t in exact.tables] == ["0.25.1"] and exact.basis == "vLLM 0.25.1"
    between = specdata.methods_for("vllm", "vllm/vllm-openai:v0.24.0")
    assert between is not None and [t.version for t in between.tables] == ["0.22.0", "0.25.1"]
    assert between.known("dspark")  # 0.25.1 knows it: a name either neighbour knows is known
    assert not between.needs_model("dspark")
    older = specdata.methods_for("vllm", "vllm/vllm-openai:v0.11.0")
    assert older is not None and [t.version for t in older.tables] == ["0.14.1"]
    newer = specdata.methods_for("vllm", "vllm/vllm-openai:v9.0.0")
    assert newer is not None and [t.version for t in newer.tables] == ["0.34.0"]
    nightly = specdata.methods_for("sglang", "lmsysorg/sglang:dev-nightly-0820")
    assert nightly is not None and nightly.version is None and "newest table" in nightly.basis
    vllm_nightly = specdata.methods_for("vllm", "vllm/vllm-openai:nightly-3ee2df30337a301164c46ae444b76ee67e71c106")
    assert vllm_nightly is not None and not vllm_nightly.known("medusa")  # dropped by 0.34.0, the newest
    assert vllm_nightly.unknown_keys(["use_heterogeneous_vocab", "no_such_key"]) == ["no_such_key"]
    assert specdata.methods_for("atom", "rocm/atom:x") is None  # no data: ATOM is not judged


def test_names_compare_per_engine() -> None:
    vllm = specdata.methods_for("vllm", "vllm/vllm-openai:v0.25.1")
    sglang = specdata.methods_for("sglang", "lmsysorg/sglang:v0.5.14-cu130")
    trt = specdata.methods_for("trtllm", "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24")
    assert vllm and sglang and trt
    assert vllm.known("mtp") and not vllm.known("MTP") and vllm.canonical("deepseek_mtp") == "mtp"
    assert sglang.known("nextn") and sglang.canonical("NEXTN") == "EAGLE" and not sglang.known("DSPARK")
    assert trt.known("draft_target") and trt.known("DraftTarget") and not trt.known("NextN")
    assert trt.needs_model("DraftTarget") and not trt.needs_model("MTP")


def test_every_table_names_its_source() -> None:
    for engine in ("vllm", "sglang", "trtllm"):
        known = specdata.tables(engine)
        assert known, engine
        for t in known:
            assert " at v" in t.source and t.version in t.source, (engine, t.version, t.source)
            assert t.methods and t.needs_model <= t.methods and set(t.aliases) <= t.methods, (engine, t.version)
            assert set(t.aliases.values()) <= t.methods


def test_model_facts_by_glob() -> None:
    assert specdata.native_mtp("deepseek-ai/DeepSeek-R1-0528") is not None
    fact = specdata.native_mtp("NVIDIA/deepseek-r1-0528-fp4-v2")  # case-insensitive
    assert fact is not None and fact.mtp_layers == 1 and "num_nextn_predict_layers" in fact.source
    assert specdata.native_mtp("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B") is None  # a Qwen distill: no MTP
    assert specdata.native_mtp("deepseek-ai/DeepSeek-V3.2") is None  # no source for its count
    mimo = specdata.native_mtp("XiaomiMiMo/MiMo-V2.5")
    assert mimo is not None and mimo.mtp_layers == 3
    assert specdata.native_mtp("zai-org/GLM-5-FP8") is not None and specdata.native_mtp("zai-org/GLM-5.2-FP8") is None
    kimi = specdata.native_mtp("moonshotai/Kimi-K2.5")
    assert kimi is not None and kimi.mtp_layers == 0
    assert specdata.native_mtp("Qwen/Qwen3.5-397B-A17B") is None
    assert all(m.source for m in specdata.models())
