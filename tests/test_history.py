"""``benchbot history``: real git repos in temp dirs (the seed example, commit by commit, with
fixed dates), linted through the CLI; the episode tracker on its own for renames, merges
and consequences."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.findings import Finding, Related, Severity
from bot.history import Commit, Tracker, parse_range
from tests.conftest import EXAMPLE, copy_repo

DAY = 86400
T0 = 1_780_000_000  # 2026-05-28
MI300X = "runners/launch_mi300x-amds.sh"
MI355X_SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi355x.sh"


def _git(repo: Path, *args: str, when: int | None = None) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env,
                          text=True).stdout.strip()


def _commit(repo: Path, message: str, when: int) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)
    return _git(repo, "rev-parse", "HEAD")


def _fix_mi300x(repo: Path) -> None:
    p = repo / MI300X
    text = p.read_text()
    suffix = "SPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\n"
    text = text.replace("set -euo pipefail\n", "set -euo pipefail\n" + suffix, 1)
    p.write_text(text.replace("_mi300x.sh", "_mi300x${SPEC_SUFFIX}.sh"))


@pytest.fixture
def story(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The seed repo's life: c0 as bundled (two ignored variants), c1 an unrelated change, c2
    fixes mi300x's launcher, c3 deletes the mi355x script (missing-script), c4 unrelated, c5
    brings the script back."""
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _git(repo, "init", "-q", "-b", "main")
    c = {"c0": _commit(repo, "seed", T0)}
    (repo / "README.md").write_text("changed\n")
    c["c1"] = _commit(repo, "docs", T0 + DAY)
    _fix_mi300x(repo)
    c["c2"] = _commit(repo, "mi300x: run the _mtp script for MTP entries", T0 + 3 * DAY)
    script = (repo / MI355X_SCRIPT).read_text()
    (repo / MI355X_SCRIPT).unlink()
    c["c3"] = _commit(repo, "drop the mi355x script", T0 + 4 * DAY)
    (repo / "README.md").write_text("changed again\n")
    c["c4"] = _commit(repo, "docs again", T0 + 5 * DAY)
    (repo / MI355X_SCRIPT).write_text(script)
    c["c5"] = _commit(repo, "bring the mi355x script back", T0 + 9 * DAY)
    return repo, c


def _history(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["history", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _episodes(out: str) -> list[dict[str, Any]]:
    doc = json.loads(out)
    return list(doc["root_causes"])


def test_each_root_cause_with_the_commits_that_brought_and_removed_it(
        story: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    code, out, _ = _history(capsys, f"{c['c0']}..main", str(repo), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["commits"] == 5 and doc["linted"] == 6 and doc["skipped"] == []  # c1..c5, and c0 as the start
    assert doc["start"]["sha"] == c["c0"] and doc["end"]["sha"] == c["c5"]
    got = {(e["rule"], e["path"]): e for e in _episodes(out)}
    assert set(got) == {("ignored-variant", MI300X), ("ignored-variant", "runners/launch_mi325x-amds.sh"),
                        ("missing-script", "configs/amd-master.yaml")}
    mi300x = got[("ignored-variant", MI300X)]
    assert mi300x["first_bad"] is None and mi300x["before_range"] is True  # there at c0, the start
    assert mi300x["fixed_by"]["sha"] == c["c2"] and mi300x["days_open"] == 3.0  # from the start, c0
    mi325x = got[("ignored-variant", "runners/launch_mi325x-amds.sh")]
    assert mi325x["fixed_by"] is None and mi325x["open"] is True and mi325x["days_open"] == 9.0
    missing = got[("missing-script", "configs/amd-master.yaml")]
    assert missing["first_bad"]["sha"] == c["c3"] and missing["fixed_by"]["sha"] == c["c5"]
    assert missing["days_open"] == 5.0 and missing["entries"] == ["kimik2.5-int4-mi355x-vllm"]
    assert missing["first_bad"]["subject"] == "drop the mi355x script"


def test_a_range_from_the_root_says_who_brought_each_cause(story: tuple[Path, dict[str, str]],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    code, out, _ = _history(capsys, "main", str(repo), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["start"] is None and doc["commits"] == 6
    firsts = {e["path"]: e["first_bad"]["sha"] for e in doc["root_causes"] if e["rule"] == "ignored-variant"}
    assert firsts == {MI300X: c["c0"], "runners/launch_mi325x-amds.sh": c["c0"]}  # the root commit brought them


def test_text_and_markdown_reports(story: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    code, text, _ = _history(capsys, f"{c['c0']}..main", str(repo))
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == f"benchbot history {c['c0']}..main"
    header = next(i for i, line in enumerate(lines) if line.startswith("FIRST BAD"))
    row = next(line for line in lines[header:] if "missing-script" in line)
    assert row.startswith(f"{c['c3'][:9]} 2026-06-01  {c['c5'][:9]} 2026-06-06  5.0")
    # the subject is the script the entry misses, the entry is in ENTRIES: no internal entry|script key
    assert row.split()[-2:] == [MI355X_SCRIPT, "kimik2.5-int4-mi355x-vllm"]
    assert "|" not in row
    launchers = sorted(line.split()[-2] for line in lines[header:] if "ignored-variant" in line)
    assert launchers == [MI300X, "runners/launch_mi325x-amds.sh"]  # not runners/...|mtp|${SCENARIO_SUBDIR}...
    assert lines[-1] == "5 commits, 3 root causes: 2 fixed, 1 still open at " + c["c5"][:9]
    code, md, _ = _history(capsys, f"{c['c0']}..main", str(repo), "--format", "markdown")
    assert code == 0
    assert "| First bad | Fixed by | Days | Rule | Subject | Entries |" in md
    row = next(line for line in md.splitlines() if "missing-script" in line)
    assert row.count(" | ") == 5 and f"| `{MI355X_SCRIPT}` |" in row
    assert f"`{c['c3'][:9]}` 2026-06-01" in row


def test_first_parent_and_merged_branches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A branch breaks the script (b1) and a merge brings it to main (m): with
    --first-parent the merge is the first bad commit, without it the branch commit is; a
    fix made on another branch (f1) and merged (m2) likewise."""
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, "seed", T0)
    _git(repo, "checkout", "-q", "-b", "side")
    script = (repo / MI355X_SCRIPT).read_text()
    (repo / MI355X_SCRIPT).unlink()
    b1 = _commit(repo, "side: drop the script", T0 + DAY)
    _git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main moves on\n")
    _commit(repo, "main: docs", T0 + 2 * DAY)
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", when=T0 + 3 * DAY)
    m = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "fix")
    (repo / MI355X_SCRIPT).write_text(script)
    f1 = _commit(repo, "fix: the script is back", T0 + 4 * DAY)
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge fix", "fix", when=T0 + 6 * DAY)
    m2 = _git(repo, "rev-parse", "HEAD")

    def missing(*extra: str) -> dict[str, Any]:
        code, out, _ = _history(capsys, f"{base}..main", str(repo), "--format", "json", *extra)
        assert code == 0
        found = [e for e in _episodes(out) if e["rule"] == "missing-script"]
        assert len(found) == 1, found
        return found[0]

    fp = missing("--first-parent")
    assert (fp["first_bad"]["sha"], fp["fixed_by"]["sha"], fp["days_open"]) == (m, m2, 3.0)
    every = missing()
    assert (every["first_bad"]["sha"], every["fixed_by"]["sha"], every["days_open"]) == (b1, f1, 3.0)


def test_a_commit_that_cannot_be_linted_is_reported_and_changes_nothing(
        story: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    (repo / ".benchbot.yml").write_text("select: [no-such-rule]\n")
    bad = _commit(repo, "a broken configuration", T0 + 10 * DAY)
    (repo / ".benchbot.yml").unlink()
    _commit(repo, "configuration fixed", T0 + 11 * DAY)
    code, out, _ = _history(capsys, f"{c['c5']}..main", str(repo), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert [s["commit"]["sha"] for s in doc["skipped"]] == [bad]
    assert "no-such-rule" in doc["skipped"][0]["reason"]
    assert [e["fixed_by"] for e in doc["root_causes"]] == [None]  # mi325x's stays open through it
    code, text, _ = _history(capsys, f"{c['c5']}..main", str(repo))
    assert f"not linted: {bad[:9]} a broken configuration: " in text and "1 commit not linted" in text


def test_jobs_give_the_same_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _git(repo, "init", "-q", "-b", "main")
    start = _commit(repo, "seed", T0)
    script = (repo / MI355X_SCRIPT).read_text()
    for i in range(18):  # more than two chunks of consecutive commits
        if i == 5:
            (repo / MI355X_SCRIPT).unlink()
        elif i == 12:
            (repo / MI355X_SCRIPT).write_text(script)
        else:
            (repo / "README.md").write_text(f"{i}\n")
        _commit(repo, f"change {i}", T0 + (i + 1) * DAY)
    one = _history(capsys, f"{start}..main", str(repo), "--format", "json")
    two = _history(capsys, f"{start}..main", str(repo), "--format", "json", "--jobs", "2")
    assert one[0] == two[0] == 0 and one[1] == two[1]
    assert [e["days_open"] for e in _episodes(one[1]) if e["rule"] == "missing-script"] == [7.0]


def test_progress_bar_on_request(story: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    code, _, err = _history(capsys, f"{c['c0']}..main", str(repo), "--progress")
    assert code == 0 and "/6 [" in err and "commit/s" in err  # tqdm, cleared when done
    code, _, err = _history(capsys, f"{c['c0']}..main", str(repo))  # not a terminal: no bar
    assert code == 0 and err == ""


@pytest.mark.parametrize(("spec", "says"), [
    ("A...B", "symmetric range"),
    ("..B", "say where the range starts"),
    ("main..-x", "not a revision"),
    ("nosuchrev..main", "nosuchrev: not a commit"),
])
def test_a_bad_range_is_a_usage_error(story: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str],
                                      spec: str, says: str) -> None:
    repo, _ = story
    code, out, err = _history(capsys, spec, str(repo))
    assert code == 2 and out == "" and says in err and "Traceback" not in err


def test_other_usage_errors(story: tuple[Path, dict[str, str]], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = story
    assert _history(capsys, "main", str(repo), "--jobs", "0")[0] == 2
    code, _, err = _history(capsys, "main", str(repo), "--select", "nonsense")
    assert code == 2 and "unknown rule 'nonsense'" in err
    code, _, err = _history(capsys, "main", str(tmp_path / "nowhere"))
    assert code == 2 and "benchbot:" in err


def test_select_and_output_file(story: tuple[Path, dict[str, str]], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    target = tmp_path / "history.json"
    code, out, err = _history(capsys, f"{c['c0']}..main", str(repo), "--select", "missing-script", "--format",
                              "json", "--output", str(target))
    assert code == 0 and err == "" and out.startswith(f"benchbot: wrote the json report to {target}: 5 commits, ")
    assert {e["rule"] for e in json.loads(target.read_text())["root_causes"]} == {"missing-script"}


def test_parse_range() -> None:
    assert parse_range("a..b") == ("a", "b")
    assert parse_range("b") == (None, "b")
    assert parse_range("a..") == ("a", "HEAD")
    for bad in ("a...b", "..b", "-x..b", "a..-b", "a\nb"):
        with pytest.raises(ValueError):
            parse_range(bad)


# ------------------------------------------------------------------ the tracker alone


def _f(rule: str, path: str, key: str = "", related: tuple[Related, ...] = ()) -> Finding:
    return Finding(rule, "BB000", Severity.ERROR, path, 1, 1, f"{rule} at {path}", related, (), None, key)


def _c(n: int, *parents: int) -> Commit:
    return Commit(f"{n:040x}", tuple(f"{p:040x}" for p in parents), T0 + n * DAY, f"c{n}")


def test_renames_are_followed() -> None:
    """A cause whose key names a file keeps its episode when the file is renamed."""
    moves = {_c(2).sha: {"a.sh": "b.sh"}}
    t = Tracker(None, True, moves, lambda p, c: {})
    commits = [_c(1), _c(2, 1), _c(3, 2)]
    t.expect(commits)
    t.feed(commits[0], [_f("dead-script", "a.sh", "a.sh")])
    t.feed(commits[1], [_f("dead-script", "b.sh", "b.sh")])
    t.feed(commits[2], [])
    [e] = t.episodes(commits[2])
    assert e.first_bad == commits[0] and e.fixed_by == commits[2] and e.finding.path == "b.sh"


def test_a_cause_that_becomes_a_consequence_has_not_gone() -> None:
    one = _f("no-launcher", "runners/x.sh", "runners/x.sh")
    later = _f("unknown-runner-label", "configs/r.yaml", "lbl",
               (Related("runners/x.sh", 1, "stranded", "no-launcher", "runners/x.sh"),))
    commits = [_c(1), _c(2, 1), _c(3, 2)]
    t = Tracker(None, True, {}, lambda p, c: {})
    t.expect(commits)
    t.feed(commits[0], [one])
    t.feed(commits[1], [later])
    t.feed(commits[2], [])
    got = {e.finding.rule: e for e in t.episodes(commits[2])}
    assert got["no-launcher"].fixed_by == commits[2]  # not at 2, where it was the label's consequence
    assert got["unknown-runner-label"].first_bad == commits[1] and got["unknown-runner-label"].fixed_by == commits[2]


def test_a_cause_that_comes_back_is_a_second_episode() -> None:
    f = _f("dead-script", "a.sh", "a.sh")
    commits = [_c(1), _c(2, 1), _c(3, 2)]
    t = Tracker(None, True, {}, lambda p, c: {})
    t.expect(commits)
    t.feed(commits[0], [f])
    t.feed(commits[1], [])
    t.feed(commits[2], [f])
    eps = t.episodes(commits[2])
    assert [(e.first_bad, e.fixed_by) for e in eps] == [(commits[0], commits[1]), (commits[2], None)]


def test_state_of_a_commit_is_dropped_after_its_last_child() -> None:
    commits = [_c(n, n - 1) if n > 1 else _c(1) for n in range(1, 30)]
    t = Tracker(None, True, {}, lambda p, c: {})
    t.expect(commits)
    for c in commits:
        t.feed(c, [_f("dead-script", "a.sh", "a.sh")])
    assert list(t.state) == [commits[-1].sha]  # a walk of any length keeps one commit's state


def test_a_walk_finds_at_each_commit_what_a_fresh_lint_finds(story: tuple[Path, dict[str, str]]) -> None:
    """Consecutive commits share parses, loaded YAML, rendered envs and evaluations in one
    process: each still gets exactly the findings of a lint of it alone, with nothing cached."""
    from dataclasses import replace

    from bot import cache
    from bot.config import load_config
    from bot.history import lint_all
    from bot.lint import lint
    from bot.repo.cache import evalcache
    from bot.repo.files import parsed
    from bot.repo.files.git import GitTree

    repo, c = story
    shas = [c[f"c{i}"] for i in range(6)]
    walked = {got.sha: got.findings for got in lint_all(str(repo), shas, None, lambda conf: conf)}
    for sha in shas:
        parsed.reset()
        evalcache.reset()
        cache.disable()
        try:
            tree = GitTree(str(repo), sha)
            alone = [replace(f, fix=None) for f in lint(tree, load_config(tree)).findings]
        finally:
            cache.disable(False)
        assert walked[sha] == alone
        assert [(f.line, f.message, f.related) for f in walked[sha] or []] == \
            [(f.line, f.message, f.related) for f in alone]


def _episode(rule: str, path: str, line: int, key: str, entries: tuple[str, ...] = ()) -> Any:
    from bot.history import Episode

    finding = Finding(rule, "BB000", Severity.ERROR, path, line, 1, "message", entries=entries, key=key)
    return Episode(finding, Commit("a" * 40, (), T0, "brought it"), None, 1)


@pytest.mark.parametrize(("rule", "path", "line", "key", "shown"), [
    # the key names the file the cause is about: that file (a second one as +1)
    ("missing-script", "configs/amd-master.yaml", 12, "kimi-mi355x|benchmarks/x/kimi_mi355x.sh",
     "benchmarks/x/kimi_mi355x.sh"),
    ("ignored-variant", "runners/launch_a.sh", 32, "runners/launch_a.sh|mtp|${SCENARIO_SUBDIR} ${EXP_NAME%%_*}",
     "runners/launch_a.sh"),
    ("recipe-image-mismatch", "recipes/a.yaml", 5, "e-1,e-2|recipes/a.yaml,recipes/b.yaml", "recipes/a.yaml +1"),
    ("dead-script", "benchmarks/x/old.sh", 1, "benchmarks/x/old.sh", "benchmarks/x/old.sh"),
    # it names none (a search-space point, a runner label, a workflow step): where it is, path:line
    ("unused-config-field", "configs/nvidia-master.yaml", 929,
     "dsv4-fp4-b200-sglang|fixed-seq-len|ep=8|conc-end=1024,conc-start=256,dp-attn=true,tp=8",
     "configs/nvidia-master.yaml:929"),
    ("unknown-runner-label", "configs/amd-master.yaml", 1629, "cluster:mi325x-tw", "configs/amd-master.yaml:1629"),
    ("env-not-passed", ".github/workflows/e2e.yml", 463, "e2e.yml › sweep → tmpl.yml › Launch|literal|SPEC=none",
     ".github/workflows/e2e.yml:463"),
    ("config-syntax", "configs/broken.yaml", 0, "", "configs/broken.yaml"),
], ids=["missing-script", "ignored-variant", "recipe-image-mismatch", "dead-script", "unused-config-field",
        "unknown-runner-label", "env-not-passed", "no-key-no-line"])
def test_the_subject_is_a_file_a_person_knows(rule: str, path: str, line: int, key: str, shown: str) -> None:
    from bot.report.history import subject

    assert subject(_episode(rule, path, line, key)) == shown


def test_the_subject_is_never_cut_short_and_json_keeps_the_key() -> None:
    from bot.history import History
    from bot.report import history as report

    long = "benchmarks/single_node/speedbench/" + "x" * 150 + ".sh"
    point = "dsv4|fixed-seq-len|ep=8|conc-end=1024,tp=8"
    odd = _episode("unused-config-field", "configs/odd|name.yaml", 3, point, ("dsv4",))
    h = History("A..B", False, None, Commit("b" * 40, (), T0 + DAY, "end"), [],
                episodes=[_episode("dead-script", long, 1, long), odd])
    text = report.text(h)
    assert f"  {long}  " in text and "\u2026" not in text
    assert point not in text and "configs/odd|name.yaml:3" in text
    doc = json.loads(report.as_json(h))
    assert [(e["subject"], e["key"]) for e in doc["root_causes"]] == [(long, long), ("configs/odd|name.yaml:3", point)]
    # markdown: a | of a path is escaped, or the table would get one more cell
    row = next(line for line in report.as_markdown(h).splitlines() if "odd" in line)
    assert row.count(" | ") == 5 and "configs/odd\\|name.yaml:3" in row


def test_a_commit_git_cannot_read_is_reported(story: tuple[Path, dict[str, str]],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A blob gone from the object store (a damaged clone): that commit is "not linted", the
    others are, and nothing raises."""
    repo, c = story
    launcher = repo / "runners" / "launch_mi355x-amds.sh"
    text = launcher.read_text()
    launcher.write_text(text + "# a note\n")
    damaged = _commit(repo, "a note", T0 + 10 * DAY)
    launcher.write_text(text)
    _commit(repo, "no note", T0 + 11 * DAY)
    blob = _git(repo, "rev-parse", f"{damaged}:runners/launch_mi355x-amds.sh")
    obj = repo / ".git" / "objects" / blob[:2] / blob[2:]
    obj.chmod(0o644)
    obj.unlink()
    code, out, err = _history(capsys, f"{c['c5']}..main", str(repo), "--format", "json")
    assert code == 0 and "Traceback" not in err
    doc = json.loads(out)
    assert [s["commit"]["sha"] for s in doc["skipped"]] == [damaged]
    assert "git has no object" in doc["skipped"][0]["reason"]
    assert doc["linted"] == 2  # the start and the last commit
    assert [e["fixed_by"] for e in doc["root_causes"]] == [None]


def test_lint_of_a_damaged_revision_is_a_clear_error(story: tuple[Path, dict[str, str]],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo, c = story
    blob = _git(repo, "rev-parse", f"{c['c5']}:{MI300X}")
    obj = repo / ".git" / "objects" / blob[:2] / blob[2:]
    obj.chmod(0o644)
    obj.unlink()
    code = main(["lint", str(repo), "--rev", c["c5"], "--no-cache"])
    _, err = capsys.readouterr()
    assert code == 2 and f"{MI300X}: git has no object {blob}" in err and "internal error" not in err


def test_a_renamed_file_keeps_its_episode(story: tuple[Path, dict[str, str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``git mv`` of a dead script: the renames of the range (one ``git log -M``) carry its
    episode over; without them it would read as fixed at the rename and new again."""
    repo, c = story
    old = repo / "benchmarks" / "single_node" / "fixed_seq_len" / "unused_helper_run.sh"
    old.write_text("#!/usr/bin/env bash\necho nobody runs me\n")
    brought = _commit(repo, "an unused script", T0 + 10 * DAY)
    _git(repo, "mv", str(old.relative_to(repo)), "benchmarks/single_node/fixed_seq_len/unused_helper_moved.sh")
    _commit(repo, "move it", T0 + 11 * DAY)
    code, out, _ = _history(capsys, f"{c['c5']}..main", str(repo), "--format", "json")
    assert code == 0
    dead = [e for e in _episodes(out) if e["rule"] == "dead-script"]
    assert [(e["path"], e["first_bad"]["sha"], e["fixed_by"]) for e in dead] == \
        [("benchmarks/single_node/fixed_seq_len/unused_helper_moved.sh", brought, None)]
