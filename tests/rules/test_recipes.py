"""missing-recipe and recipe-image-mismatch beyond the fixture repos."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.rules.recipe_image_mismatch import same_image
from tests.conftest import FIXTURES, copy_repo

RECIPES = FIXTURES / "multinode-recipes"
CLEAN = FIXTURES / "multinode-recipes-clean"
ROOT = "benchmarks/multi_node/srt-slurm-recipes"
SGLANG_RECIPE = f"{ROOT}/sglang/dsr1/gb200-fp8/8k1k/disagg-1p1d.yaml"


def findings(repo: Path, rule: str) -> list[Finding]:
    return [f for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == rule]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


# ------------------------------------------------------------------ missing-recipe


def test_a_typo_is_reported_at_the_setting_with_the_closest_recipe() -> None:
    (f,) = findings(RECIPES, "missing-recipe")
    assert (f.path, f.line, f.column) == ("configs/nvidia-master.yaml", 49, 13)
    assert f.entries == ("dsr1-fp4-gb200-dynamo-trt",)
    assert "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml to srtctl" in f.message
    assert "closest: recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep16.yaml" in f.message
    assert ("runners/launch_gb200-nv.sh", 39) in {(r.path, r.line) for r in f.related}
    assert f.key == f"dsr1-fp4-gb200-dynamo-trt|{ROOT}/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml"


def test_the_closest_recipes_are_for_the_entry_s_gpu_first(tmp_path: Path) -> None:
    """InferenceX 843c6254f: a gb300 entry was offered gb200 recipes first, the names being closer.
    The GPU is the entry's runner label's first word; a recipe's, its file name's or folder's."""
    repo = copy_repo(RECIPES, tmp_path / "repo")
    edit(repo / "configs/runners.yaml", "labels:\n", "labels:\n  gb300-multinode:\n    - gb300-nv_0\n")
    folder = repo / ROOT / "trtllm/gb200-fp4/8k1k"
    recipe = (folder / "ctx1_gen2_dep8.yaml").read_text()
    for name in ("disagg-gb300-1p6d-tp4.yaml", "disagg-gb300-1p6d-tp8.yaml", "disagg-gb200-2p1d-dep8-tp4.yaml"):
        (folder / name).write_text(recipe)
    edit(repo / "configs/nvidia-master.yaml", "8k1k/ctx2_gen1_dep61.yaml", "8k1k/disagg-gb200-1p6d-tp4.yaml")
    (f,) = findings(repo, "missing-recipe")
    near = f.message.split("; closest: ", 1)[1].split(", ")
    assert near[0] == "recipes/trtllm/gb200-fp4/8k1k/disagg-gb200-2p1d-dep8-tp4.yaml", near
    assert near[1:] == ["recipes/trtllm/gb200-fp4/8k1k/disagg-gb300-1p6d-tp4.yaml",
                        "recipes/trtllm/gb200-fp4/8k1k/disagg-gb300-1p6d-tp8.yaml"]


def test_one_finding_per_entry_and_recipe(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    edit(repo / "configs/nvidia-master.yaml", "8k1k/ctx2_gen1_dep16.yaml", "8k1k/ctx2_gen1_dep61.yaml")
    (f,) = findings(repo, "missing-recipe")
    assert f.line == 35 and [(r.line, r.note) for r in f.related][0] == (49, "names it again")


def test_the_fingerprint_does_not_follow_lines(tmp_path: Path) -> None:
    (before,) = findings(RECIPES, "missing-recipe")
    repo = copy_repo(RECIPES, tmp_path / "repo")
    config = repo / "configs/nvidia-master.yaml"
    config.write_text("# moved down\n\n" + config.read_text())
    (after,) = findings(repo, "missing-recipe")
    assert after.line == before.line + 2 and after.fingerprint == before.fingerprint


def test_a_recipe_of_a_folder_the_repo_does_not_copy_is_not_reported(tmp_path: Path) -> None:
    repo = copy_repo(CLEAN, tmp_path / "repo")
    # a folder the launcher does not copy for this entry: srt-slurm's own checkout has it
    edit(repo / "configs/nvidia-master.yaml", "recipes/trtllm/kimi-k25-nvfp4/gb200-fp4/1k1k/",
         "recipes/trtllm/gb200-fp4/1k1k/")
    # a folder the copy brings in, but not one the repo has
    edit(repo / "configs/nvidia-master.yaml", "recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep16.yaml",
         "recipes/trtllm/gb200-fp4/agentic/ctx2_gen1_dep16.yaml")
    assert findings(repo, "missing-recipe") == []


def test_a_recipe_in_a_copied_folder_the_launcher_renames(tmp_path: Path) -> None:
    """``cp -rT repo/x-b300 recipes/x``: the recipe is looked up in x-b300, not in x."""
    repo = copy_repo(CLEAN, tmp_path / "repo")
    launcher = repo / "runners/launch_gb200-nv.sh"
    edit(launcher, 'srt-slurm-recipes/trtllm/gb200-fp4" recipes/trtllm/gb200-fp4',
         'srt-slurm-recipes/trtllm/gb200-fp4" recipes/trtllm/dsr1-fp4')
    edit(repo / "configs/nvidia-master.yaml", "recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml",
         "recipes/trtllm/dsr1-fp4/8k1k/ctx1_gen2_dep8.yaml")
    assert findings(repo, "missing-recipe") == []  # the other two are now srt-slurm's own


# ------------------------------------------------------------------ recipe-image-mismatch


def test_a_stale_container_is_reported_at_the_recipe_line() -> None:
    (f,) = findings(RECIPES, "recipe-image-mismatch")
    assert (f.path, f.line) == (SGLANG_RECIPE, 5)
    assert "lmsysorg/sglang:v0.5.11-cu130" in f.message and "(lmsysorg/sglang:v0.5.12-cu130)" in f.message
    notes = {(r.path, r.line): r.note for r in f.related}
    assert notes[("configs/nvidia-master.yaml", 57)].endswith("image lmsysorg/sglang:v0.5.12-cu130")
    assert ("configs/nvidia-master.yaml", 78) in notes  # the additional-settings item
    assert f.key == f"dsr1-fp8-gb200-dynamo-sglang|{SGLANG_RECIPE}"


def test_entries_and_recipes_of_one_bump_are_one_finding(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    other = repo / ROOT / "sglang/dsr1/gb200-fp8/8k1k/disagg-2p1d.yaml"
    edit(other, "image: lmsysorg/sglang:v0.5.12-cu130", "image: lmsysorg/sglang:v0.5.11-cu130")
    config = repo / "configs/nvidia-master.yaml"
    text = config.read_text()
    start = text.index("dsr1-fp8-gb200-dynamo-sglang:")
    end = text.index("kimik2.5-fp4-gb200-dynamo-trt:")
    twin = text[start:end].replace("dsr1-fp8-gb200-dynamo-sglang:", "dsr1-fp8-gb200-sglang-b:")
    config.write_text(text + "\n" + twin)
    (f,) = findings(repo, "recipe-image-mismatch")
    assert f.entries == ("dsr1-fp8-gb200-dynamo-sglang", "dsr1-fp8-gb200-sglang-b")
    assert "(and 1 more recipes)" in f.message
    assert (str(other.relative_to(repo)), 5) in {(r.path, r.line) for r in f.related}


def test_an_alias_the_launcher_defines_is_the_entry_image(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    edit(repo / SGLANG_RECIPE, '"lmsysorg/sglang:v0.5.11-cu130"', '"lmsysorg/sglang:stable"')
    assert len(findings(repo, "recipe-image-mismatch")) == 1
    edit(repo / "runners/launch_gb200-nv.sh", '  dynamo-sglang: "${SQUASH_FILE}"\n',
         '  dynamo-sglang: "${SQUASH_FILE}"\n  "lmsysorg/sglang:stable": "${SQUASH_FILE}"\n')
    assert findings(repo, "recipe-image-mismatch") == []


def test_the_clean_twin_has_no_recipe_findings() -> None:
    assert findings(CLEAN, "recipe-image-mismatch") == findings(CLEAN, "missing-recipe") == []


@pytest.mark.parametrize(("container", "image", "same"), [
    ("lmsysorg/sglang:v0.5.12", "lmsysorg/sglang:v0.5.12", True),
    ("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24", "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24", True),
    ("docker://docker.io/library/nginx:1.27.4", "nginx:1.27.4", True),
    ("vllm/vllm-openai", "vllm/vllm-openai:latest", True),
    ("lmsysorg/sglang:v0.5.14-cu130@sha256:5027e9", "lmsysorg/sglang:v0.5.14-cu130", True),
    ("lmsysorg/sglang:v0.5.14@sha256:aaaa", "lmsysorg/sglang:v0.5.14@sha256:bbbb", False),
    ("vllm/vllm-openai:v0.21.0-ubuntu2404", "vllm/vllm-openai:v0.20.1-ubuntu2404", False),
    ("localhost:5000/sglang:v1", "localhost:5000/sglang:v2", False),
    ("dynamo-sglang", "lmsysorg/sglang:v0.5.12", True),  # a bare name is an alias
    ("${IMAGE}", "lmsysorg/sglang:v0.5.12", True),
])
def test_same_image(container: str, image: str, same: bool) -> None:
    assert same_image(container, image) is same
