"""changelog-missing on real git repos: the seed with its perf-changelog.yaml, a base commit
and a head commit, linted through check_change (the function the PR review calls)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import Config, load_config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.git import GitTree
from bot.repo.load import changelog as cl
from bot.rules.changelog_missing import ID, check_change
from tests.conftest import EXAMPLE, git
from tests.github.conftest import MTP_ENTRIES, MTP_SCRIPTS, without_entries

LOG = "perf-changelog.yaml"
SEED_LOG = Path(__file__).parent / "data" / LOG  # the seed's changelog (its first two PRs)
MI300X_LAUNCHER = "runners/launch_mi300x-amds.sh"


def _repo(tmp: Path) -> tuple[Path, str]:
    repo = tmp / "repo"
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    shutil.copy(SEED_LOG, repo / LOG)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def _commit(repo: Path) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return git(repo, "rev-parse", "HEAD").strip()


def _check(repo: Path, base: str, head: str, conf: Config | None = None) -> list[Finding]:
    bt, ht = GitTree(str(repo), base), GitTree(str(repo), head)
    conf = conf or load_config(bt)
    return check_change(bt, ht, lint(bt, conf).facts, lint(ht, conf).facts, conf)


def _append(repo: Path, text: str) -> None:
    with open(repo / LOG, "a", encoding="utf-8", newline="") as fh:
        fh.write(text)


def _entry(*keys: str) -> str:
    return "\n- config-keys:\n" + "".join(f"    - {k}\n" for k in keys) + \
        '  description:\n    - "x"\n  pr-link: https://github.com/acme/bench/pull/9\n'


def _seed_pr(tmp: Path) -> tuple[Path, str, str]:
    """The seed PR: the base lacks the mi300x/mi325x MTP entries and scripts; the head adds them."""
    repo = tmp / "repo"
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    shutil.copy(SEED_LOG, repo / LOG)
    saved = {p: (repo / p).read_text() for p in (*MTP_SCRIPTS, "configs/amd-master.yaml")}
    for p in MTP_SCRIPTS:
        (repo / p).unlink()
    (repo / "configs/amd-master.yaml").write_text(without_entries(saved["configs/amd-master.yaml"], MTP_ENTRIES))
    git(repo, "init", "-q", "-b", "main")
    base = _commit(repo)
    for p, text in saved.items():
        (repo / p).write_text(text)
    return repo, base, _commit(repo)


def test_new_entries_without_a_changelog_entry_are_reported_on_their_lines(tmp_path: Path) -> None:
    repo, base, head = _seed_pr(tmp_path)
    found = _check(repo, base, head)
    assert [(f.rule, f.path, f.line, f.entries) for f in found] == [
        (ID, "configs/amd-master.yaml", 20, ("kimik2.5-int4-mi300x-vllm-mtp",)),
        (ID, "configs/amd-master.yaml", 58, ("kimik2.5-int4-mi325x-vllm-mtp",))]
    assert "adds kimik2.5-int4-mi300x-vllm-mtp" in found[0].message
    assert found[0].related[0].path == LOG
    # stable subject: no line number in the fingerprint
    assert found[0].key == f"{LOG}|kimik2.5-int4-mi300x-vllm-mtp"


def test_the_fix_is_a_one_line_description_and_a_diff_that_appends_the_entry(tmp_path: Path) -> None:
    repo, base, head = _seed_pr(tmp_path)
    fix = _check(repo, base, head)[0].fix
    assert fix is not None and "\n" not in fix.description and len(fix.description) < 120
    assert fix.description == ("Append an entry for kimik2.5-int4-mi300x-vllm-mtp to the end of perf-changelog.yaml "
                               "(then write its description)")
    added = [ln[1:] for ln in fix.diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    # after one empty line; the pull request is not known here: the repo's own link, numbered XXX
    assert added == ["", "- config-keys:", "    - kimik2.5-int4-mi300x-vllm-mtp", "  description:",
                     '    - "What changed and why"', "  pr-link: https://github.com/acme/bench/pull/XXX"]
    assert not [ln for ln in fix.diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    (tmp_path / "fix.diff").write_text(fix.diff)
    git(repo, "apply", "--check", str(tmp_path / "fix.diff"))  # it applies to the head
    # the appended entry covers the entry: the rule is satisfied by its own fix
    git(repo, "apply", str(tmp_path / "fix.diff"))
    assert [f.entries for f in _check(repo, base, _commit(repo))] == [("kimik2.5-int4-mi325x-vllm-mtp",)]


def test_the_pr_bot_gives_the_pull_requests_link_and_a_repo_without_links_a_placeholder(tmp_path: Path) -> None:
    repo, base, head = _seed_pr(tmp_path)
    bt, ht = GitTree(str(repo), base), GitTree(str(repo), head)
    conf = load_config(bt)
    found = check_change(bt, ht, lint(bt, conf).facts, lint(ht, conf).facts, conf,
                         pr_link="https://github.com/acme/bench/pull/41")
    assert found[0].fix is not None and "+  pr-link: https://github.com/acme/bench/pull/41\n" in found[0].fix.diff
    assert found[0].fingerprint == _check(repo, base, head)[0].fingerprint  # the link is not the subject
    assert cl.link_placeholder(cl.read(LOG, b"- config-keys: [a]\n  pr-link: see #12\n", "config-keys")) == \
        "https://github.com/OWNER/REPO/pull/XXX"


def test_a_matching_new_entry_by_name_and_by_glob_covers_them(tmp_path: Path) -> None:
    repo, base, _ = _seed_pr(tmp_path)
    _append(repo, _entry("kimik2.5-int4-mi300x-vllm-mtp", "kimik2.5-*-mi325x-*-mtp"))
    assert _check(repo, base, _commit(repo)) == []


def test_an_old_entry_does_not_cover_and_a_non_matching_glob_does_not(tmp_path: Path) -> None:
    repo, base, _ = _seed_pr(tmp_path)
    _append(repo, _entry("kimik2.5-int4-mi300x-vllm-mtp", "kimik2.5-int4-mi325x"))  # no * : exact only
    found = _check(repo, base, _commit(repo))
    assert sorted((f.line, f.path) for f in found) == [(15, LOG), (58, "configs/amd-master.yaml")]
    assert "'kimik2.5-int4-mi325x' of a new" in next(f for f in found if f.path == LOG).message


def test_a_changed_script_two_entries_run_is_one_finding_listing_both(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    launcher = repo / MI300X_LAUNCHER
    lines = launcher.read_text().splitlines(keepends=True)
    lines.insert(3, "export NCCL_MIN_NCHANNELS=112\n")
    launcher.write_text("".join(lines))
    found = _check(repo, base, _commit(repo))
    assert len(found) == 1
    f = found[0]
    assert (f.path, f.line) == (MI300X_LAUNCHER, 4)
    assert f.entries == ("kimik2.5-int4-mi300x-vllm", "kimik2.5-int4-mi300x-vllm-mtp")
    assert {r.path for r in f.related} == {LOG, "configs/amd-master.yaml"}
    assert f.key == f"{LOG}|{MI300X_LAUNCHER}"
    # a launcher is shared: a new changelog entry naming one entry it runs documents the change
    _append(repo, _entry("kimik2.5-int4-mi300x-vllm"))
    assert _check(repo, base, _commit(repo)) == []


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    text = (repo / path).read_text()
    assert old in text, old
    (repo / path).write_text(text.replace(old, new, 1))


SCRIPT = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh"


def test_comment_and_layout_changes_to_a_launcher_or_script_need_no_entry(tmp_path: Path) -> None:
    """InferenceX #2561: three `# ...` lines edited in benchmark scripts got three findings. A change
    whose statements parse the same (comments, blank lines, indentation, spacing, line continuations)
    cannot change a benchmark."""
    repo, base = _repo(tmp_path)
    _edit(repo, MI300X_LAUNCHER, "# MI300X (AMD cluster)", "# MI300X (the AMD cluster)")
    _edit(repo, MI300X_LAUNCHER, 'PARTITION="compute"\n', '\n  PARTITION="compute"   # the queue\n\n')
    _edit(repo, MI300X_LAUNCHER, "--time=180 --no-shell \\\n    --job-name", "--time=180   --no-shell --job-name")
    _edit(repo, SCRIPT, "#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n# a new comment\n\n")
    assert _check(repo, base, _commit(repo)) == []
    # a real change after the comment edits is reported at its own line, not at the first edited comment
    _edit(repo, MI300X_LAUNCHER, "--time=180", "--time=240")
    [f] = _check(repo, base, _commit(repo))
    lines = (repo / MI300X_LAUNCHER).read_text().splitlines()
    assert f.path == MI300X_LAUNCHER and "--time=240" in lines[f.line - 1], (f.line, lines[f.line - 1])
    assert f.key == f"{LOG}|{MI300X_LAUNCHER}"


def test_a_changed_shebang_or_heredoc_text_is_a_change(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    _edit(repo, SCRIPT, "#!/usr/bin/env bash\n", "#!/bin/sh\n")
    assert [(f.path, f.line) for f in _check(repo, base, _commit(repo))] == [(SCRIPT, 1)]


def test_config_comment_and_layout_changes_need_no_entry(tmp_path: Path) -> None:
    """Entries are compared as loaded data (this held before the script comparison too)."""
    repo, base = _repo(tmp_path)
    cfg = "configs/amd-master.yaml"
    text = (repo / cfg).read_text()
    (repo / cfg).write_text("# the AMD entries\n" + text.replace("\n\n", "\n\n# next entry\n\n", 1))
    assert _check(repo, base, _commit(repo)) == []


def test_removed_entries_and_an_untouched_tree_need_nothing(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    cfg = repo / "configs/amd-master.yaml"
    cfg.write_text(without_entries(cfg.read_text(), ("kimik2.5-int4-mi355x-vllm-mtp",)))
    (repo / "README.md").write_text("docs only\n")
    assert _check(repo, base, _commit(repo)) == []


def test_a_pure_append_is_fine_and_an_edited_old_line_is_reported_there(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    _append(repo, _entry("kimik2.5-int4-mi300x-vllm"))
    assert _check(repo, base, _commit(repo)) == []
    text = (repo / LOG).read_text()
    (repo / LOG).write_text(text.replace('"MTP on MI355X"', '"MTP on MI355X (edited)"'))
    found = _check(repo, base, _commit(repo))
    assert [(f.path, f.line) for f in found] == [(LOG, 10)]
    assert "append-only" in found[0].message and "edits line 10" in found[0].message


def test_a_deleted_old_line_names_the_base_line(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    lines = (repo / LOG).read_text().splitlines(keepends=True)
    del lines[3]
    (repo / LOG).write_text("".join(lines))
    found = _check(repo, base, _commit(repo))
    assert [(f.line, "deletes line 4 of the base" in f.message) for f in found] == [(4, True)]
    assert "which the CI gate rejects" in found[0].message


def _mode(repo: Path, base: str, mode: str) -> Config:
    from dataclasses import replace

    conf = load_config(GitTree(str(repo), base))
    return replace(conf, profile=replace(conf.profile, changelog_append=mode))


def test_an_entry_inserted_before_the_end_is_reported_only_under_changelog_append_tail(tmp_path: Path) -> None:
    """InferenceX's CI gate (utils/process_changelog.py) rejects lines `git diff` removes, no more:
    the default profile (no-deletions) matches it; `tail` is its AGENTS.md convention."""
    repo, base = _repo(tmp_path)
    text = (repo / LOG).read_text()
    first, second = text.split("\n\n")
    (repo / LOG).write_text(first + "\n" + _entry("kimik2.5-int4-mi300x-vllm") + "\n" + second)
    head = _commit(repo)
    assert _check(repo, base, head) == []  # the default: no-deletions
    assert _check(repo, base, head, _mode(repo, base, "no-deletions")) == []
    [f] = _check(repo, base, head, _mode(repo, base, "tail"))
    assert (f.path, f.line) == (LOG, 8) and "inserts lines before line 8 of the base" in f.message
    assert "changelog-append: tail" in f.message and "rejects only deleted lines" in f.message
    # what is inserted is byte-checked like what is appended
    (repo / LOG).write_text(first + "\n" + _entry("kimik2.5-int4-mi300x-vllm").replace('"x"', '"x\ty"')
                            + "\n" + second)
    assert [(f.line, "a tab" in f.message) for f in _check(repo, base, _commit(repo))] == [(10, True)]
    # a deleted blank line: the gate lets it through; tail does not
    (repo / LOG).write_text(text.replace("\n\n", "\n", 1))
    head = _commit(repo)
    assert _check(repo, base, head) == []
    assert [f.line for f in _check(repo, base, head, _mode(repo, base, "tail"))] == [6]


def test_profile_reads_changelog_append() -> None:
    from bot.repo.env.profile import Profile, profile_from_config

    assert Profile().changelog_append == "no-deletions"
    assert profile_from_config({"changelog-append": "tail"}).changelog_append == "tail"
    with pytest.raises(ValueError, match="changelog-append"):
        profile_from_config({"changelog-append": "anywhere"})


def test_a_pr_link_correction_is_allowed(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    text = (repo / LOG).read_text()
    (repo / LOG).write_text(text.replace("pull/2\n", "pull/3\n"))
    assert _check(repo, base, _commit(repo)) == []


def test_trailing_newline_and_crlf_changes_are_findings(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    raw = (repo / LOG).read_bytes()
    (repo / LOG).write_bytes(raw.rstrip(b"\n"))
    found = _check(repo, base, _commit(repo))
    assert [(f.line, f.key.split("|")[1]) for f in found] == [(11, "append-only")]
    (repo / LOG).write_bytes(raw.replace(b"\n", b"\r\n"))
    found = _check(repo, base, _commit(repo))
    assert [f.line for f in found] == [1]
    (repo / LOG).write_bytes(raw + _entry("kimik2.5-int4-mi300x-vllm").replace("\n", "\r\n").encode())
    found = _check(repo, base, _commit(repo))
    assert [(f.line, "CR" in f.message) for f in found] == [(12, True)]


def test_an_unparsable_head_changelog_is_a_finding_with_its_line(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    _append(repo, "\n- config-keys: [unclosed\n")
    found = _check(repo, base, _commit(repo))
    parse = [f for f in found if "does not parse" in f.message]
    assert len(parse) == 1 and parse[0].path == LOG and parse[0].line >= 12


def test_profile_off_no_base_changelog_and_disabled_rule_give_nothing(tmp_path: Path) -> None:
    repo, base, head = _seed_pr(tmp_path)
    bt = GitTree(str(repo), base)
    conf = load_config(bt)
    from dataclasses import replace

    for c in (replace(conf, profile=replace(conf.profile, changelog="")), replace(conf, ignore=frozenset({ID})),
              replace(conf, per_path_ignores=(("configs/*", frozenset({ID})),))):
        assert _check(repo, base, head, c) == []
    git(repo, "checkout", "-q", "-b", "nolog", base)
    (repo / LOG).unlink()
    base2 = _commit(repo)
    assert _check(repo, base2, head) == []


def test_profile_from_config_reads_the_changelog_keys() -> None:
    from bot.repo.env.profile import profile_from_config

    p = profile_from_config({"changelog": None, "changelog-key": "keys"})
    assert (p.changelog, p.changelog_key) == ("", "keys")
    assert profile_from_config({"changelog": "logs/perf.yaml"}).changelog == "logs/perf.yaml"


def test_glob_matching_is_the_gates() -> None:
    assert cl.glob_match("dsr1*", "dsr1-fp8-b200-sglang")
    assert cl.glob_match("*-b200-*", "dsr1-fp8-b200-sglang")
    assert not cl.glob_match("dsr1?fp8*", "dsr1-fp8-x")  # ? is literal
    assert not cl.glob_match("dsr1", "dsr1-fp8")  # no *: the whole name
    assert not cl.glob_match("*a*a*a*a*a*a*a*b", "a" * 200)  # linear, no backtracking blow-up
