"""Entries handed to an external job tool: hand-offs, recipe references, where recipes
resolve, their containers, and the coverage counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config import Config, load_config
from bot.lint import lint
from bot.repo.env.profile import Profile
from bot.repo.facts import Facts, gather
from bot.repo.files.tree import WorkTree
from bot.repo.jobs import Copy, Coverage, Job, coverage
from bot.report import json as json_report
from bot.report import text
from bot.report.dispatch import rows, text_line
from bot.shell import default_parser
from bot.shell.evaluator.evaluate import Evaluator, FileSystem, Options, Ran
from bot.shell.ir.values import lit
from tests.conftest import FIXTURES, copy_repo

RECIPES = FIXTURES / "multinode-recipes"
ROOT = "benchmarks/multi_node/srt-slurm-recipes"


def facts_of(repo: Path, profile: Profile | None = None) -> Facts:
    return gather(WorkTree(str(repo)), profile or Profile())


def job(facts: Facts, name: str) -> Job:
    found = next((j for j in facts.jobs.jobs if j.entry.name == name), None)
    assert found is not None, name
    return found


# ------------------------------------------------------------------ the evaluator hook


class _NoFiles(FileSystem):
    def is_file(self, path: str) -> bool:
        return False

    def is_dir(self, path: str) -> bool:
        return False

    def script(self, path: str) -> None:
        return None


def ran(source: str, **env: str) -> list[Ran]:
    parse, _ = default_parser()
    script = parse("launch.sh", source.encode())
    ev = Evaluator(_NoFiles(), Options(parse=parse, observe=frozenset({"srtctl", "cp"})))
    return ev.run(script, {k: lit(v) for k, v in env.items()}).ran()


def test_a_tool_run_is_recorded_with_its_words_and_deps() -> None:
    found = ran('OUT=$(timeout 600 srtctl apply -f "$CONFIG_FILE" --tags "$MODEL_PREFIX")\n',
                CONFIG_FILE="recipes/a.yaml", MODEL_PREFIX="dsr1")
    assert [r.name for r in found] == ["srtctl"]
    assert found[0].argv[4:6] == (lit("-f"), lit("recipes/a.yaml"))
    assert {"CONFIG_FILE", "MODEL_PREFIX"} <= found[0].deps
    assert found[0].loc.line == 1


def test_asking_whether_a_tool_is_installed_is_no_hand_off() -> None:
    assert ran("if ! command -v srtctl &> /dev/null; then exit 1; fi\nwhich srtctl\n") == []


def test_an_inert_cp_is_observed_when_asked() -> None:
    found = ran('cp -rT "$GITHUB_WORKSPACE/recipes" recipes/x\n', GITHUB_WORKSPACE="/github/workspace")
    assert [(r.name, r.argv[-1]) for r in found] == [("cp", lit("recipes/x"))]


# ------------------------------------------------------------------ the fixture


def test_every_multinode_entry_of_the_fixture_is_handed_to_srtctl() -> None:
    facts = facts_of(RECIPES)
    assert sorted(j.entry.name for j in facts.jobs.jobs) == [
        "dsr1-fp4-gb200-dynamo-trt", "dsr1-fp8-gb200-dynamo-sglang", "kimik2.5-fp4-gb200-dynamo-trt"]
    trt = job(facts, "dsr1-fp4-gb200-dynamo-trt")
    assert trt.tool == "srtctl" and trt.launchers == ("runners/launch_gb200-nv.sh",)
    assert [(h.loc.path, h.loc.line) for h in trt.handoffs] == [("runners/launch_gb200-nv.sh", 39)]
    assert trt.aliases == frozenset({"dynamo-trtllm", "dynamo-sglang"})
    # no run counts as rejected: the launcher hands the job off
    assert all(r.handoffs and not r.exits_early for r in facts.runs)


def test_recipe_references_cover_every_point_with_positions() -> None:
    trt = job(facts_of(RECIPES), "dsr1-fp4-gb200-dynamo-trt")
    assert [(r.setting, r.path, r.block, r.pos.line) for r in trt.refs] == [
        ("CONFIG_FILE", "recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml", "prefill", 22),
        ("CONFIG_FILE", "recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep16.yaml", "prefill", 35),
        ("CONFIG_FILE", "recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml", "prefill", 49),
    ]
    sglang = job(facts_of(RECIPES), "dsr1-fp8-gb200-dynamo-sglang")
    assert sglang.refs[0].selector == "zip_override_lowlat[0]"
    assert sglang.refs[0].value.endswith("disagg-1p1d.yaml:zip_override_lowlat[0]")


def test_recipes_resolve_through_the_copies_on_the_entry_paths() -> None:
    facts = facts_of(RECIPES)
    trt = job(facts, "dsr1-fp4-gb200-dynamo-trt")
    assert trt.copies == (Copy("recipes/trtllm/gb200-fp4", f"{ROOT}/trtllm/gb200-fp4", True, trt.copies[0].loc),)
    assert trt.copies[0].loc.line == 18
    ok = trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"]
    assert ok.found == f"{ROOT}/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml" and ok.via is not None
    typo = trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml"]
    assert typo.found is None and typo.expected == f"{ROOT}/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml"
    kimi = job(facts, "kimik2.5-fp4-gb200-dynamo-trt")
    assert kimi.copies == () and all(r.external for r in kimi.recipes.values())


def test_containers_are_read_from_the_model_block_base_and_image_forms() -> None:
    facts = facts_of(RECIPES)
    trt = job(facts, "dsr1-fp4-gb200-dynamo-trt")
    alias = trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"].container()
    assert alias is not None and (alias.value, alias.pos.line) == ("dynamo-trtllm", 4)
    sglang = job(facts, "dsr1-fp8-gb200-dynamo-sglang")
    base = sglang.recipes["recipes/sglang/dsr1/gb200-fp8/8k1k/disagg-1p1d.yaml"].container("zip_override_lowlat[0]")
    assert base is not None and (base.value, base.pos.line) == ("lmsysorg/sglang:v0.5.11-cu130", 5)
    image = sglang.recipes["recipes/sglang/dsr1/gb200-fp8/8k1k/disagg-2p1d.yaml"].container()
    assert image is not None and (image.value, image.pos.line) == ("lmsysorg/sglang:v0.5.12-cu130", 5)


def test_an_override_block_may_set_the_container(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    recipe = repo / ROOT / "sglang/dsr1/gb200-fp8/8k1k/disagg-1p1d.yaml"
    recipe.write_text(recipe.read_text() + "  model:\n    container: [lmsysorg/sglang:v0.5.12-cu130, x/y:z]\n")
    sglang = job(facts_of(repo), "dsr1-fp8-gb200-dynamo-sglang")
    chosen = sglang.recipes["recipes/sglang/dsr1/gb200-fp8/8k1k/disagg-1p1d.yaml"].container("zip_override_lowlat[0]")
    assert chosen is not None and chosen.value == "lmsysorg/sglang:v0.5.12-cu130" and chosen.pos.line == 16


def test_only_settings_the_tool_command_reads_are_recipe_references(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    config = repo / "configs" / "nvidia-master.yaml"
    config.write_text(config.read_text().replace(
        '          - "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"\n',
        '          - "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"\n'
        '          - "PREFILL_RECIPE=recipes/trtllm/nowhere/x.yaml"\n'
        '          - "EVAL_CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/eval.yaml"\n', 1))
    launcher = repo / "runners" / "launch_gb200-nv.sh"
    launcher.write_text(launcher.read_text().replace(
        'SRTCTL_OUTPUT=', 'if [[ "$EVAL_ONLY" == "true" && -n "$EVAL_CONFIG_FILE" ]]; then\n'
        '    CONFIG_FILE="$EVAL_CONFIG_FILE"\nfi\nSRTCTL_OUTPUT=', 1))
    trt = job(facts_of(repo), "dsr1-fp4-gb200-dynamo-trt")
    assert [r.setting for r in trt.refs] == ["CONFIG_FILE", "EVAL_CONFIG_FILE", "CONFIG_FILE", "CONFIG_FILE"]


def test_recipe_roots_apply_when_no_copy_is_seen(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    launcher = repo / "runners" / "launch_gb200-nv.sh"
    text_ = launcher.read_text()
    start, end = text_.index("if [[ $FRAMEWORK =="), text_.index("# other models")
    launcher.write_text(text_[:start] + text_[end:])
    trt = job(facts_of(repo), "dsr1-fp4-gb200-dynamo-trt")
    assert trt.copies == ()
    assert trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"].found == \
        f"{ROOT}/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"
    assert trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml"].expected is not None
    # a profile that keeps recipes elsewhere: nothing of them is in the repo
    other = facts_of(repo, Profile(recipe_roots={"recipes/": "elsewhere/"}))
    assert all(r.external for r in job(other, "dsr1-fp4-gb200-dynamo-trt").recipes.values())


def test_a_tool_run_inside_the_checkout_reads_the_path_as_written(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    launcher = repo / "runners" / "launch_gb200-nv.sh"
    launcher.write_text(launcher.read_text().replace('cd "$SRT_REPO_DIR" || exit 1\n', "", 1)
                        .replace("recipes/trtllm/gb200-fp4\n", "elsewhere/gb200-fp4\n"))
    config = repo / "configs" / "nvidia-master.yaml"
    config.write_text(config.read_text().replace("CONFIG_FILE=recipes/trtllm/", f"CONFIG_FILE={ROOT}/trtllm/"))
    trt = job(facts_of(repo), "dsr1-fp4-gb200-dynamo-trt")
    assert known_cwd(trt) == ""
    assert trt.recipes[f"{ROOT}/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"].found is not None
    assert trt.recipes[f"{ROOT}/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep61.yaml"].expected is not None


def known_cwd(j: Job) -> str | None:
    from bot.shell.ir.values import known

    return known(j.handoffs[0].cwd)


def test_a_copy_without_t_lands_below_the_destination(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    launcher = repo / "runners" / "launch_gb200-nv.sh"
    launcher.write_text(launcher.read_text().replace(
        'cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4" recipes/trtllm/gb200-fp4',
        'cp -r "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4" recipes/trtllm'))
    trt = job(facts_of(repo), "dsr1-fp4-gb200-dynamo-trt")
    assert {c.dest for c in trt.copies} == {"recipes/trtllm", "recipes/trtllm/gb200-fp4"}
    assert trt.recipes["recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"].found is not None


# ------------------------------------------------------------------ coverage


def test_coverage_of_the_recipes_fixture() -> None:
    facts = facts_of(RECIPES)
    assert coverage(facts, facts.jobs) == Coverage(analysed=0, handed=(("srtctl", 3),), rejected=0, unknown=0,
                                                   recipes_checked=4, recipes_missing=1,
                                                   recipes_external=(("srtctl", 1),))


def test_coverage_of_the_multinode_fixture_counts_script_entries_as_analysed() -> None:
    facts = facts_of(FIXTURES / "multinode")
    assert coverage(facts, facts.jobs) == Coverage(3, (), 0, 0, 0, 0, ())


def test_coverage_counts_rejected_and_unknown_entries(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    config = repo / "configs" / "nvidia-master.yaml"
    config.write_text(config.read_text().replace("  runner: gb200-multinode\n  precision: fp8",
                                                 "  runner: gb200-nowhere\n  precision: fp8", 1))
    launcher = repo / "runners" / "launch_gb200-nv.sh"
    launcher.write_text(launcher.read_text().replace(
        'SRT_REPO_DIR="srt-slurm"\n', 'SRT_REPO_DIR="srt-slurm"\n[[ $MODEL_PREFIX == "kimik2.5" ]] && exit 1\n', 1))
    facts = facts_of(repo)
    cov = coverage(facts, facts.jobs)
    assert (cov.analysed, cov.handed, cov.rejected, cov.unknown) == (0, (("srtctl", 1),), 1, 1)


def test_the_summary_says_what_was_handed_off_and_not_checked() -> None:
    tree = WorkTree(str(RECIPES))
    result = lint(tree, load_config(tree))
    line = text.summary(result.findings, result.stats)
    assert "; 3 entries (0 analysed, 3 handed to srtctl), 1 launcher, 0 scripts, 4 recipes checked in " in line
    assert line.endswith("; 1 recipe from srtctl's repo, not checked")
    stats = json.loads(json_report.render(result.findings, result.stats, "r"))["stats"]
    assert stats["coverage"] == {"analysed": 0, "handed": {"srtctl": 3}, "rejected": 0, "unknown": 0,
                                 "recipes": {"checked": 4, "missing": 1, "external": {"srtctl": 1}}}


def test_the_summary_is_unchanged_when_every_entry_is_analysed() -> None:
    tree = WorkTree(str(FIXTURES / "multinode"))
    result = lint(tree, Config())
    assert "; 3 entries, 1 launcher, 4 scripts checked in " in text.summary(result.findings, result.stats)


# ------------------------------------------------------------------ dispatch table


@pytest.mark.parametrize(("entry", "shown"), [
    pytest.param("dsr1-fp8-gb200-dynamo-sglang",
                 "(handed to srtctl: recipes/sglang/dsr1/gb200-fp8/8k1k/disagg-1p1d.yaml:zip_override_lowlat[0])",
                 id="dsr1-fp8-gb200-dynamo-sglang"),
    pytest.param("kimik2.5-fp4-gb200-dynamo-trt",
                 "(handed to srtctl: recipes/trtllm/kimi-k25-nvfp4/gb200-fp4/1k1k/ctx1_gen4_tep8.yaml)",
                 id="kimik2.5-fp4-gb200-dynamo-trt"),
])
def test_the_dispatch_table_shows_the_hand_off(entry: str, shown: str) -> None:
    table = [r for r in rows(facts_of(RECIPES)) if r["entry"] == entry]
    assert len(table) == 1 and table[0]["script"] is None
    assert table[0]["built_at"] == "runners/launch_gb200-nv.sh:39"
    assert f"->  {shown}  @runners/launch_gb200-nv.sh:39" in text_line(table[0])


def test_the_dispatch_table_marks_a_missing_recipe(tmp_path: Path) -> None:
    repo = copy_repo(RECIPES, tmp_path / "repo")
    config = repo / "configs" / "nvidia-master.yaml"
    config.write_text(config.read_text().replace("ctx1_gen2_dep8.yaml", "ctx1_gen2_dep9.yaml", 1))
    table = [r for r in rows(facts_of(repo)) if r["entry"] == "dsr1-fp4-gb200-dynamo-trt"]
    handed = table[0]["handed_to"]
    assert isinstance(handed, dict) and handed["recipes"][0]["exists"] is False
    assert text_line(table[0]).endswith("ctx1_gen2_dep9.yaml)  (missing)  @runners/launch_gb200-nv.sh:39")


def test_a_git_revision_gives_the_same_recipes(tmp_path: Path) -> None:
    from bot.repo.files.git import GitTree
    from tests.conftest import git

    repo = copy_repo(RECIPES, tmp_path / "repo")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    at_rev = gather(GitTree(str(repo), "HEAD"), Profile())
    on_disk = facts_of(repo)
    assert [sorted(j.recipes.items()) for j in at_rev.jobs.jobs] == [sorted(j.recipes.items())
                                                                    for j in on_disk.jobs.jobs]


# ------------------------------------------------------------------ the recipe cache

def _containers_of(facts: Facts) -> dict[str, dict[str, tuple[str, int, int]]]:
    return {r.found: {s: (c.value, c.pos.line, c.pos.col) for s, c in r.containers.items()}
            for j in facts.jobs.jobs for r in j.recipes.values() if r.found}


def test_recipe_containers_come_from_the_cache_when_the_file_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.repo.files import parsed
    from bot.repo.load import recipefile

    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    repo = copy_repo(RECIPES, tmp_path / "repo")
    loads: list[int] = []
    real = recipefile.load

    def counting(text: str, *a: object, **k: object) -> object:
        loads.append(len(text))
        return real(text)

    monkeypatch.setattr(recipefile, "load", counting)
    parsed.reset()
    first = _containers_of(facts_of(repo))
    assert first and loads  # read once, from the files
    loads.clear()
    parsed.reset()
    assert _containers_of(facts_of(repo)) == first and loads == []  # a new lint: none is read
    # an edited recipe is read again; a damaged cache entry is a miss, never an error
    recipe = repo / ROOT / "sglang/dsr1/gb200-fp8/8k1k/disagg-2p1d.yaml"
    recipe.write_text(recipe.read_text().replace("v0.5.12-cu130", "v0.5.13-cu130"))
    for f in (tmp_path / "cache" / "recipe").rglob("*"):
        if f.is_file():
            f.write_bytes(f.read_bytes()[:-3])
    parsed.reset()
    again = _containers_of(facts_of(repo))
    edited = again[f"{ROOT}/sglang/dsr1/gb200-fp8/8k1k/disagg-2p1d.yaml"]
    assert loads and edited[""][0] == "lmsysorg/sglang:v0.5.13-cu130"
    assert {k: v for k, v in again.items() if "2p1d" not in k} == {k: v for k, v in first.items() if "2p1d" not in k}
