"""The engine args of multinode recipes (``bot.launches.multinode.recipe_workers``), read with
the repo's YAML reader."""

from __future__ import annotations

from typing import Any

from bot.launches.multinode import recipe_workers
from bot.repo.load.yamlfile import YMap, load

RECIPE = """\
model:
  path: dsr1
  container: img
backend:
  type: sglang
  prefill_environment:
    SGLANG_X: "1"
  sglang_config:
    prefill:
      tp-size: 4
      enable-dp-attention: false
      speculative-algorithm: EAGLE
      speculative-num-steps: 1
    decode:
      tp-size: 8
      dp-size: 8
      enable-dp-attention: true
zip_override_lowlat:
  backend:
    sglang_config:
      decode:
        tp-size: [16, 32]
"""


def doc(text: str) -> YMap:
    value: Any
    value, err = load(text)
    assert err is None and isinstance(value, YMap)
    return value


def test_each_worker_block_is_a_command() -> None:
    workers, reasons = recipe_workers(doc(RECIPE), "r.yaml")
    assert reasons == []
    assert workers["prefill"].args["tp_size"] == 4 and "enable_dp_attention" not in workers["prefill"].args
    assert workers["prefill"].spec is not None and workers["prefill"].spec["kind"] == "mtp"
    assert workers["prefill"].env == {"SGLANG_X": "1"} and workers["decode"].env == {}
    assert workers["decode"].args["enable_dp_attention"] is True and workers["decode"].spec is None
    assert workers["prefill"].model == "dsr1"  # the recipe's model.path when the block names none
    assert workers["decode"].sources["tp_size"] == "r.yaml:15"  # the key's line


def test_a_zip_override_selector_picks_its_element() -> None:
    workers, _ = recipe_workers(doc(RECIPE), "r.yaml", "zip_override_lowlat[1]")
    assert workers["decode"].args["tp_size"] == 32 and workers["prefill"].args["tp_size"] == 4


def test_a_selector_naming_no_block_is_a_reason() -> None:
    workers, reasons = recipe_workers(doc(RECIPE), "r.yaml", "override_nope")
    assert workers and reasons == ["the selector 'override_nope' names no block of the recipe"]


def test_an_old_recipe_without_a_backend_type() -> None:
    workers, reasons = recipe_workers(doc(RECIPE.replace("  type: sglang\n", "")), "r.yaml")
    assert reasons == [] and workers["decode"].engine == "sglang"


def test_trtllm_keys_are_llm_api_keys() -> None:
    text = ("backend:\n  type: trtllm\n  trtllm_config:\n    decode:\n      tensor_parallel_size: 8\n"
            "      speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}\n")
    workers, reasons = recipe_workers(doc(text), "t.yaml")
    assert reasons == []
    spec = workers["decode"].spec
    assert workers["decode"].args["tensor_parallel_size"] == 8
    assert spec is not None and (spec["method"], spec["num_speculative_tokens"]) == ("MTP", 3)


def test_no_backend_is_a_reason() -> None:
    workers, reasons = recipe_workers(doc("model: {path: x}\n"), "x.yaml")
    assert workers == {} and reasons == ["recipe x.yaml has no backend block"]
