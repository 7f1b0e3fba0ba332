"""The memos behind ``EnvSource`` (rendered envs, entry fields, expression answers, the
path per point) give what a fresh render gives, in any order of asking."""

from __future__ import annotations

from pathlib import Path

from bot.repo import facts as repo_facts
from bot.repo.env import wfenv
from bot.repo.env.envrender import additional_settings
from bot.repo.env.launchenv import EnvSource
from bot.repo.env.profile import Profile
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES
from tests.repo.test_workflow_facts import _write


def _fresh(src: EnvSource, call: object, run: repo_facts.Run) -> dict[str, object]:
    env: dict[str, object] = dict(wfenv.render_env(call, src.profile, run.entry, run.point, run.node,  # type: ignore[arg-type]
                                                   run.label, src.workflows))
    for name, value in additional_settings(run.entry, run.point).items():
        env.setdefault(name, value)
    return env


def test_memoized_envs_equal_fresh_renders_in_any_order() -> None:
    facts = repo_facts.gather(WorkTree(str(FIXTURES / "workflow-env")), Profile())
    calls = facts.workflows.calls
    assert facts.runs and len(calls) >= 3
    for order in (facts.runs, list(reversed(facts.runs))):
        src = EnvSource(facts.tree, facts.profile, facts.workflows)  # empty memos
        for run in order:
            for call in calls:
                want = _fresh(src, call, run)
                assert src.env_of(call, run.entry, run.point, run.node, run.label) == want
                part = src.env_of(call, run.entry, run.point, run.node, run.label, ("TP", "SPEC_DECODING", "NOPE"))
                assert part == {k: v for k, v in want.items() if k in ("TP", "SPEC_DECODING")}
            main = src.call_for(run.entry, run.point, run.node, run.label)
            assert main is not None
            assert src.env_for(run.entry, run.point, run.node, run.label) == _fresh(src, main, run)
    # the env handed out is the caller's to change: the memo keeps its own
    run = facts.runs[0]
    env = facts.envs.env_of(calls[0], run.entry, run.point, run.node, run.label)
    env["TP"] = ("999",)
    assert facts.envs.env_of(calls[0], run.entry, run.point, run.node, run.label)["TP"] != ("999",)


def test_an_expression_on_entry_fields_is_answered_per_entry(tmp_path: Path) -> None:
    entry = ("  runner: h200\n  model: m\n  precision: fp8\n  framework: {fw}\n  scenarios:\n"
             "    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n"
             "      - {{ tp: {tp}, conc-start: 4, conc-end: 4 }}\n")
    tree = _write(tmp_path / "repo", {
        "configs/nvidia-master.yaml": "a-h200-sglang:\n" + entry.format(fw="sglang", tp=8)
                                      + "b-h200-vllm:\n" + entry.format(fw="vllm", tp=1),
        "configs/runners.yaml": "h200:\n- h200-cw_0\n",
        "runners/launch_h200-cw.sh": "bash benchmarks/x.sh\n",
        ".github/workflows/run-sweep.yml": """on: push
jobs:
  sweep:
    runs-on: ${{ matrix.config.runner }}
    strategy:
      matrix:
        config: ${{ fromJson(needs.setup.outputs.configs) }}
    env:
      MODE: ${{ matrix.config.framework == 'sglang' && 'fast' || 'slow' }}
      WIDE: ${{ matrix.config.tp == 8 }}
      TP: ${{ matrix.config.tp }}
    steps:
      - run: bash ./runners/launch_${RUNNER_NAME%%_*}.sh
""",
    })
    facts = repo_facts.gather(tree, Profile())
    by_entry = {r.entry.name: r for r in facts.runs}
    assert set(by_entry) == {"a-h200-sglang", "b-h200-vllm"}
    call = facts.workflows.calls[0]
    seen = []
    for name in ("a-h200-sglang", "b-h200-vllm", "a-h200-sglang", "b-h200-vllm"):
        r = by_entry[name]
        env = facts.envs.env_of(call, r.entry, r.point, r.node, r.label)
        seen.append((env["MODE"], env["WIDE"], env["TP"]))
    assert seen == [(("fast",), ("true",), ("8",)), (("slow",), ("false",), ("1",))] * 2


def test_answers_are_compared_with_their_types() -> None:
    assert wfenv._same("8", "8") and wfenv._same(None, None)
    assert not wfenv._same(True, 1.0) and not wfenv._same(1.0, True) and not wfenv._same("1", 1.0)
