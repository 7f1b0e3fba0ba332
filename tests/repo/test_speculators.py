"""The speculator policy: read with the bot's configuration from the same tree (a work tree, a git
revision), validated by schemas/speculators.schema.json with file:line:col errors (exit 2), and
the facts the rules ask of it (the block of a model, an allowed draft, the client arguments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_config
from bot.repo.env.profile import Profile
from bot.repo.files.git import GitTree
from bot.repo.files.tree import WorkTree
from bot.repo.load.speculators import PolicyError, client_requirements, parse_policy
from tests.conftest import ROOT, git

POLICY = """\
# the repo's speculators
models:
  - model: "*Kimi-K2.5*"
    track: spec
    methods: [eagle3]
    drafts: [lightseekorg/kimi-k2.5-eagle3, "nvidia/Kimi-K2.5-Thinking-Eagle3"]
    synthetic: benchmark
  - model: "*MiMo-V2.5*"
    mtp-layers: 3
    source: model card
client-args:
  run_agentic_replay_and_write_outputs:
    require: [--apply-chat-template, [--x, --y]]
"""


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    repo.mkdir(exist_ok=True)
    return repo


def test_the_policy_is_read_into_blocks_with_what_each_says() -> None:
    p = parse_policy(".benchbot/speculators.yml", POLICY)
    kimi, mimo = p.models
    assert (kimi.pattern, kimi.line, kimi.track, kimi.methods, kimi.synthetic) == \
        ("*Kimi-K2.5*", 3, "spec", ("eagle3",), "benchmark")
    assert kimi.drafts == ("lightseekorg/kimi-k2.5-eagle3", "nvidia/Kimi-K2.5-Thinking-Eagle3")
    assert kimi.says == {"model", "track", "methods", "drafts", "synthetic"}
    assert kimi.line_of("drafts") == 6 and kimi.line_of("mtp-layers") == 3
    assert (mimo.mtp_layers, mimo.source) == (3, "model card")
    assert mimo.says == frozenset({"model", "mtp-layers", "source"})
    assert p.client_args == {"run_agentic_replay_and_write_outputs": (("--apply-chat-template",), ("--x", "--y"))}
    assert str(kimi) == ("*Kimi-K2.5*: track spec, methods [eagle3], drafts [lightseekorg/kimi-k2.5-eagle3, "
                         "nvidia/Kimi-K2.5-Thinking-Eagle3], synthetic benchmark")
    assert str(mimo) == "*MiMo-V2.5*: mtp-layers 3 (model card)"
    assert str(p) == ".benchbot/speculators.yml: 2 model blocks, client-args for run_agentic_replay_and_write_outputs"


def test_the_first_matching_block_wins_case_insensitively() -> None:
    p = parse_policy("p.yml", "models:\n  - model: '*glm-5.[0-9]*'\n  - model: '*GLM-5*'\n")
    assert p.for_model("zai-org/GLM-5.2-FP8") is p.models[0]
    assert p.for_model("zai-org/GLM-5-FP8") is p.models[1]
    assert p.for_model("moonshotai/Kimi-K2.5") is None


@pytest.mark.parametrize(("draft", "allowed"), [
    ("lightseekorg/kimi-k2.5-eagle3", True),
    ("LightSeekOrg/Kimi-K2.5-EAGLE3", True),  # hub ids are case-insensitive
    ("nvidia/Kimi-K2.5-Thinking-Eagle3", True),
    ("/data/models/kimi-k2.5-eagle3", True),  # a local copy: its folder name
    ("/data/models/kimi-k2.5-eagle3/", True),
    ("acme/kimi-k2.5-eagle3", False),  # another org's checkpoint of the same name is another draft
    ("lightseekorg/kimi-k2.5-eagle3-mla", False),
    ("/data/models/kimi-k2.5-eagle3-tuned", False),
])
def test_a_draft_is_allowed_by_hub_id_or_by_the_folder_name_of_a_local_copy(draft: str, allowed: bool) -> None:
    kimi = parse_policy("p.yml", POLICY).models[0]
    assert kimi.allows_draft(draft) is allowed


def test_draft_globs() -> None:
    block = parse_policy("p.yml", "models:\n  - model: x\n    drafts: ['Inferact/MiniMax-M3-EAGLE3*']\n").models[0]
    assert block.allows_draft("Inferact/MiniMax-M3-EAGLE3-GQA")
    assert block.allows_draft("/scratch/models/MiniMax-M3-EAGLE3-GQA")
    assert not block.allows_draft("Inferact/MiniMax-M3-MTP")


@pytest.mark.parametrize(("text", "error"), [
    ("models:\n  - model: x\n    track: sideways\n",
     "p.yml:3:12: models[0].track is 'sideways'; expected one of: 'main', 'spec'"),
    ("models:\n  - track: main\n", "p.yml:2:5: missing required field 'model' in models[0]"),
    ("models:\n  - model: x\n    drafs: [a/b]\n",
     "p.yml:3:5: unknown field 'drafs' in models[0]; did you mean 'drafts'?"),
    ("models:\n  - model: x\n    synthetic: sometimes\n", "p.yml:3:16: models[0].synthetic is 'sometimes'"),
    ("models:\n  - model: x\n    mtp-layers: -1\n", "p.yml:3:17: models[0].mtp-layers must be >= 0, not -1"),
    ("client-args:\n  run_benchmark_serving:\n    require: [use-chat-template]\n",
     "p.yml:3:15: client-args.run_benchmark_serving.require[0] is 'use-chat-template', which does not match"),
    ("client-args:\n  c:\n    reads: [REPLAY CMD]\n", "p.yml:3:13: client-args.c.reads[0] is 'REPLAY CMD'"),
    ("model: x\n", "p.yml:1:1: unknown field 'model'; did you mean 'models'?"),
    ("- model: x\n", "p.yml:1:1: the document must be a mapping, not a list"),
    ("models: [{model: a}, {model: A}]\n", "p.yml:1:30: model 'A' has two blocks"),
    ("models:\n  - model: x\n   track: main\n", "p.yml:3:"),
])
def test_a_bad_policy_is_an_error_at_its_line_and_column(text: str, error: str) -> None:
    with pytest.raises(PolicyError) as exc:
        parse_policy("p.yml", text)
    assert str(exc.value).startswith(error), str(exc.value)


def test_an_empty_policy_has_no_blocks() -> None:
    p = parse_policy("p.yml", "# nothing yet\n")
    assert (p.models, p.client_args) == ((), None)


def test_the_shipped_example_policy_validates() -> None:
    p = parse_policy("examples/speculators.yml", (ROOT / "examples/speculators.yml").read_text())
    assert p.for_model("moonshotai/Kimi-K2.6").drafts == (  # type: ignore[union-attr]
        "lightseekorg/kimi-k2.6-eagle3", "lightseekorg/kimi-k2.6-eagle3-mla")
    assert p.for_model("nvidia/Kimi-K2.5-NVFP4").allows_draft("nvidia/Kimi-K2.5-Thinking-Eagle3")  # type: ignore[union-attr]
    assert p.for_model("deepseek-ai/DeepSeek-R1-0528").track == "main"  # type: ignore[union-attr]
    assert p.for_model("zai-org/GLM-5.2-FP8").mtp_layers is None  # type: ignore[union-attr]
    assert p.for_model("XiaomiMiMo/MiMo-V2.5").mtp_layers == 3  # type: ignore[union-attr]
    assert p.for_model("amd/MiniMax-M3-MXFP4").allows_draft("/data/models/MiniMax-M3-EAGLE3-GQA")  # type: ignore[union-attr]


# ------------------------------------------------------------------ with the configuration

def test_no_policy_file_no_policy(tmp_path: Path) -> None:
    assert load_config(WorkTree(str(_repo(tmp_path, {"README.md": "x\n"})))).speculators is None


@pytest.mark.parametrize("name", [".benchbot/speculators.yml", ".benchbot/speculators.yaml"])
def test_the_default_policy_file_is_read_with_or_without_a_config(tmp_path: Path, name: str) -> None:
    repo = _repo(tmp_path, {name: POLICY})
    conf = load_config(WorkTree(str(repo)))
    assert conf.speculators is not None and conf.speculators.path == name
    (repo / ".benchbot.yml").write_text("fail-on: error\n")
    assert load_config(WorkTree(str(repo))).speculators.path == name  # type: ignore[union-attr]


def test_a_config_names_another_policy_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {".benchbot.yml": "speculators: policy/spec.yml\n", "policy/spec.yml": POLICY,
                            ".benchbot/speculators.yml": "models: []\n"})
    assert load_config(WorkTree(str(repo))).speculators.path == "policy/spec.yml"  # type: ignore[union-attr]


def test_pyproject_names_the_policy_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"pyproject.toml": '[tool.benchbot]\nspeculators = "p.yml"\n', "p.yml": POLICY})
    assert load_config(WorkTree(str(repo))).speculators.path == "p.yml"  # type: ignore[union-attr]


def test_a_named_policy_file_that_is_missing_is_a_config_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {".benchbot.yml": "speculators: policy/spec.yml\n"})
    with pytest.raises(ConfigError, match=r"^policy/spec.yml: no such file in the repository \(speculators: in "
                                          r"\.benchbot\.yml\)"):
        load_config(WorkTree(str(repo)))


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.yml", "a/../../b.yml"])
def test_the_policy_path_stays_in_the_repository(tmp_path: Path, path: str) -> None:
    repo = _repo(tmp_path, {".benchbot.yml": f"speculators: {path}\n"})
    with pytest.raises(ConfigError, match=r"^\.benchbot\.yml:1:14: speculators is"):
        load_config(WorkTree(str(repo)))


def test_a_bad_policy_stops_lint_with_exit_2_and_its_position(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, {".benchbot/speculators.yml": "models:\n  - model: x\n    track: sideways\n"})
    assert main(["lint", str(repo), "--no-cache"]) == 2
    assert ".benchbot/speculators.yml:3:12: models[0].track is 'sideways'" in capsys.readouterr().err


def test_an_unreadable_policy_file_is_a_config_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "x\n"})
    (repo / ".benchbot").mkdir()
    (repo / ".benchbot/speculators.yml").symlink_to("/dev/null")  # a link out of the repository
    assert load_config(WorkTree(str(repo))).speculators is None  # not a file of the repository: none
    big = repo / ".benchbot/speculators.yaml"
    big.write_text("#" * (9 * 2**20))
    with pytest.raises(ConfigError, match=r"speculators.yaml: .*too large"):
        load_config(WorkTree(str(repo)))


def test_the_policy_comes_from_the_same_revision_as_the_config(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {".benchbot/speculators.yml": POLICY})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / ".benchbot/speculators.yml").write_text("models: []\n")
    git(repo, "commit", "-qam", "head")
    base = load_config(GitTree(str(repo), "HEAD~1")).speculators
    head = load_config(GitTree(str(repo), "HEAD")).speculators
    assert base is not None and len(base.models) == 2
    assert head is not None and head.models == ()


# ------------------------------------------------------------------ client arguments

def test_the_policy_replaces_a_clients_requirement_and_adds_clients() -> None:
    prof = Profile()
    default = client_requirements(prof.spec_client_args, prof.spec_client_reads, None)
    assert default == {"run_benchmark_serving": ((("--use-chat-template", "--dsv4"),), (), "benchbot's default")}
    got = client_requirements(prof.spec_client_args, prof.spec_client_reads, parse_policy("p.yml", POLICY))
    assert got["run_benchmark_serving"] == default["run_benchmark_serving"]  # not named: the default holds
    assert got["run_agentic_replay_and_write_outputs"] == (
        (("--apply-chat-template",), ("--x", "--y")), ("REPLAY_CMD",), "p.yml (client-args)")  # reads: the profile's
    off = parse_policy("p.yml", "client-args:\n  run_benchmark_serving:\n    require: []\n    reads: [A]\n")
    assert client_requirements(prof.spec_client_args, prof.spec_client_reads, off) == {}
