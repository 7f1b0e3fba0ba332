"""Master configs (both formats), runners.yaml (both formats), positions, and the env profile."""

from __future__ import annotations

from pathlib import Path

from bot.repo.env.profile import Profile, build_env, profile_from_config
from bot.repo.files.tree import WorkTree
from bot.repo.load.configs import AGENTIC, FIXED, load_config, load_runners
from bot.repo.load.yamlfile import load
from bot.shell.ir.values import Unk, known
from tests.conftest import EXAMPLE, FIXTURES


def test_scenarios_format_with_positions() -> None:
    tree = WorkTree(str(EXAMPLE))
    cfg = load_config(tree, "configs/amd-master.yaml")
    assert cfg.error is None
    names = [e.name for e in cfg.entries]
    assert "kimik2.5-int4-mi300x-vllm-mtp" in names and len(names) == 6
    e = next(e for e in cfg.entries if e.name == "kimik2.5-int4-mi300x-vllm-mtp")
    text = tree.text("configs/amd-master.yaml") or ""
    lines = text.splitlines()
    assert lines[e.pos.line - 1].startswith("kimik2.5-int4-mi300x-vllm-mtp:")
    assert "runner:" in lines[e.field_pos("runner").line - 1]
    assert all(p.spec_decoding == "mtp" and p.scenario == FIXED for p in e.points)
    assert "spec-decoding" in lines[e.points[0].pos.line - 1]


def test_seq_len_configs_format_and_flat_runners() -> None:
    tree = WorkTree(str(FIXTURES / "flat-runners"))
    paths = tree.glob(Profile().configs)
    assert paths == [".github/configs/nvidia-master.yaml"]
    cfg = load_config(tree, paths[0])
    assert cfg.entries and all(e.points for e in cfg.entries)
    runners = load_runners(tree, list(Profile().runners))
    assert runners.path == ".github/configs/runners.yaml"
    assert "h100" in runners.labels and runners.labels["h100"][0].startswith("h100-cr_")


def test_agentic_points() -> None:
    tree = WorkTree(str(FIXTURES / "agentic"))
    entries = [e for p in tree.glob(Profile().configs) for e in load_config(tree, p).entries]
    assert any(p.scenario == AGENTIC for e in entries for p in e.points)


def test_full_width_comma_is_reported_at_its_position() -> None:
    data, err = load("a:\n  - { tp: 8， conc-start: 4 }\n")
    assert data is None and err is not None
    assert err.line == 2
    assert "full-width '，' U+FF0C" in err.message


def test_duplicate_keys_are_recorded() -> None:
    data, err = load("a: 1\nb: 2\na: 3\n")
    assert err is None and data["a"] == 3
    # the dropped occurrence (line 1) is recorded; key_pos has the one that wins
    assert data.duplicates and data.duplicates[0][0] == "a" and data.duplicates[0][1].line == 1
    assert data.key_pos["a"].line == 3


def test_env_for_single_and_multinode() -> None:
    tree = WorkTree(str(FIXTURES / "multinode-clean"))
    entries = [e for p in tree.glob(Profile().configs) for e in load_config(tree, p).entries]
    single = next(e for e in entries if not e.multinode)
    multi = next(e for e in entries if e.multinode)
    env = build_env(Profile(), single, single.points[0], "gb200-nv_0", "gb200")
    assert known(env["RUNNER_NAME"]) == "gb200-nv_0"
    assert known(env["SPEC_DECODING"]) in ("none", "mtp")
    assert known(env["SCENARIO_SUBDIR"]) == "fixed_seq_len/"
    assert known(env["EXP_NAME"]).startswith(str(single.fields["model-prefix"]) + "_")  # type: ignore[union-attr]
    assert "IS_MULTINODE" not in env and "TP" in env
    seq = single.points[0].seq
    assert known(env["MAX_MODEL_LEN"]) == str(seq["isl"] + seq["osl"] + 256)  # InferenceX's sweep generator rule
    assert isinstance(env["HF_TOKEN"][0], Unk)
    menv = build_env(Profile(), multi, multi.points[0], "gb200-nv_0", "gb200")
    assert known(menv["IS_MULTINODE"]) == "true" and "PREFILL_TP" in menv and "TP" not in menv
    assert known(menv["CONFIG_FILE"]) == "recipes/trtllm/gb200-fp4/8k1k/ctx1_gen2_dep8.yaml"
    # a workflow that does not pass a variable leaves it unset
    env2 = build_env(Profile(), single, single.points[0], "gb200-nv_0", "gb200", frozenset({"TP"}))
    assert "SCENARIO_SUBDIR" not in env2 and "TP" in env2


def test_profile_overrides(tmp_path: Path) -> None:
    p = profile_from_config({"launcher": "ci/run_{node_prefix}.sh", "max-paths": 8, "all-points": True,
                             "env-common": {"EXTRA": "{model}"}})
    assert p.launcher_for("h100-cw_3") == "ci/run_h100-cw.sh"
    assert p.max_paths == 8 and p.all_points and p.env_common["EXTRA"] == "{model}"
    assert p.prefix_of_launcher("ci/run_h100-cw.sh") == "h100-cw"


def test_env_values_computed_by_the_workflow_template(tmp_path: Path) -> None:
    """An older layout: SCENARIO_SUBDIR is '' for fixed-seq-len, computed in the workflow."""
    import shutil

    from bot.config import load_config as load_bot_config
    from bot.lint import lint
    from tests.conftest import copy_repo

    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    wf = repo / ".github" / "workflows" / "benchmark-tmpl.yml"
    lines = [ln for ln in wf.read_text().splitlines() if "SCENARIO_SUBDIR" not in ln]
    env_at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("SPEC_DECODING:"))
    indent = lines[env_at][: len(lines[env_at]) - len(lines[env_at].lstrip())]
    ternary = "${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || '' }}"
    lines.insert(env_at, indent + "SCENARIO_SUBDIR: " + ternary)
    wf.write_text("\n".join(lines) + "\n")
    src = repo / "benchmarks" / "single_node" / "fixed_seq_len"
    for f in src.iterdir():
        shutil.move(str(f), str(repo / "benchmarks" / "single_node" / f.name))
    src.rmdir()
    tree = WorkTree(str(repo))
    found = lint(tree, load_bot_config(tree)).findings
    assert sorted((f.rule, f.path) for f in found) == [
        ("ignored-variant", "runners/launch_mi300x-amds.sh"),
        ("ignored-variant", "runners/launch_mi325x-amds.sh"),
    ]
    assert sorted(r.path for f in found for r in f.consequences) == [
        "benchmarks/single_node/kimik2.5_int4_mi300x_mtp.sh", "benchmarks/single_node/kimik2.5_int4_mi325x_mtp.sh"]
