"""spec-draft-not-allowed and spec-client-args through ``lint``, on copies of their fixture repos with
the policy or the scripts changed; the documented examples with the policy read as the bot reads it
(``load_config``); and a pull request that tries to allow its own draft (the fake GitHub)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import rules
from bot.config import load_config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, ROOT, copy_repo, git
from tests.github.conftest import PR, REPO, fake_github, pr_files, seed_pr  # noqa: F401 (fixtures)
from tests.rules.test_docs_examples import example_files

FSL = "benchmarks/single_node/fixed_seq_len/"
POLICY = ".benchbot/speculators.yml"


def _lint(repo: Path, rule: str) -> list[Finding]:
    tree = WorkTree(str(repo))
    result = lint(tree, load_config(tree))
    return [f for f in result.findings if f.rule == rule]


def _copy(tmp_path: Path, name: str, edits: dict[str, tuple[str, str]] | None = None,
          files: dict[str, str] | None = None) -> Path:
    repo = copy_repo(FIXTURES / name, tmp_path / name)
    for path, (old, new) in (edits or {}).items():
        text = (repo / path).read_text()
        assert old in text, (path, old)
        (repo / path).write_text(text.replace(old, new))
    for path, text in (files or {}).items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    return repo


# ------------------------------------------------------------------ spec-draft-not-allowed

def test_the_policy_fixture_names_entry_points_policy_and_setting(tmp_path: Path) -> None:
    found = {(f.path.rsplit("/", 1)[-1], f.line): f for f in _lint(FIXTURES / "spec-policy", "spec-draft-not-allowed")}
    draft = found[("kimik2.5_int4_mi355x_mtp.sh", 8)]  # DRAFT_MODEL=..., not the flag that expands it
    assert draft.entries == ("kimik2.5-int4-mi355x-vllm-mtp",)
    assert "tp 8, conc 4-64, isl 1024 / osl 1024" in draft.message
    assert "draft acme/kimi-k2.5-eagle3-tuned is not an allowed draft (lightseekorg/kimi-k2.5-eagle3, " \
           "nvidia/Kimi-K2.5-Thinking-Eagle3, policy line 6)" in draft.message
    assert (draft.related[0].path, draft.related[0].line) == (POLICY, 3)
    assert draft.related[1].note == "kimik2.5-int4-mi355x-vllm-mtp: spec-decoding: mtp"
    evals = found[("kimik2.5_int4_mi355x_mtp.sh", 9)]
    assert "the accuracy eval (run_eval, line 17) runs against the same server, with rejection_sample_method: " \
           "synthetic, 2.6" in evals.message and "synthetic: benchmark, policy line 7" in evals.message
    never = found[("dsr1_fp4_mi355x_mtp.sh", 9)]  # export SGLANG_SIMULATE_ACC_LEN=1.8
    assert "synthetic acceptance (SGLANG_SIMULATE_ACC_LEN=1.8)" in never.message and "synthetic: never" in never.message
    eval_only = found[("minimaxm3_fp4_mi355x_mtp.sh", 11)]  # the SPEC_CONFIG of the EVAL_ONLY branch
    assert "eval-only runs (EVAL_ONLY=true) still use rejection_sample_method: synthetic, 2.5" in eval_only.message
    assert len(found) == 4 and len({f.fingerprint for f in found.values()}) == 4


def test_one_draft_set_in_two_branches_is_one_finding_at_its_assignment(tmp_path: Path) -> None:
    script = FSL + "kimik2.5_int4_mi355x_mtp.sh"
    old = 'SPEC_CONFIG="{\\"method\\": \\"eagle3\\", \\"model\\": \\"$DRAFT_MODEL\\", \\"num_speculative_tokens\\": 3, '
    branches = ('if [ "$TP" -gt 4 ]; then\n    SPEC_CONFIG="{\\"method\\": \\"eagle3\\", \\"model\\": '
                '\\"/data/models/${DRAFT_MODEL##*/}\\", \\"num_speculative_tokens\\": 2}"\nelse\n    ' + old)
    row = "      - { tp: 8, conc-start: 4, conc-end: 64, spec-decoding: mtp }\n"
    repo = _copy(tmp_path, "spec-policy", edits={
        script: (old, branches),
        "configs/amd-master.yaml": (row, row + row.replace("tp: 8", "tp: 4"))})
    text = (repo / script).read_text()
    (repo / script).write_text(text.replace("2.6}\"\n", "2.6}\"\nfi\n", 1))
    drafts = [f for f in _lint(repo, "spec-draft-not-allowed") if "draft" in f.message and "kimik2.5" in f.path]
    [f] = drafts  # the TP 8 branch serves it from disk, the TP 4 one by hub id: one draft, one finding
    assert f.line == 8 and "tp 8" in f.message and "tp 4" in f.message


def test_no_policy_file_nothing_is_judged(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "spec-policy", tmp_path / "r")
    (repo / POLICY).unlink()
    assert _lint(repo, "spec-draft-not-allowed") == []


def test_what_a_block_does_not_say_is_not_judged(tmp_path: Path) -> None:
    repo = _copy(tmp_path, "spec-policy", files={POLICY: "models:\n  - model: '*Kimi-K2.5*'\n    mtp-layers: 0\n"
                                                          "  - model: '*DeepSeek-R1*'\n    mtp-layers: 1\n"
                                                          "  - model: '*MiniMax-M3*'\n    track: spec\n"})
    assert _lint(repo, "spec-draft-not-allowed") == []


def test_an_external_draft_on_the_main_track_is_one_finding_with_every_reason(tmp_path: Path) -> None:
    policy = "models:\n  - model: '*Kimi-K2.5*'\n    track: main\n    methods: [mtp]\n    drafts: []\n"
    repo = _copy(tmp_path, "spec-policy", files={POLICY: policy})
    [f] = [f for f in _lint(repo, "spec-draft-not-allowed") if "kimik2.5" in f.path]
    assert f.line == 8
    assert "method eagle3 is not an allowed method (mtp, policy line 4)" in f.message
    assert "draft acme/kimi-k2.5-eagle3-tuned is not an allowed draft (no external draft, policy line 5)" in f.message
    assert "external speculator on the main track, which is for native MTP only (policy line 3)" in f.message


def test_native_mtp_on_the_spec_track(tmp_path: Path) -> None:
    policy = "models:\n  - model: '*DeepSeek-R1*'\n    track: spec\n"
    repo = _copy(tmp_path, "spec-policy-clean", files={POLICY: policy})
    [f] = _lint(repo, "spec-draft-not-allowed")
    assert (f.path, f.line) == (FSL + "dsr1_fp4_mi355x_mtp.sh", 10)  # --speculative-algorithm
    assert "native MTP on the spec track, which is for external drafts (policy line 3)" in f.message


def test_synthetic_always_allows_it_everywhere_and_never_forbids_it(tmp_path: Path) -> None:
    policy = (FIXTURES / "spec-policy" / POLICY).read_text()
    allowed = _copy(tmp_path, "spec-policy", files={POLICY: policy.replace("synthetic: benchmark", "synthetic: always")
                                                    .replace("synthetic: never", "synthetic: always")})
    assert [f.line for f in _lint(allowed, "spec-draft-not-allowed")] == [8]  # the draft alone
    never = copy_repo(FIXTURES / "spec-policy", tmp_path / "never")
    (never / POLICY).write_text(policy.replace("synthetic: benchmark", "synthetic: never"))
    lines = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in _lint(never, "spec-draft-not-allowed"))
    # the benchmark run's synthetic acceptance itself now (MiniMax: in the else branch, line 13)
    assert lines == [("dsr1_fp4_mi355x_mtp.sh", 9), ("kimik2.5_int4_mi355x_mtp.sh", 8),
                     ("kimik2.5_int4_mi355x_mtp.sh", 9), ("minimaxm3_fp4_mi355x_mtp.sh", 13)]


def test_an_eval_only_run_without_synthetic_acceptance_is_clean_and_evaluated_once(tmp_path: Path) -> None:
    tree = WorkTree(str(FIXTURES / "spec-policy-clean"))
    result = lint(tree, load_config(tree), honoured=lambda _: True)  # not from the lint cache: its facts
    assert [f for f in result.findings if f.rule == "spec-draft-not-allowed"] == []
    memo = result.facts.memo
    evaluated = [s for s in (*memo.get("spec.eval.synthetic", {}).values(), *memo.get("spec.eval", {}).values())
                 if s is not None]
    assert [s.entry.name for s in evaluated] == ["minimaxm3-fp4-mi355x-vllm-mtp"]  # the only synthetic site
    server = evaluated[0].server
    assert server is not None and server.spec is not None and server.spec["rejection_sample_method"] is None


def test_the_server_model_is_matched_when_the_entry_model_is_not(tmp_path: Path) -> None:
    script = FSL + "dsr1_fp4_mi355x_mtp.sh"
    repo = _copy(tmp_path, "spec-policy", edits={script: ('--model-path "$MODEL"', "--model-path /models/R1-local")},
                 files={POLICY: "models:\n  - model: '/models/r1-*'\n    synthetic: never\n"})
    [f] = _lint(repo, "spec-draft-not-allowed")
    assert (f.path, f.line) == (script, 9) and "the policy for /models/r1-*" in f.message


# ------------------------------------------------------------------ spec-client-args

def test_the_client_fixture_names_each_call_once(tmp_path: Path) -> None:
    found = _lint(FIXTURES / "spec-client", "spec-client-args")
    by = {(f.path.rsplit("/", 1)[-1], f.line): f for f in found}
    assert set(by) == {("dsr1_fp4_mi355x_mtp.sh", 14), ("dsr1_fp4_mi355x_mtp.sh", 15),
                       ("qwen3.5_fp8_mi355x_mtp.sh", 21)}
    wrapped = by[("qwen3.5_fp8_mi355x_mtp.sh", 21)]  # bench "${CLIENT_ARGS[@]}", not the chat-formatted warm-up
    assert "the call of bench here (it runs run_benchmark_serving, line 14) passes none of --use-chat-template, " \
           "--dsv4, which benchbot's default requires in speculative runs" in wrapped.message
    agentic = next(f for f in found if "/agentic/" in f.path)
    assert "passes no --apply-chat-template, which .benchbot/speculators.yml (client-args) requires" in agentic.message
    assert (agentic.related[0].path, agentic.related[0].note) == (
        POLICY, "the requirement: client-args of run_agentic_replay_and_write_outputs")
    assert all(f.entries and "spec-decoding: mtp" in f.message for f in found)


def test_a_policy_can_drop_the_default_or_require_more(tmp_path: Path) -> None:
    off = _copy(tmp_path, "spec-client", files={POLICY: "client-args:\n  run_benchmark_serving:\n    require: []\n"})
    assert _lint(off, "spec-client-args") == []  # (this policy requires nothing of the agentic client either)
    more = _copy(tmp_path, "spec-client-clean", files={
        POLICY: "client-args:\n  run_benchmark_serving:\n    require: [[--use-chat-template, --dsv4], --seed]\n"})
    found = _lint(more, "spec-client-args")
    assert len(found) == 3 and all("passes no --seed" in f.message for f in found)  # qwen3.5: warm-up and run
    assert not any("chat" in f.message.split("passes", 1)[1] for f in found)


@pytest.mark.parametrize("call", [
    'run_benchmark_serving --model "$MODEL" --dsv4',  # implies the chat template
    'run_benchmark_serving --model "$MODEL" $CHAT',  # CHAT=--use-chat-template below
    'run_benchmark_serving --model "$MODEL" ${CHAT_ON:+--use-chat-template}',
    'run_benchmark_serving --model "$MODEL" $(client_flags)',  # what a command prints: the repo cannot know
    'run_benchmark_serving --model "$MODEL" "$(client_flag)"',
    'run_benchmark_serving --model "$MODEL" --use-chat-template=true',
])
def test_arguments_that_reach_the_call(tmp_path: Path, call: str) -> None:
    script = FSL + "dsr1_fp4_mi355x_mtp.sh"
    old = ('run_benchmark_serving --model "$MODEL" --port "$PORT" --input-len "$ISL" --output-len "$OSL" \\\n'
           '    --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME"')
    repo = _copy(tmp_path, "spec-client", edits={script: (old, f"CHAT=--use-chat-template\n{call}")})
    assert [f for f in _lint(repo, "spec-client-args") if f.path == script] == []


def test_what_the_repository_cannot_know_inside_a_quoted_path_is_no_argument(tmp_path: Path) -> None:
    script = FSL + "dsr1_fp4_mi355x_mtp.sh"
    old = '--result-filename "$RESULT_FILENAME"'
    repo = _copy(tmp_path, "spec-client", edits={script: (old, '--result-dir "$OUT"')})
    text = (repo / script).read_text().replace('PORT="${PORT:-8888}"', 'PORT="${PORT:-8888}"\nOUT="$(pwd)/results"')
    (repo / script).write_text(text)
    assert [f.line for f in _lint(repo, "spec-client-args") if f.path == script] == [15]


def test_an_argument_the_launcher_hands_the_script_reaches_it(tmp_path: Path) -> None:
    script = FSL + "dsr1_fp4_mi355x_mtp.sh"
    repo = _copy(tmp_path, "spec-client", edits={
        script: ('--result-filename "$RESULT_FILENAME"', '--result-filename "$RESULT_FILENAME" $CLIENT_EXTRA'),
        "runners/launch_mi355x-amds.sh": ("-e PORT=8888", "-e PORT=8888 -e CLIENT_EXTRA=--use-chat-template")})
    assert [f for f in _lint(repo, "spec-client-args") if f.path == script] == []
    unset = _copy(tmp_path / "u", "spec-client", edits={
        script: ('--result-filename "$RESULT_FILENAME"', '--result-filename "$RESULT_FILENAME" $CLIENT_EXTRA')})
    assert [f.line for f in _lint(unset, "spec-client-args") if f.path == script] == [14]


def test_a_wrapper_never_called_and_a_script_without_a_client_are_not_judged(tmp_path: Path) -> None:
    script = FSL + "qwen3.5_fp8_mi355x_mtp.sh"
    text = (FIXTURES / "spec-client" / script).read_text()
    head = text[:text.index("wait_for_server")]
    repo = _copy(tmp_path, "spec-client", files={script: head + 'wait_for_server "$PORT"\n'})
    assert [f for f in _lint(repo, "spec-client-args") if f.path == script] == []


# ------------------------------------------------------------------ documented examples

@pytest.mark.parametrize("rule_id", ["spec-client-args", "spec-draft-not-allowed"])
def test_the_documented_example_with_the_policy_read_as_the_bot_reads_it(tmp_path: Path, rule_id: str) -> None:
    repo = copy_repo(ROOT / "tests" / "docs_base", tmp_path / "repo")
    for path, content in example_files(rules.RULES[rule_id].__doc__ or "").items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(content, encoding="utf-8")
    tree = WorkTree(str(repo))
    assert {f.rule for f in lint(tree, load_config(tree)).findings} == {rule_id}


# ------------------------------------------------------------------ pull requests: the base's policy

def test_a_pull_request_cannot_allow_its_own_draft(seed_pr: PR) -> None:  # noqa: F811
    """main: the seed and a policy allowing one Kimi-K2.5 draft. The PR swaps the MI355X script's
    draft for another and adds that draft to the policy: the review obeys main's policy."""
    repo = seed_pr.repo
    git(repo, "checkout", "-q", "-B", "main", seed_pr.head)
    (repo / ".benchbot").mkdir()
    allow = "models:\n  - model: '*Kimi-K2.5*'\n    track: spec\n    drafts: [lightseekorg/kimi-k2.5-eagle3]\n"
    (repo / POLICY).write_text(allow)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "speculator policy")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "tuned-draft")
    script = repo / FSL / "kimik2.5_int4_mi355x_mtp.sh"
    script.write_text(script.read_text().replace("lightseekorg/kimi-k2.5-eagle3", "acme/kimi-k2.5-eagle3-tuned"))
    (repo / POLICY).write_text(allow.replace("]", ", acme/kimi-k2.5-eagle3-tuned]"))
    git(repo, "commit", "-qam", "mi355x: the tuned draft")
    head = git(repo, "rev-parse", "HEAD").strip()
    seed_pr.gh.add_pull(REPO, number=11, head_sha=head, base_sha=base, head_ref="tuned-draft", base_ref="main",
                        user="alice", title="tuned draft", files=pr_files(repo, base, head))
    seed_pr.number, seed_pr.base, seed_pr.head = 11, base, head
    assert _lint(repo, "spec-draft-not-allowed") == []  # what the PR's own policy would say
    code, summary = seed_pr.run("opened")
    assert code == 1  # the seed's own bug is on main already: this is the PR's only new finding
    bodies = [c["body"] for c in seed_pr.gh.review_comments(REPO, 11)]
    [hit] = [b for b in bodies if "spec-draft-not-allowed" in b]
    assert "acme/kimi-k2.5-eagle3-tuned" in hit
    # what the PR changes in the policy is shown, not obeyed
    assert "| `speculators.models` | `[*Kimi-K2.5*: track spec, drafts [lightseekorg/kimi-k2.5-eagle3]]` | " \
           "`[*Kimi-K2.5*: track spec, drafts [lightseekorg/kimi-k2.5-eagle3, acme/kimi-k2.5-eagle3-tuned]]` |" \
        in summary
