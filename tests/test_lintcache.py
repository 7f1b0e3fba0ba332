"""A whole lint kept across processes (``bot.lintcache``): the same tree and configuration
give the cached findings without gathering anything; any change a lint could see (bytes,
even with the size and modification time kept, a new path, a link, the configuration, the
index) is a miss; a damaged or hostile entry is a miss; a lint that ran out of a budget, or
was told which suppressions count, is not kept."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bot import cache, lintcache
from bot.config import load_config
from bot.lint import LintResult, lint
from bot.repo.cache import evalcache
from bot.repo.files import parsed
from bot.repo.files.git import GitTree, IndexTree
from bot.repo.files.tree import Tree, WorkTree
from tests.conftest import ROOT, git

LAUNCHER = "runners/launch_mi325x-amds.sh"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    parsed.reset()
    evalcache.reset()
    return tmp_path / "cache"


def _lint(tree: Tree) -> LintResult:
    return lint(tree, load_config(tree))


def _full(result: LintResult) -> list[tuple[object, ...]]:
    """Everything of each finding, the key (not part of equality) included."""
    return [(f, f.key, f.fix.diff if f.fix else None) for f in result.findings]


def _counts(result: LintResult) -> object:
    return replace(result.stats, seconds=0.0)


def test_the_same_tree_again_is_a_hit_with_the_same_findings(seed_repo: Path, fresh: Path) -> None:
    cold = _lint(WorkTree(str(seed_repo)))
    assert not cold.cached and cold.findings and any(f.fix for f in cold.findings)
    assert [p for p in (fresh / "lint").rglob("*") if p.is_file()]
    parsed.reset()
    evalcache.reset()
    warm = _lint(WorkTree(str(seed_repo)))
    assert warm.cached
    assert _full(warm) == _full(cold)
    assert _counts(warm) == _counts(cold) and warm.stats.coverage is not None
    assert warm.timings == {"cached": warm.stats.seconds}
    # the facts of a hit are gathered when asked for, and are the lint's
    assert warm.facts.suppressions == cold.facts.suppressions
    assert len(warm.facts.runs) == len(cold.facts.runs) and "resolve" in warm.timings


def test_an_edit_that_keeps_size_and_mtime_is_seen(seed_repo: Path, fresh: Path) -> None:
    path = seed_repo / LAUNCHER
    before = _lint(WorkTree(str(seed_repo)))
    st = path.stat()
    text = path.read_text()
    assert "_mi325x.sh\n" in text
    path.write_text(text.replace("_mi325x.sh\n", "_mi32zx.sh\n"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    after = _lint(WorkTree(str(seed_repo)))
    assert not after.cached
    assert "missing-script" in {f.rule for f in after.findings} - {f.rule for f in before.findings}


def _key(root: Path) -> str | None:
    tree = WorkTree(str(root))
    return lintcache.key_of(tree, load_config(tree))


def test_every_kind_of_change_is_another_key(seed_repo: Path, fresh: Path) -> None:
    keys = [_key(seed_repo)]
    (seed_repo / "notes").mkdir()
    (seed_repo / "notes" / "empty.txt").write_text("")  # a new path, even empty and unread
    keys.append(_key(seed_repo))
    (seed_repo / "notes" / "link.sh").symlink_to("../" + LAUNCHER)
    keys.append(_key(seed_repo))
    (seed_repo / "notes" / "link.sh").unlink()
    (seed_repo / "notes" / "link.sh").symlink_to("../runners/launch_mi300x-amds.sh")  # another target
    keys.append(_key(seed_repo))
    os.mkfifo(seed_repo / "notes" / "fifo")  # never opened for reading, never blocks
    keys.append(_key(seed_repo))
    (seed_repo / ".benchbot.yml").write_text("max-file-mb: 1\n")  # the configuration
    keys.append(_key(seed_repo))
    assert None not in keys and len(set(keys)) == len(keys)
    assert _key(seed_repo) == keys[-1]  # and nothing else moves it


def test_the_configuration_key_does_not_depend_on_the_hash_seed(seed_repo: Path, fresh: Path) -> None:
    """``--select`` is a set: its order in memory changes with PYTHONHASHSEED, its key does not."""
    select = "ignored-variant,missing-script,dead-script,no-launcher,unknown-runner-label,config-schema"
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "BENCHBOT_CACHE_DIR": str(fresh)}
        proc = subprocess.run([sys.executable, "-m", "bot", "lint", str(seed_repo), "--select", select,
                               "--format", "json", "--timings"], cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        outs.append(proc)
    assert "resolve:" in outs[0].stderr and "cached:" not in outs[0].stderr
    assert "cached:" in outs[1].stderr and "resolve:" not in outs[1].stderr
    first, second = (json.loads(p.stdout) for p in outs)
    assert first["findings"] == second["findings"] and first["findings"]


def test_git_revisions_and_the_index(seed_repo: Path, fresh: Path) -> None:
    git(seed_repo, "init", "-q")
    git(seed_repo, "add", "-A")
    git(seed_repo, "commit", "-qm", "one")
    git(seed_repo, "commit", "-q", "--allow-empty", "-m", "two: the same tree")
    one = _lint(GitTree(str(seed_repo), "HEAD~1"))
    two = _lint(GitTree(str(seed_repo), "HEAD"))
    assert not one.cached and two.cached and _full(two) == _full(one)
    staged = _lint(IndexTree(str(seed_repo)))  # the index holds the same blobs: the same lint
    assert staged.cached and _full(staged) == _full(one)
    path = seed_repo / LAUNCHER
    path.write_text(path.read_text().replace("_mi325x.sh\n", "_mi32zx.sh\n"))
    assert _lint(IndexTree(str(seed_repo))).cached  # not staged: the index did not change
    git(seed_repo, "add", LAUNCHER)
    changed = _lint(IndexTree(str(seed_repo)))
    assert not changed.cached and "missing-script" in {f.rule for f in changed.findings}
    assert _lint(WorkTree(str(seed_repo))).findings == changed.findings


BAD_JSON = [
    b"not json",
    b"[]",
    b'{"findings": 5, "counts": [1, 2, 3, 4], "coverage": null, "texts": []}',
    b'{"findings": [], "counts": [1, 2, 3], "coverage": null, "texts": []}',
    b'{"findings": [], "counts": [1, 2, 3, "4"], "coverage": null, "texts": []}',
    b'{"findings": [], "counts": [1, 2, 3, 4], "coverage": null}',
    b'{"findings": [["r", "BB1", 9, "p", 1, 1, "m", [], [], null, ""]], "counts": [1, 2, 3, 4], "coverage": null, '
    b'"texts": []}',
    b'{"findings": [["r", "BB1", 2, "p", true, 1, "m", [], [], null, ""]], "counts": [1, 2, 3, 4], '
    b'"coverage": null, "texts": []}',
    b'{"findings": [["r", "BB1", 2, "p", 1, 1, "m", [], [], ["d", "", "yes", []], ""]], "counts": [1, 2, 3, 4], '
    b'"coverage": null, "texts": []}',
    # an edit's text by an index the table does not have (a negative one would be Python's from the end)
    b'{"findings": [["r", "BB1", 2, "p", 1, 1, "m", [], [], ["d", "", true, [["p", 0, -1]]], ""]], '
    b'"counts": [1, 2, 3, 4], "coverage": null, "texts": ["a"]}',
    b'{"findings": [], "counts": [1, 2, 3, 4], "coverage": [1, [["srtctl"]], 0, 0, 0, 0, []], "texts": []}',
    b"\xff\xfe not utf-8",
    b"[" * 100_000 + b"]" * 100_000,
]
BAD_ENTRIES = [lzma.compress(p, preset=1) for p in BAD_JSON] + [
    b"not xz at all",
    lzma.compress(b'{"findings": []}')[:-8],  # cut short
    lzma.compress(b" " * (2 * 1024 * 1024)),  # decodes to more than MAX_DECODED (made 1 MiB here)
]


@pytest.mark.parametrize("payload", BAD_ENTRIES, ids=range(len(BAD_ENTRIES)))
def test_a_damaged_or_hostile_entry_is_a_miss(payload: bytes, seed_repo: Path, fresh: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lintcache, "MAX_DECODED", 1024 * 1024)
    truth = _lint(WorkTree(str(seed_repo)))
    key = _key(seed_repo)
    assert key is not None and lintcache.load(key) is not None
    cache.put(lintcache.KIND, key, payload)  # with a valid checksum: only the decoding can refuse it
    assert lintcache.load(key) is None
    again = _lint(WorkTree(str(seed_repo)))
    assert not again.cached and _full(again) == _full(truth)
    assert _lint(WorkTree(str(seed_repo))).cached  # the miss stored the entry again


def test_an_entry_keeps_each_text_once_and_small(seed_repo: Path, fresh: Path) -> None:
    """Fixes hold whole files: the same text under several fixes is stored once, compressed."""
    for name in ("mi300x", "mi325x"):  # the launchers the seed's two fixes edit
        launcher = seed_repo / "runners" / f"launch_{name}-amds.sh"
        launcher.write_text(launcher.read_text() + "".join(f"# note {i} of a long launcher\n" for i in range(5_000)))
    result = _lint(WorkTree(str(seed_repo)))
    texts = {t for f in result.findings if f.fix for e in f.fix.edits for t in (e.old, e.new)}
    held = sum(len(e.old) + len(e.new) for f in result.findings if f.fix for e in f.fix.edits)
    assert held > 100_000
    [entry] = [p for p in (fresh / "lint").rglob("*") if p.is_file()]
    assert entry.stat().st_size < held / 10
    key = _key(seed_repo)
    assert key is not None
    raw = json.loads(lzma.decompress(cache.get(lintcache.KIND, key) or b""))
    assert sorted(raw["texts"]) == sorted(texts)
    assert _full(_lint(WorkTree(str(seed_repo)))) == _full(result)


def test_a_lint_that_ran_out_of_a_budget_is_not_kept(seed_repo: Path, fresh: Path) -> None:
    (seed_repo / ".benchbot.yml").write_text("profile:\n  max-steps: 40\n")
    first = _lint(WorkTree(str(seed_repo)))
    assert any(r.budget_hits for r in first.facts.runs) and not lintcache.keepable(first.facts)
    assert not first.cached and not _lint(WorkTree(str(seed_repo))).cached
    assert not (fresh / "lint").exists()


def test_honoured_suppressions_and_no_cache_are_never_kept(seed_repo: Path, fresh: Path) -> None:
    tree = WorkTree(str(seed_repo))
    conf = load_config(tree)
    for _ in range(2):
        assert not lint(tree, conf, honoured=lambda _s: True).cached
    assert not (fresh / "lint").exists()
    cache.disable(True)
    try:
        assert lintcache.key_of(tree, conf) is None
        assert not lint(tree, conf).cached and not lint(tree, conf).cached
    finally:
        cache.disable(False)
    assert not (fresh / "lint").exists()


def test_a_bash_verdict_that_timed_out_is_not_kept(seed_repo: Path, fresh: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter rejects ``exec 3<>/dev/tcp/...``; ``bash -n`` has the last word. When bash
    does not answer in time the file stays rejected, and that verdict (of this machine, not
    of the file) is not kept: the next lint asks bash again."""
    import subprocess

    from bot.repo.files import parsed as parsed_mod

    script = seed_repo / "benchmarks" / "single_node" / "fixed_seq_len" / "kimik2.5_int4_mi355x.sh"
    script.write_text(script.read_text() + "exec 3<>/dev/tcp/localhost/8888\n")
    real_run = subprocess.run

    def slow(cmd: list[str], *args: object, **kwargs: object) -> object:
        if cmd[:2] == ["bash", "-n"]:
            raise subprocess.TimeoutExpired(cmd, 10)
        return real_run(cmd, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(parsed_mod.subprocess, "run", slow)
    timed_out = _lint(WorkTree(str(seed_repo)))
    rel = str(script.relative_to(seed_repo))
    assert timed_out.facts.undecided == [rel] and not lintcache.keepable(timed_out.facts)
    assert any(f.rule == "shell-syntax" and f.path == rel for f in timed_out.findings)
    monkeypatch.setattr(parsed_mod.subprocess, "run", real_run)  # not undo(): that would restore CI=true too
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(fresh))
    answered = _lint(WorkTree(str(seed_repo)))
    assert not answered.cached and answered.facts.undecided == []
    assert not any(f.rule == "shell-syntax" for f in answered.findings)
    assert _lint(WorkTree(str(seed_repo))).cached


def test_a_kept_base_is_read_not_evaluated(tmp_path: Path, fresh: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``--new-from-rev`` (and the PR bot) need of a base its findings and, for the change
    rules, its entries, suppressions and tree: when the base's lint is a kept result, its
    facts are read (``LintResult.read_facts``), never parsed or evaluated, and the report is
    the same, changelog-missing included."""
    from bot.cli import main
    from bot.repo import facts as facts_mod
    from tests.rules.test_changelog_missing import _seed_pr

    repo, base, _ = _seed_pr(tmp_path)
    real_gather = facts_mod.gather
    calls: list[tuple[str, bool]] = []

    def gather(tree: Tree, profile: object, *args: object, evaluate: bool = True, **kwargs: object) -> object:
        calls.append((tree.root, evaluate))
        return real_gather(tree, profile, *args, evaluate=evaluate, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(facts_mod, "gather", gather)
    outs = []
    for _ in range(2):
        calls.clear()
        parsed.reset()
        evalcache.reset()
        assert main(["lint", str(repo), "--new-from-rev", base, "--format", "json"]) == 1
        outs.append(json.loads(capsys.readouterr().out))
        if len(outs) == 1:
            assert sorted(e for _, e in calls) == [True, True]  # both linted in full
    assert calls == [(str(repo), True), (f"{repo}@{base}", False)]  # the head's change rules need its runs
    for out in outs:
        out.pop("stats")
    assert outs[0] == outs[1]
    assert {f["rule"] for f in outs[0]["findings"]} >= {"changelog-missing"}


# ------------------------------------------------------------------ forged entries where the folder is shared (CI)

CACHE_KEY = "a-long-secret-only-the-trusted-workflows-hold-0123456789"


def _cli(repo: Path, where: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("BENCHBOT_NO_CACHE", "BENCHBOT_CACHE_KEY")}
    full.update(BENCHBOT_CACHE_DIR=str(where), **env)
    return subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json", *args], cwd=ROOT,
                          env=full, capture_output=True, text=True, timeout=120)


def _forge_no_findings(repo: Path) -> None:
    """What anyone who can write the folder can do: "0 findings" under the tree's (public) key."""
    key = _key(repo)
    assert key is not None
    lintcache.store(key, [], (0, 0, 0, 0), None)


@pytest.mark.parametrize("forger_key", ["", "the-forger-guessed-a-key-of-the-right-length-0123"],
                         ids=["unsealed", "sealed-with-another-key"])
def test_a_forged_entry_in_ci_is_ignored_and_the_findings_reported(forger_key: str, seed_repo: Path, fresh: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    truth = _cli(seed_repo, fresh.parent / "truth", "--no-cache")
    assert truth.returncode == 1 and json.loads(truth.stdout)["findings"]
    if forger_key:
        monkeypatch.setenv("BENCHBOT_CACHE_KEY", forger_key)
    _forge_no_findings(seed_repo)
    for env in ({"CI": "true"}, {"GITHUB_ACTIONS": "true", "BENCHBOT_CACHE_KEY": CACHE_KEY}):
        proc = _cli(seed_repo, fresh, "--timings", **env)
        assert proc.returncode == 1, (env, proc.stdout[:500], proc.stderr[-2000:])
        assert "cached:" not in proc.stderr
        assert json.loads(proc.stdout)["findings"] == json.loads(truth.stdout)["findings"]


def test_with_the_key_a_genuine_entry_is_a_hit(seed_repo: Path, fresh: Path) -> None:
    env = {"CI": "true", "BENCHBOT_CACHE_KEY": CACHE_KEY}
    cold = _cli(seed_repo, fresh, "--timings", **env)
    assert cold.returncode == 1 and "cached:" not in cold.stderr, cold.stderr
    warm = _cli(seed_repo, fresh, "--timings", **env)
    assert warm.returncode == 1 and "cached:" in warm.stderr and "resolve:" not in warm.stderr, warm.stderr
    assert json.loads(warm.stdout)["findings"] == json.loads(cold.stdout)["findings"]
    assert CACHE_KEY.encode() not in b"".join(p.read_bytes() for p in fresh.rglob("*") if p.is_file())
    # the sealed entry means nothing without the key (CI) or to a developer's run (no key)
    for other in ({"CI": "true"}, {}):
        proc = _cli(seed_repo, fresh, "--timings", **other)
        assert proc.returncode == 1 and "cached:" not in proc.stderr, (other, proc.stderr)
