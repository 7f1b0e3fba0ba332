"""env-not-passed's message is read by a person: what, where and how many on its line; each
launcher it stops, with what happens there, in related[]; the entries in entries[]."""

from __future__ import annotations

from pathlib import Path

from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, copy_repo

FIXTURE = FIXTURES / "workflow-env"
PROFILE = ".github/workflows/profile.yml"


def _unset(repo: Path) -> Finding:
    [f] = [f for f in lint(WorkTree(str(repo)), Config()).findings
           if f.rule == "env-not-passed" and f.path == PROFILE]
    return f


def _more_launchers(repo: Path, gpus: tuple[str, ...]) -> None:
    """Each GPU a label, a launcher, an entry and its script, like the fixture's H200 ones."""
    runners = repo / "configs/runners.yaml"
    config = repo / "configs/nvidia-master.yaml"
    scripts = repo / "benchmarks/single_node/fixed_seq_len"
    for gpu in gpus:
        runners.write_text(runners.read_text() + f"  {gpu}:\n    - {gpu}-cw_0\n")
        entry = (config.read_text().split("\n\n")[0].replace("h200", gpu))
        config.write_text(config.read_text().rstrip("\n") + "\n\n" + entry.rstrip("\n") + "\n")
        launcher = (repo / "runners/launch_h200-cw.sh").read_text().replace("h200", gpu)
        (repo / f"runners/launch_{gpu}-cw.sh").write_text(launcher)
        (scripts / f"dsr1_fp8_{gpu}.sh").write_text((scripts / "dsr1_fp8_h200.sh").read_text())


def test_a_path_that_stops_many_launchers_says_how_many_and_lists_them_in_related(tmp_path: Path) -> None:
    """InferenceX 843c6254f: a ~700-character message naming 11 launchers and 77 entries."""
    before = _unset(FIXTURE)
    repo = copy_repo(FIXTURE, tmp_path / "repo")
    _more_launchers(repo, ("h100", "b200", "b300"))
    f = _unset(repo)
    assert f.message == ("profile.yml › profile › Launch profiled job never sets SCENARIO_SUBDIR, which 5 launchers "
                         "need: the job fails for 6 entries [variable: SCENARIO_SUBDIR]")
    assert f.entries == ("dsr1-fp8-b200-sglang", "dsr1-fp8-b300-sglang", "dsr1-fp8-h100-sglang",
                         "dsr1-fp8-h200-sglang", "dsr1-fp8-mi300x-sglang", "dsr1-fp8-mi300x-sglang-mtp")
    stops = {r.path: r.note for r in f.related if r.path.startswith("runners/")}
    assert sorted(stops) == [f"runners/launch_{g}.sh" for g in ("b200-cw", "b300-cw", "h100-cw", "h200-cw",
                                                                 "mi300x-amds")]
    assert stops["runners/launch_b300-cw.sh"] == (
        "reads SCENARIO_SUBDIR with no default (nounset): the job fails (the launcher exits at launch_b300-cw.sh:4), "
        "not benchmarks/single_node/fixed_seq_len/dsr1_fp8_b300.sh, for dsr1-fp8-b300-sglang")
    assert any("the main path" in r.note and "sets SCENARIO_SUBDIR here" in r.note for r in f.related)
    assert f.fingerprint == before.fingerprint  # the subject, not the wording or the count


def test_two_launchers_are_named_in_the_message() -> None:
    f = _unset(FIXTURE)
    assert f.message == ("profile.yml › profile › Launch profiled job never sets SCENARIO_SUBDIR, which "
                         "launch_mi300x-amds.sh (line 9) and launch_h200-cw.sh (line 4) need: the job fails for 3 "
                         "entries [variable: SCENARIO_SUBDIR]")
