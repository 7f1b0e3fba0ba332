"""Recipe parity facts (``bot.recipes.compare``) on the recipe-parity fixture repo: real
launcher and script evaluations, real recipe files through the real renderers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import load_config
from bot.recipes import compare
from bot.recipes.compare import comparisons, hardware_of, query_of
from bot.recipes.model import Query, SourceUnavailable
from bot.recipes.sources import LocalSource
from bot.repo.facts import Facts, gather
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES

REPO = FIXTURES / "recipe-parity"
SOURCES = [LocalSource(REPO / "recipes", "vllm"), LocalSource(REPO / "recipes", "sglang")]


def facts_of(repo: Path) -> Facts:
    tree = WorkTree(str(repo))
    return gather(tree, load_config(tree).profile)


def by_entry(found: list[compare.Comparison]) -> dict[str, list[compare.Comparison]]:
    out: dict[str, list[compare.Comparison]] = {}
    for c in found:
        out.setdefault(c.entry.name, []).append(c)
    return out


def test_hardware_of_runner_labels() -> None:
    assert hardware_of("b200") == "b200"
    assert hardware_of("b200-dgxc") == "b200"
    assert hardware_of("h100-dgxc-slurm") == "h100"
    assert hardware_of("cluster:mi355x-amds") == "mi355x"
    assert hardware_of("gb300-nv") == "gb300"
    assert hardware_of("rtx6000pro") is None
    assert hardware_of(None) is None


def test_each_entry_is_compared_with_its_recipe() -> None:
    got = by_entry(comparisons(facts_of(REPO), SOURCES))
    [coder] = got["coder9b-fp8-h200-vllm"]
    assert coder.recipe is not None and coder.recipe.provenance.path == "models/acme/Coder-9B.yaml"
    assert [(d.key, d.klass, d.status, d.recipe) for d in coder.major] == [
        ("kv_cache_dtype", "MAJOR", "missing-in-script", "fp8_e4m3")]
    [mtp] = got["widget3-fp8-b200-sglang-mtp"]
    assert dict(mtp.recipe.provenance.selection)["strategy"] == "low-latency"  # type: ignore[union-attr]
    assert {(d.key, d.script, d.recipe) for d in mtp.major} == {
        ("speculative_num_steps", 2, 3), ("speculative_num_draft_tokens", 3, 4)}
    assert all(d.where and d.where.startswith("benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh:")
               for d in mtp.major)
    [plain] = got["widget3-fp8-b200-sglang"]
    # STP: the cookbook's cell without speculation (balanced), and the same command
    assert dict(plain.recipe.provenance.selection)["strategy"] == "balanced"  # type: ignore[union-attr]
    assert plain.differences == () and plain.major == []


def test_the_clean_twin_has_no_major_difference() -> None:
    found = comparisons(facts_of(FIXTURES / "recipe-parity-clean"), SOURCES)
    assert len(found) == 3 and all(c.recipe is not None and not c.major for c in found)


def test_points_are_grouped_by_what_they_ask_of_a_recipe(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    config = repo / "configs/nvidia-master.yaml"
    config.write_text(config.read_text().replace(
        "      - { tp: 8, conc-start: 4, conc-end: 64 }\n",
        "      - { tp: 8, conc-start: 4, conc-end: 64 }\n      - { tp: 8, conc-start: 128, conc-end: 256 }\n"
        "      - { tp: 4, conc-start: 4, conc-end: 64 }\n", 1))
    facts = facts_of(repo)
    found = [c for c in comparisons(facts, SOURCES) if c.entry.name == "coder9b-fp8-h200-vllm"]
    assert [(c.point.get("tp"), len(c.points)) for c in found] == [(8, 2), (4, 1)]
    # the tp 4 group is its own evaluation: the launcher run for that point, not the first one's
    assert [c.query.tp for c in found if c.query] == [8, 4]
    every = [c for c in comparisons(facts, SOURCES, all_points=True) if c.entry.name == "coder9b-fp8-h200-vllm"]
    assert len(every) == 3


def test_the_query_is_the_entry_and_its_point() -> None:
    facts = facts_of(REPO)
    entry = next(e for e in facts.entries if e.name == "widget3-fp8-b200-sglang-mtp")
    assert query_of(entry, entry.points[0]) == Query(engine="sglang", model="Acme/Widget3-100B-FP8", hardware="b200",
                                                     precision="fp8", tp=4, ep=1, dp_attn=False, spec="mtp")


def test_no_recipe_is_a_miss_with_its_reason() -> None:
    found = comparisons(facts_of(REPO), [LocalSource(REPO / "recipes", "sglang")])
    coder = next(c for c in found if c.entry.name == "coder9b-fp8-h200-vllm")
    assert coder.recipe is None and coder.miss is not None and "vLLM recipes" in coder.miss.reason


class _Gone:
    kind, name, revision = "sglang", "sgl-project/sglang", "0" * 40

    def get(self, path: str) -> str | None:
        raise SourceUnavailable("API rate limit exceeded")

    def list(self, prefix: str) -> list[str]:
        raise SourceUnavailable("API rate limit exceeded")


def test_a_source_that_stops_answering_is_a_miss_not_an_error() -> None:
    found = comparisons(facts_of(REPO), [_Gone()])
    mtp = next(c for c in found if c.entry.name == "widget3-fp8-b200-sglang-mtp")
    assert mtp.miss is not None and "rate limit" in mtp.miss.reason


@pytest.mark.parametrize("engine", ["trt", "atom"])
def test_engines_without_an_official_source_are_not_compared(tmp_path: Path, engine: str) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    config = repo / "configs/nvidia-master.yaml"
    config.write_text(config.read_text().replace("framework: vllm", f"framework: {engine}"))
    assert "coder9b-fp8-h200-vllm" not in {c.entry.name for c in comparisons(facts_of(repo), SOURCES)}


def test_what_the_search_space_asks_for_is_shown_not_judged(tmp_path: Path) -> None:
    """The point sweeps TP 8 where the cookbook's cell serves TP 4; the script also names the
    FP8 checkpoint's own quantization: both differences are listed, neither is judged."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "recipe-parity-clean", repo)
    config = repo / "configs/nvidia-master.yaml"
    config.write_text(config.read_text().replace("- { tp: 4, conc-start: 4, conc-end: 64, spec-decoding: mtp }",
                                                 "- { tp: 8, conc-start: 4, conc-end: 64, spec-decoding: mtp }"))
    script = repo / "benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh"
    script.write_text(script.read_text().replace('--tp "$TP"', '--tp "$TP" --quantization fp8'))
    found = comparisons(facts_of(repo), SOURCES)
    mtp = next(c for c in found if c.entry.name == "widget3-fp8-b200-sglang-mtp")
    shown = {d.key: d for d in mtp.differences}
    assert shown["tp_size"].script == 8 and shown["tp_size"].recipe == 4
    assert shown["tp_size"].notes[-1] == "set by the search space (tp=8); the recipe's is 4"
    assert shown["quantization"].status == "extra-in-script"
    assert mtp.major == []
