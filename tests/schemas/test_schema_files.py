"""The InferenceX JSON Schemas in ``schemas/``: well-formed, accept the seed example and both file
layouts (current ``scenarios:`` / ``labels:`` and legacy ``seq-len-configs:`` / flat runners), and
reject unknown fields, wrong types and missing fields at the exact JSON path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

SCHEMAS = Path(__file__).parents[2] / "schemas"
SEED = Path(__file__).parents[2] / "examples" / "seed" / "configs"
SCHEMA_FILES = ("master-config.schema.json", "runners.schema.json")

Path_ = tuple[str | int, ...]


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return data


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load(name))


def errors(name: str, doc: Any) -> set[tuple[Path_, str]]:
    """(JSON path, keyword) of every error."""
    return {(tuple(e.absolute_path), str(e.validator)) for e in validator(name).iter_errors(doc)}


def master_errors(doc: Any) -> set[tuple[Path_, str]]:
    return errors("master-config.schema.json", doc)


def runner_errors(doc: Any) -> set[tuple[Path_, str]]:
    return errors("runners.schema.json", doc)


def messages(name: str, doc: Any) -> list[str]:
    return [e.message for e in validator(name).iter_errors(doc)]


# --------------------------------------------------------------------------- fixtures (inline YAML)

CURRENT_SINGLE = """
dsr1-fp8-h200-sglang:
  image: lmsysorg/sglang:v0.5.2
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: h200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
      - { tp: 8, pp: 2, ep: 8, dp-attn: true, dcp-size: 2, pcp-size: 1, conc-list: [4, 8] }
      - tp: 4
        spec-decoding: mtp
        router: { name: sglang-router, version: "0.2.1" }
        conc-start: 1
        conc-end: 16
"""

CURRENT_MULTI = """
dsr1-fp4-gb200-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
  model: nvidia/DeepSeek-R1-0528-FP4
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  router: { name: dynamo-router, version: "0.8.1.post1" }
  kv-p2p-transfer: nixl
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - spec-decoding: mtp
        conc-list: [90]
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
          hardware: b200
          additional-settings:
          - "CONFIG_FILE=recipes/trtllm/b200-fp4/8k1k/mtp/ctx1_gen1.yaml"
        decode:
          num-worker: 2
          tp: 8
          pp: 1
          dcp-size: 2
          pcp-size: 1
          ep: 8
          dp-attn: false
          hardware: h100
"""

CURRENT_AGENTIC = """
qwen3.5-fp8-b300-vllm-agentic:
  image: vllm/vllm-openai:v0.11.0
  model: Qwen/Qwen3.5
  model-prefix: qwen3.5
  runner: cluster:b300-nv
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - tp: 8
        kv-offloading: dram
        kv-offload-backend: { name: lmcache, version: "0.3.9" }
        conc-list: [1, 2, 4]
      - tp: 4
        kv-offloading: none
        conc-start: 1
        conc-end: 8
"""

LEGACY_SINGLE = """
gptoss-fp4-h100-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: h100
  precision: fp4
  framework: vllm
  seq-len-configs:
  - isl: 1024
    osl: 8192
    search-space:
    - { tp: 2, conc-start: 4, conc-end: 64 }
    - { tp: 8, ep: 8, dp-attn: true, conc-start: 4, conc-end: 16 }
"""

LEGACY_MULTI = """
dsr1-fp8-gb200-dynamo-sglang:
  image: lmsysorg/sglang:v0.5.5
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: gb200
  precision: fp8
  framework: dynamo-sglang
  multinode: true
  disagg: true
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - conc-list: [4, 8, 16]
      prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
      decode: { num-worker: 1, tp: 8, ep: 8, dp-attn: true, additional-settings: ["DECODE_NODES=2"] }
"""

LEGACY_AGENTIC = """
kimik2.5-int4-mi355x-vllm-agentic:  # May-June 2026: offloading + duration
  image: vllm/vllm-openai-rocm:v0.14.1
  model: moonshotai/Kimi-K2.5
  model-prefix: kimik2.5
  runner: mi355x
  precision: int4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - duration: 1800
      search-space:
      - { tp: 8, offloading: lmcache, conc-list: [1, 4] }
kimik2.5-int4-b300-vllm-agentic:  # early July 2026: kv-offload-backend as a plain string
  image: vllm/vllm-openai:v0.14.1
  model: moonshotai/Kimi-K2.5
  model-prefix: kimik2.5
  runner: cluster:b300-nv
  precision: int4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - { tp: 8, kv-offloading: dram, kv-offload-backend: lmcache, conc-start: 1, conc-end: 4 }
"""

FLAT_RUNNERS = """
h100:
- 'h100-cr_0'
- 'h100-cw_0'
mi300x:
- 'mi300x-amd_0'
"""

STRUCTURED_RUNNERS = """
labels:
  h100: [h100-cw_00, h100-cw_01]
  cluster:b300-nv: [b300-nv_01, b300-nv_02]
hardware:
  cluster:b300-nv:
    available-cpu-dram-mib: 2_964_436
    gpus-per-node: 8
"""


def y(text: str) -> Any:
    return yaml.safe_load(text)


def only(doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (key, entry), = doc.items()
    return key, entry


# --------------------------------------------------------------------------- (1) well-formed


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_every_property_has_title_and_description(name: str) -> None:
    missing: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for prop, sub in node.get("properties", {}).items():
                if not isinstance(sub, dict) or not sub.get("title") or not sub.get("description"):
                    missing.append(f"{where}/properties/{prop}")
            for k, v in node.items():
                if k != "if":  # dispatch conditions are not user-facing fields
                    walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}/{i}")

    schema = load(name)
    for def_name, sub in schema["$defs"].items():
        walk(sub, f"#/$defs/{def_name}")
        assert sub.get("title") and sub.get("description"), def_name
    assert missing == []


# --------------------------------------------------------------------------- (2) the seed example


def test_seed_master_config_validates() -> None:
    files = sorted(SEED.glob("*master*.yaml"))
    assert files, "examples/seed/configs has no master config"
    for path in files:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert len(doc) >= 1
        assert master_errors(doc) == set(), path.name


def test_seed_runners_validates() -> None:
    doc = yaml.safe_load((SEED / "runners.yaml").read_text(encoding="utf-8"))
    assert "labels" in doc
    assert runner_errors(doc) == set()


# --------------------------------------------------------------------------- (3) positive cases


@pytest.mark.parametrize(
    "text",
    [CURRENT_SINGLE, CURRENT_MULTI, CURRENT_AGENTIC, LEGACY_SINGLE, LEGACY_MULTI, LEGACY_AGENTIC],
    ids=["current-single", "current-multinode", "current-agentic", "legacy-single", "legacy-multinode",
         "legacy-agentic"],
)
def test_valid_master_configs(text: str) -> None:
    assert master_errors(y(text)) == set()


def test_all_layouts_in_one_file() -> None:
    doc: dict[str, Any] = {}
    for text in (CURRENT_SINGLE, CURRENT_MULTI, CURRENT_AGENTIC, LEGACY_SINGLE, LEGACY_MULTI, LEGACY_AGENTIC):
        doc.update(y(text))
    assert len(doc) == 7
    assert master_errors(doc) == set()


@pytest.mark.parametrize("text", [FLAT_RUNNERS, STRUCTURED_RUNNERS], ids=["flat", "labels-hardware"])
def test_valid_runners(text: str) -> None:
    assert runner_errors(y(text)) == set()


def test_structured_runners_hardware_is_optional() -> None:
    doc = y(STRUCTURED_RUNNERS)
    del doc["hardware"]
    assert runner_errors(doc) == set()


# --------------------------------------------------------------------------- (3) negative cases

SS0 = ("scenarios", "fixed-seq-len", 0, "search-space", 0)


def test_misspelled_conc_start() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    bmk = entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]
    bmk["conc-strat"] = bmk.pop("conc-start")
    assert master_errors(doc) == {((key, *SS0), "additionalProperties")}
    assert any("'conc-strat' was unexpected" in m for m in messages("master-config.schema.json", doc))


def test_bool_is_not_an_integer() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]["tp"] = True
    entry["scenarios"]["fixed-seq-len"][0]["search-space"][1]["pp"] = True
    assert master_errors(doc) == {
        ((key, *SS0, "tp"), "type"),
        ((key, "scenarios", "fixed-seq-len", 0, "search-space", 1, "pp"), "type"),
    }


def test_missing_tp() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    del entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]["tp"]
    assert master_errors(doc) == {((key, *SS0), "required")}
    assert messages("master-config.schema.json", doc) == ["'tp' is a required property"]


def test_unknown_spec_decoding_value() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    entry["scenarios"]["fixed-seq-len"][0]["search-space"][2]["spec-decoding"] = "eagle"
    assert master_errors(doc) == {((key, "scenarios", "fixed-seq-len", 0, "search-space", 2, "spec-decoding"),
                                   "enum")}


def test_non_positive_pp_and_conc() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    ss = entry["scenarios"]["fixed-seq-len"][0]["search-space"]
    ss[1]["pp"] = 0
    ss[1]["conc-list"] = [4, 0]
    assert master_errors(doc) == {
        ((key, "scenarios", "fixed-seq-len", 0, "search-space", 1, "pp"), "minimum"),
        ((key, "scenarios", "fixed-seq-len", 0, "search-space", 1, "conc-list", 1), "minimum"),
    }


def test_missing_top_level_fields() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    del entry["multinode"]
    del entry["image"]
    assert master_errors(doc) == {((key,), "required")}
    assert sorted(messages("master-config.schema.json", doc)) == [
        "'image' is a required property", "'multinode' is a required property"]


def test_missing_scenarios_and_seq_len_configs() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    del entry["scenarios"]
    assert master_errors(doc) == {((key,), "required")}
    assert messages("master-config.schema.json", doc) == ["'scenarios' is a required property"]


def test_scenarios_and_seq_len_configs_do_not_mix() -> None:
    doc = y(LEGACY_SINGLE)
    key, entry = only(doc)
    entry["scenarios"] = {"fixed-seq-len": []}
    assert master_errors(doc) == {((key,), "additionalProperties")}


def test_router_is_not_a_legacy_top_level_field() -> None:
    doc = y(LEGACY_SINGLE)
    key, entry = only(doc)
    entry["router"] = {"name": "r", "version": "1"}
    assert master_errors(doc) == {((key,), "additionalProperties")}


def test_kv_p2p_transfer_not_in_single_node_fixed_seq_len() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]["kv-p2p-transfer"] = "nixl"
    entry["kv-p2p-transfer"] = "nixl"
    assert master_errors(doc) == {((key, *SS0), "additionalProperties"), ((key,), "additionalProperties")}


def test_multinode_worker_errors() -> None:
    doc = y(CURRENT_MULTI)
    key, entry = only(doc)
    bmk = entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]
    del bmk["prefill"]["dp-attn"]
    bmk["decode"]["batch-size"] = 64
    bmk["decode"]["hardware"] = ""
    bmk["decode"]["num-worker"] = "2"
    assert master_errors(doc) == {
        ((key, *SS0, "prefill"), "required"),
        ((key, *SS0, "decode"), "additionalProperties"),
        ((key, *SS0, "decode", "hardware"), "minLength"),
        ((key, *SS0, "decode", "num-worker"), "type"),
    }


def test_multinode_entry_needs_worker_pools_not_tp() -> None:
    doc = y(CURRENT_MULTI)
    key, entry = only(doc)
    entry["scenarios"]["fixed-seq-len"][0]["search-space"] = [{"tp": 8, "conc-start": 1, "conc-end": 8}]
    assert master_errors(doc) == {((key, *SS0), "additionalProperties"), ((key, *SS0), "required")}


def test_multinode_must_be_a_boolean() -> None:
    doc = y(CURRENT_MULTI)
    key, entry = only(doc)
    entry["multinode"] = "true"  # not true: validated as a single-node entry
    assert ((key, "multinode"), "type") in master_errors(doc)
    assert ((key, "multinode"), "const") in master_errors(doc)


def test_component_metadata() -> None:
    doc = y(CURRENT_MULTI)
    key, entry = only(doc)
    entry["router"] = {"name": "dynamo-router", "version": "image:nvcr.io/dynamo:0.8.1", "commit": "abc"}
    errs = master_errors(doc)
    assert errs == {((key, "router"), "anyOf")}
    (err,) = [e for e in validator("master-config.schema.json").iter_errors(doc)]
    assert {(tuple(c.absolute_path), str(c.validator)) for c in err.context or ()} == {
        ((key, "router"), "additionalProperties"),
        ((key, "router", "version"), "pattern"),
        ((key, "router"), "type"),
    }


def test_agentic_values() -> None:
    doc = y(CURRENT_AGENTIC)
    key, entry = only(doc)
    scen = entry["scenarios"]["agentic-coding"][0]
    scen["dram-utilization"] = 1.5
    scen["trace-source"] = "swebench"  # documented in CONFIGS.md, never accepted by validation.py
    scen["search-space"][1]["kv-offloading"] = "ssd"
    assert master_errors(doc) == {
        ((key, "scenarios", "agentic-coding", 0, "dram-utilization"), "maximum"),
        ((key, "scenarios", "agentic-coding", 0), "additionalProperties"),
        ((key, "scenarios", "agentic-coding", 0, "search-space", 1, "kv-offloading"), "enum"),
    }


def test_unknown_scenario_type() -> None:
    doc = y(CURRENT_SINGLE)
    key, entry = only(doc)
    entry["scenarios"]["fixed-seq-lens"] = entry["scenarios"].pop("fixed-seq-len")
    assert master_errors(doc) == {((key, "scenarios"), "additionalProperties")}


def test_wildcard_entry_name() -> None:
    doc = {"dsr1-*": only(y(CURRENT_SINGLE))[1]}
    assert master_errors(doc) == {((), "pattern")}


def test_legacy_search_space_typo() -> None:
    doc = y(LEGACY_SINGLE)
    key, entry = only(doc)
    entry["seq-len-configs"][0]["search-space"][1]["dp_attn"] = entry["seq-len-configs"][0]["search-space"][1].pop(
        "dp-attn")
    entry["seq-len-configs"][0]["isl"] = "1024"
    assert master_errors(doc) == {
        ((key, "seq-len-configs", 0, "search-space", 1), "additionalProperties"),
        ((key, "seq-len-configs", 0, "isl"), "type"),
    }


def test_flat_runners_errors() -> None:
    doc = y(FLAT_RUNNERS)
    doc["mi300x"] = []
    doc["h100"].append(7)
    doc["b200"] = "b200-nb_0"
    assert runner_errors(doc) == {(("mi300x",), "minItems"), (("h100", 2), "type"), (("b200",), "type")}


def test_structured_runners_errors() -> None:
    doc = y(STRUCTURED_RUNNERS)
    hw = doc["hardware"]["cluster:b300-nv"]
    hw["gpus-per-node"] = 0
    hw["gpus_per_node"] = 8
    del hw["available-cpu-dram-mib"]
    doc["labels"]["h100"] = []
    doc["hardwares"] = {}
    assert runner_errors(doc) == {
        (("hardware", "cluster:b300-nv", "gpus-per-node"), "minimum"),
        (("hardware", "cluster:b300-nv"), "additionalProperties"),
        (("hardware", "cluster:b300-nv"), "required"),
        (("labels", "h100"), "minItems"),
        ((), "additionalProperties"),
    }


def test_flat_layout_cannot_carry_hardware_facts() -> None:
    doc = copy.deepcopy(y(FLAT_RUNNERS))
    doc["hardware"] = {"cluster:b300-nv": {"available-cpu-dram-mib": 1, "gpus-per-node": 8}}
    assert runner_errors(doc) == {(("hardware",), "type")}
