"""spec-config-invalid and spec-exceeds-mtp-layers through the real lint: copies of the clean
fixture repos with one setting changed (the spec line of an ``_mtp`` script, an entry's image),
judged by the engine version the image names."""

from __future__ import annotations

from pathlib import Path

from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.repo.load.speculators import ModelPolicy, SpecPolicy
from tests.conftest import FIXTURES, copy_repo

SCRIPTS = "benchmarks/single_node/fixed_seq_len/"
RULES = ("spec-config-invalid", "spec-exceeds-mtp-layers")
# the spec settings of the clean twin's _mtp scripts, as written there
VLLM_DSR1 = 'SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1}"'
VLLM_KIMI = '\'{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}\''
VLLM_QWEN = '\'{"method": "qwen3_5_mtp", "num_speculative_tokens": 1}\''
SGLANG = ("--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
          "--speculative-num-draft-tokens 2")
TRT = "  decoding_type: MTP\n  num_nextn_predict_layers: 1\n"


def _lint(tmp_path: Path, fixture: str = "spec-config-clean", edits: dict[str, tuple[str, str]] | None = None,
          images: dict[str, str] | None = None, conf: Config | None = None) -> list[Finding]:
    repo = copy_repo(FIXTURES / fixture, tmp_path / "repo")
    for name, (old, new) in (edits or {}).items():
        path = repo / name
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1))
    if images:
        cfg = repo / "configs/nvidia-master.yaml"
        text = cfg.read_text()
        for old, new in images.items():
            assert old in text, old
            text = text.replace(old, new)
        cfg.write_text(text)
    return [f for f in lint(WorkTree(str(repo)), conf or Config()).findings if f.rule in RULES]


def _one(found: list[Finding], rule: str = "spec-config-invalid") -> Finding:
    mine = [f for f in found if f.rule == rule]
    assert len(mine) == 1, [f.text() for f in found]
    return mine[0]


def _vllm(tmp_path: Path, config: str, image: str | None = None) -> list[Finding]:
    images = {"image: vllm/vllm-openai:v0.20.1-ubuntu2404": f"image: {image}"} if image else None
    return _lint(tmp_path, edits={SCRIPTS + "qwen3.5_bf16_h200_mtp.sh": (VLLM_QWEN, f"'{config}'")}, images=images)


# --- spec-config-invalid: vLLM ------------------------------------------------------------------


def test_the_clean_twin_has_none(tmp_path: Path) -> None:
    assert _lint(tmp_path) == []


def test_broken_json_in_an_escaped_variable_is_reported_where_the_variable_is_set(tmp_path: Path) -> None:
    broken = 'SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1"'
    f = _one(_lint(tmp_path, edits={SCRIPTS + "dsr1_fp8_h200_mtp.sh": (VLLM_DSR1, broken)}))
    assert (f.path, f.line) == (SCRIPTS + "dsr1_fp8_h200_mtp.sh", 4)  # the assignment, not the flag (line 6)
    assert f.entries == ("dsr1-fp8-h200-vllm-mtp",)
    assert "does not parse as JSON after shell unquoting" in f.message and "vLLM 0.25.1 refuses to start" in f.message
    assert "tp 8, conc 4-64, isl 1024 / osl 1024" in f.message


def test_a_value_that_is_no_json_object(tmp_path: Path) -> None:
    f = _one(_vllm(tmp_path / "a", "mtp"))
    assert "is not a JSON object ('mtp')" in f.message
    f = _one(_vllm(tmp_path / "b", '[{"method": "mtp"}]'))
    assert "is not a JSON object ('list')" in f.message


def test_a_method_is_known_or_not_by_the_version_the_image_names(tmp_path: Path) -> None:
    config = '{"method": "dspark", "model": "org/draft", "num_speculative_tokens": 3}'
    f = _one(_vllm(tmp_path / "a", config))  # the entry's image is vLLM 0.20.1: no dspark yet
    assert "vLLM does not know the speculative method 'dspark'" in f.message
    assert "vLLM 0.20.1: vllm/config/speculative.py at v0.20.1 (vllm-project/vllm)" in f.message
    assert _vllm(tmp_path / "b", config, "vllm/vllm-openai:v0.25.1") == []


def test_deprecated_aliases_are_not_errors_where_the_version_has_them(tmp_path: Path) -> None:
    assert _vllm(tmp_path / "a", '{"method": "deepseek_mtp", "num_speculative_tokens": 1}') == []
    assert _vllm(tmp_path / "b", '{"method": "mimo_v2_mtp", "num_speculative_tokens": 1}',
                 "vllm/vllm-openai:v0.25.1") == []
    # vLLM 0.14.1 has no qwen3_5_mtp: its Literal rejects the name
    f = _one(_vllm(tmp_path / "c", '{"method": "qwen3_5_mtp", "num_speculative_tokens": 1}',
                   "vllm/vllm-openai-rocm:v0.14.1"))
    assert "'qwen3_5_mtp'" in f.message and "vLLM 0.14.1" in f.message


def test_tokens_may_be_omitted_only_with_a_draft_model(tmp_path: Path) -> None:
    f = _one(_vllm(tmp_path / "a", '{"method": "mtp"}'))
    assert "'num_speculative_tokens' is missing" in f.message
    # the count comes from the draft config's n_predict (the target's own MTP layers here)
    assert _vllm(tmp_path / "b", '{"method": "mtp", "model": "Qwen/Qwen3.5-397B-A17B"}') == []
    assert _vllm(tmp_path / "c", '{"method": "suffix"}') == []  # suffix has a default


def test_draft_methods_need_a_model_but_dspark_reads_the_target_from_0_25_1(tmp_path: Path) -> None:
    f = _one(_vllm(tmp_path / "a", '{"method": "eagle3", "num_speculative_tokens": 3}'))
    assert "method 'eagle3' needs its draft checkpoint in 'model'" in f.message
    assert _vllm(tmp_path / "b", '{"method": "dspark", "num_speculative_tokens": 3}', "vllm/vllm-openai:v0.27.1") == []
    f = _one(_vllm(tmp_path / "c", '{"num_speculative_tokens": 3}'))
    assert "neither a 'method' nor a draft 'model'" in f.message


def test_unknown_keys_and_values_by_version(tmp_path: Path) -> None:
    f = _one(_vllm(tmp_path / "a", '{"method": "mtp", "num_speculative_token": 3}'))
    assert "no speculative_config key 'num_speculative_token'" in f.message and "missing" in f.message
    # attention_backend arrived in 0.21.0
    f = _one(_vllm(tmp_path / "b", '{"method": "mtp", "num_speculative_tokens": 1, "attention_backend": "FLASH_ATTN"}'))
    assert "'attention_backend'" in f.message
    config = '{"method": "mtp", "num_speculative_tokens": 1, "rejection_sample_method": "block"}'
    assert "'block' is not one of probabilistic, strict, synthetic" in _one(_vllm(tmp_path / "c", config)).message
    # 0.24.0 lies between the 0.22.0 and 0.25.1 tables: a value either knows is not reported
    assert _vllm(tmp_path / "d", config, "vllm/vllm-openai:v0.24.0") == []


def test_a_nightly_image_is_judged_by_the_newest_table(tmp_path: Path) -> None:
    f = _one(_vllm(tmp_path, '{"method": "medusa", "model": "org/medusa", "num_speculative_tokens": 3}',
                   "vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f"))
    assert "vLLM 0.34.0, the newest table (the image tag names no vLLM version)" in f.message


def test_unknown_parts_are_not_judged(tmp_path: Path) -> None:
    # command substitutions the repository cannot know: neither the method nor the count is judged
    config = '{"method": "\'"$(cat /tmp/method)"\'", "num_speculative_tokens": \'"$(nproc)"\'}'
    assert _vllm(tmp_path, config) == []


# --- spec-config-invalid: SGLang and TRT-LLM ----------------------------------------------------


def _sglang(tmp_path: Path, args: str, image: str | None = None) -> list[Finding]:
    images = {"image: lmsysorg/sglang:v0.5.14-cu130": f"image: {image}"} if image else None
    return _lint(tmp_path, edits={SCRIPTS + "glm5_fp8_h200_mtp.sh": (SGLANG, args)}, images=images)


def test_sglang_draft_tokens_other_than_steps_plus_one_at_topk_1(tmp_path: Path) -> None:
    f = _one(_sglang(tmp_path / "a", SGLANG.replace("draft-tokens 2", "draft-tokens 4")))
    assert (f.path, f.line) == (SCRIPTS + "glm5_fp8_h200_mtp.sh", 5)
    assert "replaces it with steps + 1 = 2" in f.message
    assert _sglang(tmp_path / "b", SGLANG.replace("topk 1", "topk 4").replace("draft-tokens 2", "draft-tokens 8")) == []
    f = _one(_sglang(tmp_path / "c", "--speculative-algorithm NEXTN --speculative-eagle-topk 1"))
    assert "without --speculative-num-steps" in f.message


def test_sglang_algorithms_by_version(tmp_path: Path) -> None:
    assert _sglang(tmp_path / "a", SGLANG.replace("EAGLE", "nextn")) == []  # upper-cased; NEXTN is EAGLE
    f = _one(_sglang(tmp_path / "b", "--speculative-algorithm MEDUSA"))
    assert "SGLang does not know --speculative-algorithm MEDUSA" in f.message
    dspark = "--speculative-algorithm DSPARK --speculative-draft-model-path org/d"
    assert "SGLang 0.5.14" in _one(_sglang(tmp_path / "c", dspark)).message
    assert _sglang(tmp_path / "d", dspark, "lmsysorg/sglang:v0.5.16-cu130") == []
    f = _one(_sglang(tmp_path / "e", "--speculative-algorithm EAGLE3 --speculative-num-steps 3 "
                                     "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4"))
    assert "needs --speculative-draft-model-path" in f.message


def _trt(tmp_path: Path, yaml: str) -> list[Finding]:
    return _lint(tmp_path, edits={SCRIPTS + "dsr1_fp4_h200_mtp.sh": (TRT, yaml)})


def test_trtllm_heredoc_decoding_type(tmp_path: Path) -> None:
    f = _one(_trt(tmp_path / "a", "  decoding_type: NextN\n  num_nextn_predict_layers: 1\n"))
    assert (f.path, f.line) == (SCRIPTS + "dsr1_fp4_h200_mtp.sh", 8)  # the decoding_type line of the heredoc
    assert "TRT-LLM does not know decoding_type 'NextN'" in f.message and "TRT-LLM 1.3.0rc24" in f.message
    assert _trt(tmp_path / "b", "  decoding_type: mtp\n  max_draft_len: 1\n") == []  # compared loosely
    f = _one(_trt(tmp_path / "c", "  decoding_type: Eagle3\n  max_draft_len: 3\n"))
    assert "needs its draft checkpoint in speculative_model" in f.message
    assert _trt(tmp_path / "d", "  decoding_type: Eagle3\n  max_draft_len: 3\n  speculative_model: org/e3\n") == []
    f = _one(_trt(tmp_path / "e", "  max_draft_len: 1\n"))
    assert "has no decoding_type" in f.message


# --- spec-exceeds-mtp-layers --------------------------------------------------------------------


def test_one_layer_with_three_tokens_is_noted_three_layers_with_three_is_not(tmp_path: Path) -> None:
    found = _lint(tmp_path, "spec-layers")
    f = _one(found, "spec-exceeds-mtp-layers")
    assert (f.path, f.line) == (SCRIPTS + "dsr1_fp8_h200_mtp.sh", 4)  # the SPEC_CONFIG assignment
    assert f.entries == ("dsr1-fp8-h200-vllm-mtp",)
    assert "MTP drafts 3 tokens per step with deepseek-ai/DeepSeek-R1-0528, which has 1 native MTP layer" in f.message
    assert "num_nextn_predict_layers = 1" in f.message and "reuses it for the other 2 draft steps" in f.message


def test_the_repo_policy_overrides_the_shipped_count(tmp_path: Path) -> None:
    ours = ModelPolicy("deepseek-ai/DeepSeek-R1*", line=3, mtp_layers=3, source="our own checkpoint")
    assert _lint(tmp_path / "a", "spec-layers", conf=Config(speculators=SpecPolicy(".benchbot/speculators.yml",
                                                                                    (ours,)))) == []
    mimo = ModelPolicy("*mimo-v2.5", line=7, mtp_layers=1, source="vLLM loads one layer")
    f = _one(_lint(tmp_path / "b", "spec-layers-clean", conf=Config(speculators=SpecPolicy(
        ".benchbot/speculators.yml", (mimo,)))), "spec-exceeds-mtp-layers")
    assert "vLLM loads one layer (speculator policy, .benchbot/speculators.yml:7)" in f.message


def test_sglang_steps_and_trtllm_layers_count_as_tokens(tmp_path: Path) -> None:
    steps = SGLANG.replace("steps 1", "steps 3").replace("draft-tokens 2", "draft-tokens 4")
    f = _one(_sglang(tmp_path / "a", steps), "spec-exceeds-mtp-layers")
    assert "zai-org/GLM-5-FP8, which has 1 native MTP layer" in f.message
    assert _sglang(tmp_path / "b", steps + " --speculative-draft-model-path org/eagle") == []  # a draft: not MTP
    f = _one(_trt(tmp_path / "c", "  decoding_type: MTP\n  num_nextn_predict_layers: 3\n"), "spec-exceeds-mtp-layers")
    assert (f.path, f.line) == (SCRIPTS + "dsr1_fp4_h200_mtp.sh", 9)  # the num_nextn_predict_layers line


def test_a_model_with_no_known_count_is_not_judged(tmp_path: Path) -> None:
    assert _vllm(tmp_path, '{"method": "mtp", "num_speculative_tokens": 5}') == []  # Qwen3.5: no source
