"""Workflow facts: launcher calls (bot.repo.workflows.workflows), their env per path (bot.repo.env.wfenv)
and where the launcher env comes from (bot.repo.env.launchenv)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.repo import facts as repo_facts
from bot.repo.env import wfenv
from bot.repo.env.launchenv import EnvSource
from bot.repo.env.profile import Profile
from bot.repo.files.tree import WorkTree
from bot.repo.load.configs import load_config
from bot.repo.workflows import ghexpr as gx
from bot.repo.workflows import wfcalls as WC
from bot.repo.workflows import workflows as W
from tests.conftest import FIXTURES, copy_repo

LAUNCHER = Profile().launcher
TMPL = ".github/workflows/benchmark-tmpl.yml"
RUN_SWEEP = ".github/workflows/run-sweep.yml"
E2E = ".github/workflows/e2e-tests.yml"
PROFILE_WF = ".github/workflows/profile.yml"
LAUNCH = "bash ./runners/launch_${RUNNER_NAME%%_*}.sh"


def _fixture_wf(name: str = "workflow-env") -> tuple[WorkTree, WC.Workflows]:
    tree = WorkTree(str(FIXTURES / name))
    texts = {p: tree.text(p) or "" for p in tree.glob(Profile().workflows)}
    return tree, W.gather(texts, LAUNCHER)


def _by_root(wf: WC.Workflows) -> dict[str, WC.LauncherCall]:
    return {c.chain[0].path: c for c in wf.calls}


def _text(var: WC.EnvVar) -> object:
    """The value when it needs no context (literals, defaults, folded ternaries)."""
    return gx.evaluate_template(var.value, lambda ref: gx.UNKNOWN)


def _write(root: Path, files: dict[str, str]) -> WorkTree:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return WorkTree(str(root))


def _gather_tree(tree: WorkTree) -> WC.Workflows:
    return W.gather({p: tree.text(p) or "" for p in tree.glob(Profile().workflows)}, LAUNCHER)


# ------------------------------------------------------------------ reusable workflows


def test_callee_inputs_take_each_callers_with_value_or_the_default() -> None:
    _, wf = _fixture_wf()
    assert wf.errors == [] and not wf.truncated
    calls = _by_root(wf)
    assert set(calls) == {RUN_SWEEP, E2E, PROFILE_WF}
    sweep, e2e = calls[RUN_SWEEP], calls[E2E]
    # run-sweep forwards the entry's field, e2e passes a literal
    assert gx.refs(sweep.env["SPEC_DECODING"].value) == {("matrix", "config", "spec-decoding")}
    assert _text(e2e.env["SPEC_DECODING"]) == "none"
    assert e2e.passed["spec-decoding"] == (E2E, 39)
    # neither caller passes scenario-subdir: the input's default
    for call in (sweep, e2e):
        var = call.env["SCENARIO_SUBDIR"]
        assert _text(var) == "fixed_seq_len/"
        assert (var.path, var.line, var.origin, var.inputs) == (TMPL, 41, "job", ("scenario-subdir",))
        assert "scenario-subdir" not in call.passed
        assert gx.refs(call.runner) == {("matrix", "config", "runner")}
        assert call.templates == (call.chain[0].path, TMPL) and call.path == TMPL and call.line == 49
        assert call.launcher is None
    assert e2e.chain == (WC.Hop(E2E, "sweep", 15), WC.Hop(TMPL, "benchmark", 23))
    assert e2e.name == "e2e-tests.yml › sweep → benchmark-tmpl.yml › benchmark › Launch job script"
    assert sweep.triggers == ("workflow_dispatch", "push") and e2e.triggers == ("pull_request",)
    assert "SCENARIO_SUBDIR" not in calls[PROFILE_WF].env and calls[PROFILE_WF].chain == (
        WC.Hop(PROFILE_WF, "profile", 15),)


def test_generated_matrix_and_orphan_template() -> None:
    _, wf = _fixture_wf()
    for call in wf.calls:
        assert (call.entries, call.matrix) == ("generated", ("matrix", "config"))
    orphan = """on:
  workflow_call:
    inputs:
      model: { type: string }
jobs:
  bench:
    runs-on: gpu
    env:
      MODEL: ${{ inputs.model }}
    steps:
      - run: bash runners/launch_h200.sh
"""
    got = W.gather({".github/workflows/tmpl.yml": orphan}, LAUNCHER)
    (call,) = got.calls
    assert (call.entries, call.matrix, call.launcher) == ("external", (), "runners/launch_h200.sh")
    assert gx.refs(call.env["MODEL"].value) == {("external-inputs", "model")}
    assert call.env["MODEL"].inputs == ("model",)


# ------------------------------------------------------------------ env layers


def test_workflow_job_step_env_layering_with_lines() -> None:
    text = """on: push
env:
  A: wf-a
  B: wf-b
  C: wf-c
jobs:
  j:
    runs-on: box
    env:
      B: job-b
      C: job-c
      D: ${{ env.A }}-d
    steps:
      - name: go
        env:
          C: step-c
        run: bash ./runners/launch_h200.sh
"""
    (call,) = W.gather({".github/workflows/w.yml": text}, LAUNCHER).calls
    got = {n: (_text(v), v.origin, v.line) for n, v in call.env.items()}
    assert got == {"A": ("wf-a", "workflow", 3), "B": ("job-b", "job", 10), "C": ("step-c", "step", 16),
                   "D": ("wf-a-d", "job", 12)}
    assert (call.entries, call.step, call.line, call.triggers) == ("literal", "go", 17, ("push",))
    assert call.sets("D") and not call.sets("E")


def test_export_before_launcher_and_github_env_of_earlier_step() -> None:
    text = """on: push
jobs:
  j:
    runs-on: box
    steps:
      - run: echo "EARLY=1" >> "$GITHUB_ENV"
      - run: |
          export FIRST=1
          bash ./runners/launch_h200.sh
          export AFTER=2
          echo "LATE=1" >> $GITHUB_ENV
          bash ./runners/launch_mi300x.sh
"""
    first, second = W.gather({".github/workflows/w.yml": text}, LAUNCHER).calls
    assert (first.line, second.line) == (9, 12)
    assert first.env["FIRST"].value == ("1",)  # a plain export at the launcher's indentation
    assert (first.env["FIRST"].origin, first.env["FIRST"].line) == ("run", 8)
    assert "AFTER" not in first.env and second.env["AFTER"].origin == "run"
    assert second.env["AFTER"].line == 10
    for call in (first, second):
        var = call.env["EARLY"]
        assert (var.origin, var.line, var.value) == ("github-env", 6, (W.UNKNOWN_NODE,))
        assert "LATE" not in call.env  # $GITHUB_ENV applies to later steps only
        assert _text(var) is gx.UNKNOWN


def test_github_env_line_in_block_script() -> None:
    text = """on: push
jobs:
  j:
    runs-on: box
    steps:
      - run: |
          echo "FOO=1" >> "$GITHUB_ENV"
      - run: bash ./runners/launch_h200.sh
"""
    (call,) = W.gather({".github/workflows/w.yml": text}, LAUNCHER).calls
    assert call.env["FOO"].line == 7


def test_launcher_line_in_stripped_block() -> None:
    text = "on: push\njobs:\n  j:\n    runs-on: box\n    steps:\n      - run: |-\n          " + LAUNCH + "\n"
    (call,) = W.gather({".github/workflows/w.yml": text}, LAUNCHER).calls
    assert call.line == 7


def test_generated_include_matrix_path() -> None:
    text = """on: push
jobs:
  j:
    runs-on: box
    strategy:
      matrix:
        include: ${{ fromJson(needs.setup.outputs.configs) }}
    env:
      TP: ${{ matrix.tp }}
    steps:
      - run: bash ./runners/launch_h200.sh
"""
    (call,) = W.gather({".github/workflows/w.yml": text}, LAUNCHER).calls
    assert call.entries == "generated"
    assert call.matrix == ("matrix",)


# ------------------------------------------------------------------ triggers, errors, budgets


@pytest.mark.parametrize(("on", "expected"), [
    ("on: push", ("push",)),
    ("on: [push, pull_request]", ("push", "pull_request")),
    ("on:\n  workflow_dispatch:\n  schedule:\n    - cron: '0 0 * * *'", ("workflow_dispatch", "schedule")),
])
def test_on_key_read_as_true_still_gives_triggers(on: str, expected: tuple[str, ...]) -> None:
    text = on + "\njobs:\n  j:\n    runs-on: box\n    steps:\n      - run: " + LAUNCH + "\n"
    wf = W.gather({".github/workflows/w.yml": text}, LAUNCHER)
    (call,) = wf.calls
    assert call.triggers == expected
    assert W.triggers(wf.files[".github/workflows/w.yml"]) == expected


def test_inputs_of_and_input_default_read_on_key() -> None:
    wf = W.gather({"w.yml": "on:\n  workflow_dispatch:\n    inputs:\n      node: { default: h200 }\njobs: {}\n"},
                  LAUNCHER)
    doc = wf.files["w.yml"]
    assert list(W.inputs_of(doc, "workflow_dispatch")) == ["node"]
    assert W.input_default(doc, "node", "workflow_dispatch") == "h200"
    assert W.input_default(doc, "node", "workflow_call") is None


def test_broken_yaml_is_an_error_and_the_rest_is_read(tmp_path: Path) -> None:
    tree = _write(tmp_path, {
        ".github/workflows/bad.yml": "on: push\njobs:\n  j:\n    steps: [\n      - run: x\n",
        ".github/workflows/good.yml": "on: push\njobs:\n  j:\n    runs-on: box\n    steps:\n      - run: "
                                      + LAUNCH + "\n",
    })
    wf = _gather_tree(tree)
    assert len(wf.errors) == 1
    path, line, message = wf.errors[0]
    assert path == ".github/workflows/bad.yml" and line in (4, 5, 6) and message
    assert [c.path for c in wf.calls] == [".github/workflows/good.yml"]
    assert ".github/workflows/bad.yml" not in wf.files


def test_bad_expression_is_an_error_with_its_line() -> None:
    text = "on: push\njobs:\n  j:\n    runs-on: box\n    env:\n      X: ${{ inputs.a == }}\n" \
           "    steps:\n      - run: " + LAUNCH + "\n"
    wf = W.gather({"w.yml": text}, LAUNCHER)
    assert wf.errors and all(e[:2] == ("w.yml", 6) for e in wf.errors)
    assert len(wf.calls) == 1 and "X" in wf.calls[0].env


def test_oversized_workflow_is_skipped_quickly() -> None:
    big = "on: push\njobs:\n  j:\n    runs-on: box\n    steps:\n      - run: " + LAUNCH + "\n" \
          + "# pad\n" * (W.MAX_WORKFLOW_BYTES // 6 + 1)
    small = "on: push\njobs:\n  j:\n    runs-on: box\n    steps:\n      - run: " + LAUNCH + "\n"
    start = time.perf_counter()
    wf = W.gather({"big.yml": big, "small.yml": small}, LAUNCHER)
    assert time.perf_counter() - start < 2
    assert wf.errors == [("big.yml", 1, f"larger than {W.MAX_WORKFLOW_BYTES} bytes: not read")]
    assert [c.path for c in wf.calls] == ["small.yml"]


def test_caller_fan_out_is_bounded_and_reported() -> None:
    fan = 40  # 40 ** 3 chains through three levels of callers: more than MAX_WORK
    texts = {".github/workflows/t0.yml": "on: workflow_call\njobs:\n  b:\n    runs-on: box\n    env:\n"
                                         "      X: ${{ inputs.x }}\n    steps:\n      - run: " + LAUNCH + "\n"}
    for level in (1, 2, 3):
        event = "push" if level == 3 else "workflow_call"
        jobs = "".join(f"  c{i}:\n    uses: ./.github/workflows/t{level - 1}.yml\n    with:\n      x: v{i}\n"
                       for i in range(fan))
        texts[f".github/workflows/t{level}.yml"] = f"on: {event}\njobs:\n{jobs}"
    start = time.perf_counter()
    wf = W.gather(texts, LAUNCHER)
    assert time.perf_counter() - start < 2
    assert wf.truncated
    assert wf.work <= W.MAX_WORK + 1 and 0 < len(wf.calls) <= W.MAX_CALLS
    assert all(len(c.chain) == 4 and c.chain[0].path.endswith("t3.yml") for c in wf.calls)


def test_launcher_calls_are_capped() -> None:
    steps = "".join(f"      - run: {LAUNCH}\n" for _ in range(W.MAX_CALLS + 50))
    start = time.perf_counter()
    wf = W.gather({"w.yml": "on: push\njobs:\n  j:\n    runs-on: box\n    steps:\n" + steps}, LAUNCHER)
    assert time.perf_counter() - start < 2
    assert wf.truncated and len(wf.calls) == W.MAX_CALLS


# ------------------------------------------------------------------ wfenv


def _tmpl_with_callers(withs: list[str]) -> dict[str, str]:
    texts = {TMPL: """on:
  workflow_call:
    inputs:
      kind: { type: string, default: 'a' }
      tp: { type: string }
jobs:
  benchmark:
    runs-on: ${{ inputs.tp }}
    env:
      MODE: ${{ inputs.kind == 'a' && 'y' || 'z' }}
      TP: ${{ inputs.tp }}
    steps:
      - run: bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""}
    for i, with_ in enumerate(withs):
        texts[f".github/workflows/c{i}.yml"] = f"""on: push
jobs:
  sweep:
    strategy:
      matrix:
        config: ${{{{ fromJson(needs.setup.outputs.configs) }}}}
    uses: ./{TMPL}
    with:
      tp: ${{{{ matrix.config.tp }}}}
{with_}"""
    return texts


def test_ternary_on_inputs_evaluates_per_caller() -> None:
    wf = W.gather(_tmpl_with_callers(["      kind: a\n", "      kind: b\n", ""]), LAUNCHER)
    modes = {c.chain[0].path: _text(c.env["MODE"]) for c in wf.calls}
    assert modes == {".github/workflows/c0.yml": "y", ".github/workflows/c1.yml": "z",
                     ".github/workflows/c2.yml": "y"}  # c2 omits kind: its default 'a'


def test_sweep_main_path_is_the_one_most_callers_share() -> None:
    wf = W.gather(_tmpl_with_callers(["      kind: b\n", "      kind: a\n", "      kind: a\n"]), LAUNCHER)
    sweep = wfenv.sweep(wf, Profile(), multinode=False)
    assert sweep.main is not None and len(sweep.main.calls) == 2
    assert {c.chain[0].path for c in sweep.main.calls} == {".github/workflows/c1.yml", ".github/workflows/c2.yml"}
    assert sweep.main.name.endswith("(and 1 more)")
    (other,) = sweep.others
    assert [c.chain[0].path for c in other.calls] == [".github/workflows/c0.yml"]
    assert wfenv.sweep(wf, Profile(), multinode=True) == wfenv.Sweep(None, ())
    assert wfenv.standalone(wf) == []


def test_fixture_sweep_and_render_env_of_an_entry() -> None:
    tree, wf = _fixture_wf()
    profile = Profile()
    sweep = wfenv.sweep(wf, profile, multinode=False)
    assert sweep.main is not None and sweep.main.call.chain[0].path == RUN_SWEEP
    assert sorted(g.call.chain[0].path for g in sweep.others) == [E2E, PROFILE_WF]
    entry = next(e for e in load_config(tree, "configs/amd-master.yaml").entries
                 if e.name == "dsr1-fp8-mi300x-sglang-mtp")
    point = entry.points[0]
    env = wfenv.render_env(sweep.main.call, profile, entry, point, "mi300x-amds_0", "mi300x", wf)
    assert env["TP"] == ("8",) and env["SPEC_DECODING"] == ("mtp",) and env["DP_ATTENTION"] == ("true",)
    assert env["EP_SIZE"] == ("1",)  # matrix-fields default {ep|1}
    assert env["MODEL"] == ("deepseek-ai/DeepSeek-R1-0528",) and env["ISL"] == ("1024",)
    assert env["RUNNER_NAME"] == ("mi300x-amds_0",)  # ${{ runner.name }} is the node
    assert env["SCENARIO_SUBDIR"] == ("fixed_seq_len/",)
    assert env["GITHUB_WORKSPACE"] == (profile.workspace,)
    assert env["RESULT_FILENAME"] == ("dsr1_1k1k_fp8_sglang_tp8_conc4",)
    e2e = next(g.call for g in sweep.others if g.call.chain[0].path == E2E)
    assert wfenv.render_env(e2e, profile, entry, point, "mi300x-amds_0", "mi300x", wf)["SPEC_DECODING"] == ("none",)
    unbound = wfenv.render_env(sweep.main.call, profile, None, None, "mi300x-amds_0", "mi300x", wf)
    assert known_none(unbound["TP"]) and unbound["RUNNER_NAME"] == ("mi300x-amds_0",)


def known_none(v: tuple[object, ...]) -> bool:
    return len(v) == 1 and not isinstance(v[0], str)


def test_standalone_call_and_runner_label() -> None:
    text = """on:
  workflow_dispatch:
    inputs:
      node: { default: h200 }
      other: { type: string }
jobs:
  a:
    runs-on: ${{ inputs.node }}
    steps:
      - run: bash ./runners/launch_h200-cw.sh
  b:
    runs-on: ${{ inputs.other }}
    steps:
      - run: bash ./runners/launch_h200-cw.sh
"""
    wf = W.gather({".github/workflows/manual.yml": text}, LAUNCHER)
    groups = wfenv.standalone(wf)
    assert [g.call.chain[0].job for g in groups] == ["a", "b"]
    assert [g.call.launcher for g in groups] == ["runners/launch_h200-cw.sh"] * 2
    assert wfenv.runner_label(groups[0].call, wf) == "h200"
    assert wfenv.runner_label(groups[1].call, wf) is None  # no default: not known
    assert wfenv.sweep(wf, Profile(), multinode=False).main is None


# ------------------------------------------------------------------ launchenv and facts


def test_env_source_uses_the_main_workflow_path() -> None:
    tree, wf = _fixture_wf()
    profile = Profile()
    src = EnvSource(tree, profile, wf)
    entry = next(e for e in load_config(tree, "configs/amd-master.yaml").entries
                 if e.name == "dsr1-fp8-mi300x-sglang")
    main = src.main_call(False)
    assert main is not None and main.chain[0].path == RUN_SWEEP
    env = src.env_for(entry, entry.points[0], "mi300x-amds_1", "mi300x")
    assert env["SPEC_DECODING"] == ("none",) and env["RUNNER_NAME"] == ("mi300x-amds_1",)
    passed = src.passed_vars(False)
    assert passed is not None and {"SCENARIO_SUBDIR", "RESULT_FILENAME", "GITHUB_WORKSPACE"} <= passed
    assert "PP_SIZE" not in passed
    assert src.main_call(True) is None


def test_env_source_without_workflow_calls_reads_the_template(tmp_path: Path) -> None:
    tree = _write(tmp_path / "repo", {
        "configs/nvidia-master.yaml": "e-h200:\n  runner: h200\n  model: m\n  precision: fp8\n  framework: vllm\n"
                                      "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
                                      "      search-space:\n      - { tp: 4, conc-start: 4, conc-end: 4,"
                                      " spec-decoding: mtp }\n",
        TMPL: "on: workflow_call\njobs:\n  b:\n    env:\n      MODEL: x\n      TP: y\n"
              "      SUFFIX: ${{ inputs.spec-decoding == 'mtp' && '_mtp' || '' }}\n",
    })
    src = EnvSource(tree, Profile(), WC.Workflows())
    assert src.main_call(False) is None
    assert src.passed_vars(False) == frozenset({"MODEL", "TP", "SUFFIX"})
    assert src.passed_vars(True) is None  # no multinode template in the tree
    assert src.ternaries(False) == [("SUFFIX", "spec-decoding", "mtp", "_mtp", "")]
    entry = load_config(tree, "configs/nvidia-master.yaml").entries[0]
    env = src.env_for(entry, entry.points[0], "h200-cw_0", "h200")
    assert env["SUFFIX"] == ("_mtp",) and env["TP"] == ("4",)
    assert "PRECISION" not in env  # not a name the template mentions


def test_facts_path_runs_name_the_differing_variables(tmp_path: Path) -> None:
    tree = WorkTree(str(copy_repo(FIXTURES / "workflow-env", tmp_path / "r")))
    facts = repo_facts.gather(tree, Profile())
    assert facts.envs.main_call(False) is not None
    runs = {(Path(r.group.call.chain[0].path).name, r.entry.name if r.entry else None): r.differs
            for r in facts.path_runs}
    assert runs[("e2e-tests.yml", "dsr1-fp8-mi300x-sglang-mtp")] == ("SPEC_DECODING",)
    assert runs[("profile.yml", "dsr1-fp8-h200-sglang")] == ("SCENARIO_SUBDIR",)
    assert ("e2e-tests.yml", "dsr1-fp8-mi300x-sglang") not in runs  # same env where it matters
    clean = repo_facts.gather(WorkTree(str(FIXTURES / "workflow-env-clean")), Profile())
    assert all(r.differs != ("SCENARIO_SUBDIR",) for r in clean.path_runs)


AGENTIC_WF = """name: sweep
on: workflow_dispatch
jobs:
  setup:
    runs-on: ubuntu-latest
    outputs:
      configs: ${{ steps.gen.outputs.configs }}
    steps:
      - id: gen
        run: echo "configs=$(python3 utils/matrix_logic/generate_sweep_configs.py full-sweep)" >> "$GITHUB_OUTPUT"
  bench:
    needs: setup
    strategy:
      matrix:
        config: ${{ fromJson(needs.setup.outputs.configs) }}
    runs-on: ${{ matrix.config.runner }}
    env:
      TOTAL_CPU_DRAM_GB: ${{ matrix.config.total-cpu-dram-gb }}
      DURATION: ${{ matrix.config.duration }}
    steps:
      - run: bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""
AGENTIC_CONFIG = """qwen-fp8-mi325x-sglang:
  image: img
  model: Qwen/Qwen3.5
  model-prefix: qwen3.5
  runner: mi325x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - { isl: 1024, osl: 1024, search-space: [{ tp: 8, conc-start: 4, conc-end: 4 }] }
    agentic-coding:
    - search-space:
      - { tp: 2, kv-offloading: none, conc-list: [1] }
      - { tp: 2, kv-offloading: dram, conc-list: [1] }
"""


def test_the_generator_sets_the_agentic_dram_budget_and_duration(tmp_path: Path) -> None:
    """InferenceX's generator puts ``total-cpu-dram-gb`` (0 without DRAM KV offloading, else a
    budget from the runner's hardware) and ``duration`` (3600) in every agentic entry; read as
    the entry's own (absent) fields they were empty, and ``check_env_vars TOTAL_CPU_DRAM_GB
    DURATION`` ended every agentic script before its server."""
    tree = _write(tmp_path, {".github/workflows/sweep.yml": AGENTIC_WF, "configs/amd-master.yaml": AGENTIC_CONFIG})
    wf = _gather_tree(tree)
    profile = Profile()
    call = wfenv.sweep(wf, profile, multinode=False).main
    assert call is not None
    (entry,) = load_config(tree, "configs/amd-master.yaml").entries
    fixed, plain, dram = entry.points

    def env(point: object) -> dict[str, tuple[object, ...]]:
        return wfenv.render_env(call.call, profile, entry, point, "mi325x-amds_0", "mi325x", wf)  # type: ignore

    assert env(plain)["TOTAL_CPU_DRAM_GB"] == ("0",) and env(plain)["DURATION"] == ("3600",)
    assert known_none(env(dram)["TOTAL_CPU_DRAM_GB"]) and env(dram)["TOTAL_CPU_DRAM_GB"] != ()
    assert env(fixed)["TOTAL_CPU_DRAM_GB"] == () and env(fixed)["DURATION"] == ()  # not an agentic entry
