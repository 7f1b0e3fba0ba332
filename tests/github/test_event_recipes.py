"""Recipe parity on pull requests, end to end (``python -m bot event``, the real PyGithub stack,
the fake GitHub serving both the pull request and the recipe repositories): a PR that changes
an SGLang MTP entry gets a "Recipe parity" section in its one summary comment, in place of the
reminder; the next run edits that comment; a recipe repository that cannot be read is a note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fakegithub import FakeGitHub
from fakegithub.contents import add_files, rate_limit

from tests.conftest import FIXTURES, git
from tests.github.conftest import PR, REPO, pr_files

FIXTURE = FIXTURES / "recipe-parity-clean"
MTP_SCRIPT = "benchmarks/single_node/fixed_seq_len/widget3_fp8_b200_mtp.sh"
CONFIG = """\
github:
  recipe-reminder: Please compare the serve command with the official vLLM recipe / SGLang cookbook.
recipes:
  vllm: {repo: vllm-project/recipes, ref: main}
  sglang: {repo: sgl-project/sglang}
"""


def _collection(kind: str) -> dict[str, str]:
    """The fixture's in-repo recipes as the upstream repository lays them out."""
    root = FIXTURE / "recipes"
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_file() and (rel.startswith("docs_new/") == (kind == "sglang")):
            out[rel] = p.read_text()
    return out


@pytest.fixture
def parity_pr(tmp_path: Path, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> PR:
    """Base: the clean fixture (without its in-repo recipes; the base config names the GitHub
    repositories). The PR drafts 2 steps / 3 tokens where the cookbook drafts 3 / 4."""
    fake_github.add_repo("vllm-project/recipes", default_branch="main")
    fake_github.add_repo("sgl-project/sglang", default_branch="main")
    add_files(fake_github, "vllm-project/recipes", _collection("vllm"))
    add_files(fake_github, "sgl-project/sglang", _collection("sglang"))
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    shutil.rmtree(repo / "recipes")
    (repo / ".benchbot.yml").write_text(CONFIG)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "widget-steps")
    script = repo / MTP_SCRIPT
    script.write_text(script.read_text().replace("--speculative-num-steps 3", "--speculative-num-steps 2")
                      .replace("--speculative-num-draft-tokens 4", "--speculative-num-draft-tokens 3"))
    git(repo, "commit", "-q", "-am", "widget3 MTP: 2 steps")
    head = git(repo, "rev-parse", "HEAD").strip()
    fake_github.add_pull(REPO, number=21, head_sha=head, base_sha=base, head_ref="widget-steps", base_ref="main",
                         user="alice", title="widget3 MTP: 2 steps", files=pr_files(repo, base, head))
    monkeypatch.setenv("BENCHBOT_RECIPES_API_URL", fake_github.api_url)
    return PR(fake_github, repo, 21, base, head, tmp_path, monkeypatch)


def _summaries(pr: PR) -> list[str]:
    return [str(c["body"]) for c in pr.gh.issue_comments(REPO, pr.number) if "benchbot:summary" in str(c["body"])]


def _section(summary: str) -> str:
    assert "### Recipe parity" in summary, summary
    return summary.split("### Recipe parity", 1)[1].split("\n---\n", 1)[0]


def test_a_changed_sglang_mtp_entry_gets_the_parity_section_once(parity_pr: PR) -> None:
    code, _ = parity_pr.run("opened")
    [summary] = _summaries(parity_pr)
    got = _section(summary)
    assert "**`widget3-fp8-b200-sglang-mtp`**" in got
    sha = parity_pr.gh.state.repo("sgl-project/sglang").default_sha
    assert (f"compared with sgl-project/sglang `docs_new/src/snippets/configs/acme/widget3.jsx` @ `{sha[:12]}` "
            "(hw=b200, variant=100b, quant=fp8, strategy=low-latency, nodes=single)") in got
    assert "2 MAJOR, 0 other" in got
    assert ("| `speculative_num_steps` | MAJOR-spec | value-differs | `2` | `3` | "
            f"[`{MTP_SCRIPT}:5`]") in got
    assert "| `speculative_num_draft_tokens` | MAJOR-spec | value-differs | `3` | `4` |" in got
    # the only entry the PR changes found its recipe: the answer replaces the reminder
    assert "Recipe reminder" not in summary
    # the finding is the PR's: recipe-mismatch at the entry, new in this pull request
    assert "recipe-mismatch" in summary and code == 1
    # the next run (a new commit) edits the one summary: never a second one
    script = parity_pr.repo / MTP_SCRIPT
    script.write_text(script.read_text().replace("--speculative-num-draft-tokens 3",
                                                 "--speculative-num-draft-tokens 4"))
    parity_pr.commit("widget3 MTP: 4 draft tokens")
    parity_pr.run("synchronize")
    [summary] = _summaries(parity_pr)
    got = _section(summary)
    assert "1 MAJOR, 0 other" in got
    assert "speculative_num_draft_tokens" not in got
    assert summary.count("### Recipe parity") == 1


def test_an_unreachable_recipe_repository_is_a_note_and_the_reminder_stays(parity_pr: PR) -> None:
    parity_pr.monkeypatch.setenv("BENCHBOT_NO_CACHE", "1")  # no copy kept by an earlier run to fall back on
    rate_limit(parity_pr.gh, True, status=403, repos=("vllm-project/recipes", "sgl-project/sglang"))
    try:
        code, _ = parity_pr.run("opened")
    finally:
        rate_limit(parity_pr.gh, False)
    [summary] = _summaries(parity_pr)
    assert "> **Recipe parity** not checked:" in summary
    assert "rate limit" in summary.lower()
    assert "> **Recipe reminder**" in summary  # nothing was compared: the reminder stays
    assert code == 0  # no recipe-mismatch finding without a recipe; the PR is otherwise clean


def test_without_a_recipes_section_nothing_is_fetched(parity_pr: PR) -> None:
    git(parity_pr.repo, "checkout", "-q", "main")
    (parity_pr.repo / ".benchbot.yml").write_text(CONFIG.split("recipes:")[0])
    git(parity_pr.repo, "commit", "-q", "-am", "no recipes section")
    base = git(parity_pr.repo, "rev-parse", "HEAD").strip()
    git(parity_pr.repo, "checkout", "-q", "widget-steps")
    git(parity_pr.repo, "merge", "-q", "--no-edit", "main")
    head = git(parity_pr.repo, "rev-parse", "HEAD").strip()
    parity_pr.gh.add_pull(REPO, number=22, head_sha=head, base_sha=base, head_ref="widget-steps", base_ref="main",
                          user="alice", title="t", files=pr_files(parity_pr.repo, base, head))
    parity_pr.number, parity_pr.base, parity_pr.head = 22, base, head
    # a fetch would fail loudly; none happens
    rate_limit(parity_pr.gh, True, status=403, repos=("vllm-project/recipes", "sgl-project/sglang"))
    try:
        parity_pr.run("opened")
    finally:
        rate_limit(parity_pr.gh, False)
    [summary] = _summaries(parity_pr)
    assert "Recipe parity" not in summary and "> **Recipe reminder**" in summary
    assert json.dumps(summary).count("recipe-mismatch") == 0
