"""Evaluations kept across lints (``bot.repo.cache.evalcache``): a warm lint finds what a cold
one finds; a changed input (a sourced helper, a file a test looks for, the launcher) is a
miss; what is stored is data only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot import cache
from bot.config import load_config
from bot.lint import lint
from bot.repo.cache import evalcache
from bot.repo.files.tree import WorkTree
from tests.conftest import EXAMPLE, FIXTURES, copy_repo

FIXTURE_NAMES = ["workflow-env", "root-causes", "multinode", "case-and-functions", "inconsistent-dispatch",
                 "agentic", "serve", "spec-enabled", "spec-config", "variant-drift", "spec-policy"]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_lint_cache: None) -> Path:
    """An empty cache folder and an empty process store."""
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    evalcache.reset()
    return tmp_path / "cache"


def _findings(root: Path) -> list[tuple[str, str, int, str]]:
    tree = WorkTree(str(root))
    return [(f.rule, f.path, f.line, f.message) for f in lint(tree, load_config(tree)).findings]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_warm_lint_finds_what_a_cold_one_finds(name: str, fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / name, tmp_path / "r")
    cold = _findings(root)
    store = evalcache.shared()
    assert store.misses > 0 and store.hits == 0
    evalcache.reset()  # a new process: only the disk is left
    warm = _findings(root)
    assert warm == cold
    assert evalcache.shared().hits > 0 and evalcache.shared().misses == 0
    cache.disable()
    try:
        evalcache.reset()
        assert _findings(root) == cold  # --no-cache: the same, nothing used
        assert evalcache.shared().hits == evalcache.shared().misses == 0
    finally:
        cache.disable(False)


def test_an_edited_sourced_helper_is_a_miss(fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / "case-and-functions", tmp_path / "r")
    helper = root / "runners" / "slurm_utils.sh"
    helper.write_text("slurm_alloc() { echo 42; }\n")
    before = _findings(root)
    helper.write_text("exit 1\n")  # every job now ends in the helper
    evalcache.reset()
    after = _findings(root)
    assert evalcache.shared().misses > 0
    evalcache.reset()
    cache.disable()
    try:
        assert after == _findings(root)  # what a cold lint of the edited tree finds
    finally:
        cache.disable(False)
    assert after != before


def test_a_file_a_test_looks_for_is_part_of_the_key(fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / "case-and-functions", tmp_path / "r")
    launcher = root / "runners" / "launch_h200-cw.sh"
    text = launcher.read_text()
    launcher.write_text(text.replace("set -euo pipefail\n", "set -euo pipefail\n[ -f runners/GATE ] || exit 1\n", 1))
    gated = _findings(root)
    (root / "runners" / "GATE").write_text("")
    evalcache.reset()
    opened = _findings(root)
    assert evalcache.shared().misses > 0 and opened != gated
    evalcache.reset()
    cache.disable()
    try:
        assert opened == _findings(root)
    finally:
        cache.disable(False)


def test_damaged_or_foreign_entries_are_ignored(fresh: Path, tmp_path: Path) -> None:
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    cold = _findings(root)
    files = [p for p in (fresh / "eval").rglob("*") if p.is_file()]
    assert files
    for i, p in enumerate(files):  # one garbled, the others made to name a class we never load
        if i == 0:
            p.write_bytes(b"garbage")
        else:
            head, _, body = p.read_bytes().partition(b"\n")
            data = json.loads(body)
            data[0]["result"]["paths"] = [{"C": "os.system", "v": ["true"]}]
            cache.put("eval", p.name, json.dumps(data).encode())  # a valid header over hostile data
    evalcache.reset()
    assert _findings(root) == cold  # the hostile entries were never used (each a miss)
    assert evalcache.shared().misses >= len(files)
    with pytest.raises(ValueError):
        evalcache._dec({"C": "os.system", "v": ["true"]})  # only our own data classes are made


def _retype_first_loc(value: object) -> bool:
    """Make the first ``Loc`` inside a stored value say its line as text; whether one was found."""
    if isinstance(value, dict):
        if value.get("C") == "Loc":
            value["v"][1] = str(value["v"][1])
            return True
        return any(_retype_first_loc(v) for v in value.values())
    if isinstance(value, list):
        return any(_retype_first_loc(v) for v in value)
    return False


def test_entries_of_the_wrong_types_are_misses_not_errors(fresh: Path, tmp_path: Path) -> None:
    """Valid JSON under a valid checksum, of the right classes but with a field of another type
    (a line that is a string) or questions that are not questions: each is a miss, recomputed;
    the lint finds what it found cold."""
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    cold = _findings(root)
    files = [p for p in (fresh / "eval").rglob("*") if p.is_file()]
    assert files
    for i, p in enumerate(files):
        data = json.loads(p.read_bytes().partition(b"\n")[2])
        for entry in data:
            if i % 2:
                entry["asked"] = [["f", 7, True], "not a question"] + entry["asked"]
            else:
                assert _retype_first_loc(entry["result"])
        cache.put("eval", p.name, json.dumps(data).encode())
    evalcache.reset()
    assert _findings(root) == cold
    assert evalcache.shared().misses >= len(files) and evalcache.shared().hits == 0
    with pytest.raises(ValueError):
        evalcache._dec({"C": "Loc", "v": ["a.sh", True, 1]})  # a bool is not a line


def test_results_round_trip_through_json(fresh: Path, tmp_path: Path) -> None:
    from bot.repo import facts as repo_facts
    from bot.repo.env.profile import Profile

    for name in FIXTURE_NAMES:
        facts = repo_facts.gather(WorkTree(str(FIXTURES / name)), Profile())
        for run in facts.runs:
            if run.result is None or run.result.budget_hits:
                continue
            back = evalcache._result_dec(json.loads(json.dumps(evalcache._result_enc(run.result))))
            assert back.paths == run.result.paths and back.relevant == run.result.relevant
            assert back.presence == run.result.presence and back.bound_hit == run.result.bound_hit


def test_head_and_base_share_parses_of_unchanged_files(fresh: Path, tmp_path: Path) -> None:
    from bot.repo import facts as repo_facts
    from bot.repo.env.profile import Profile
    from bot.repo.files import parsed
    from bot.shell.front.parse import parse

    seen: list[str] = []

    def counting(path: str, data: bytes) -> object:
        seen.append(path)
        return parse(path, data)

    parsed.reset()
    base = copy_repo(FIXTURES / "workflow-env", tmp_path / "base")
    head = copy_repo(FIXTURES / "workflow-env", tmp_path / "head")
    launcher = head / "runners" / "launch_h200-cw.sh"
    launcher.write_text(launcher.read_text() + "echo done\n")
    repo_facts.gather(WorkTree(str(base)), Profile(), parser=counting)  # type: ignore[arg-type]
    first = list(seen)
    seen.clear()
    facts = repo_facts.gather(WorkTree(str(head)), Profile(), parser=counting)  # type: ignore[arg-type]
    assert first and seen == ["runners/launch_h200-cw.sh"]  # only the changed file
    assert facts.script("runners/launch_h200-cw.sh") is not None
    cache.disable()
    try:
        seen.clear()
        repo_facts.gather(WorkTree(str(head)), Profile(), parser=counting)  # type: ignore[arg-type]
        assert len(seen) >= len(first)  # --no-cache: nothing shared
    finally:
        cache.disable(False)


def test_script_needs_are_kept_by_content(fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.repo.files import parsed

    calls: list[str] = []
    real = parsed.find_needs

    def counting(script: object, checks: frozenset[str]) -> object:
        calls.append(script.path)  # type: ignore[attr-defined]
        return real(script, checks)  # type: ignore[arg-type]

    monkeypatch.setattr(parsed, "find_needs", counting)
    root = copy_repo(FIXTURES / "workflow-env", tmp_path / "r")
    parsed.reset()
    cold = _findings(root)
    assert calls  # env-not-passed asked for the needs of the scripts it hands over
    calls.clear()
    evalcache.reset()
    parsed.reset()
    assert _findings(root) == cold and calls == []  # read back, nothing parsed for them
    script = root / _a_benchmark_script(root)
    script.write_text(script.read_text() + "\n: \"${NEW_GUARD:?}\"\n")
    evalcache.reset()
    parsed.reset()
    _findings(root)
    assert calls == [str(script.relative_to(root))]  # the changed script only


def _a_benchmark_script(root: Path) -> str:
    """A benchmark script of the fixture (the launchers hand each to a container)."""
    return next(str(p.relative_to(root)) for p in sorted((root / "benchmarks").rglob("*.sh"))
                if "benchmark_lib" not in p.name)


def test_a_launcher_with_many_entries_keeps_them_all(fresh: Path, tmp_path: Path) -> None:
    """One launcher, 150 entries that differ in a variable its path is built from: every one
    is kept, and a second lint evaluates nothing (a per-launcher bound below the number of
    entries made every lint of InferenceX miss about a hundred)."""
    root = copy_repo(EXAMPLE, tmp_path / "r")
    master = root / "configs" / "amd-master.yaml"
    text = master.read_text()
    block = text[text.index("kimik2.5-int4-mi355x-vllm:"):text.index("kimik2.5-int4-mi355x-vllm-mtp:")]
    extra = "".join(block.replace("kimik2.5-int4-mi355x-vllm:", f"kimik2.5-int4-mi355x-vllm-n{i}:")
                    .replace("model-prefix: kimik2.5", f"model-prefix: kimik2.5n{i}") for i in range(150))
    master.write_text(text + "\n" + extra)
    cold = _findings(root)
    assert evalcache.shared().misses >= 150
    evalcache.reset()
    assert _findings(root) == cold
    assert evalcache.shared().misses == 0 and evalcache.shared().hits >= 150
