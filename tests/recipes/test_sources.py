"""Recipe sources (``bot.recipes.sources``): local directories recognised by layout, GitHub
through the real PyGithub stack against the fake GitHub on 127.0.0.1, the persistent cache
and ``--offline``, and the ``recipes:`` configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakegithub import FakeGitHub
from fakegithub.contents import add_files, rate_limit, truncate

from bot import cache
from bot.config import ConfigError, RecipeSettings, RepoRef, load_config
from bot.github.adapter_contents import ContentsClient, from_env
from bot.github.port import GitHubError
from bot.github.recipe_sources import GitHubSource, _reason, open_sources
from bot.recipes.model import SourceUnavailable
from bot.recipes.sources import CACHE_KIND, CachedSource, LocalSource, detect
from bot.repo.files.tree import WorkTree
from tests.conftest import git

VLLM, SGLANG = "vllm-project/recipes", "sgl-project/sglang"
CONFIGS = "docs_new/src/snippets/configs"
GLM = "models/zai-org/GLM-5.yaml"
RECIPES: dict[str, bytes | str] = {
    GLM: "model: zai-org/GLM-5\nhardware: {b200: {tp: 8}}\n",
    "models/qwen/Qwen3.yaml": "model: Qwen/Qwen3\n",
    "strategies/tp.yaml": "name: tp\n",
    "README.md": "# recipes\n",
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    return tmp_path / "cache"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_token("tok", "alice")
        fake.add_repo(VLLM)
        add_files(fake, VLLM, RECIPES)
        fake.add_repo(SGLANG)
        add_files(fake, SGLANG, {f"{CONFIGS}/qwen/qwen3.5.jsx": "export const x = 1;\n", "README.md": "sglang\n"})
        yield fake
        assert fake.errors == []


def client(gh: FakeGitHub | str) -> ContentsClient:
    url = gh if isinstance(gh, str) else gh.api_url
    return ContentsClient("tok", url, retries=1, backoff=0.01, max_wait=2.0, timeout=5.0)


def dead_url() -> str:
    """An API URL on 127.0.0.1 where nothing listens (a port just freed)."""
    fake = FakeGitHub()
    url = fake.api_url
    fake.stop()
    fake._httpd.server_close()
    return url


def reads(gh: FakeGitHub, what: str) -> int:
    return sum(1 for r in gh.requests if what in r.path)


# -- local directories ------------------------------------------------------------------------------------


def test_detect_by_layout(tmp_path: Path) -> None:
    v = tree(tmp_path / "v", {"models/a/b.yaml": "x", "strategies/s.yaml": "y"})
    s = tree(tmp_path / "s", {f"{CONFIGS}/q/q.jsx": "z"})
    both = tree(tmp_path / "both", {"models/a.yaml": "x", "strategies/s.yaml": "y", f"{CONFIGS}/q.jsx": "z"})
    assert [(x.kind, x.folder) for x in detect(v)] == [("vllm", "")]
    assert [(x.kind, x.folder) for x in detect(s)] == [("sglang", CONFIGS)]
    assert [x.kind for x in detect(both)] == ["vllm", "sglang"]
    assert detect(v)[0].list("models") == ["models/a/b.yaml"]
    neither = tree(tmp_path / "neither", {"models/a.yaml": "only models"})
    with pytest.raises(ValueError) as err:
        detect(neither)
    assert str(neither) in str(err.value) and "strategies/" in str(err.value) and CONFIGS in str(err.value)
    with pytest.raises(ValueError, match="not a directory"):
        detect(tmp_path / "missing")


def test_local_paths_cannot_leave_the_directory(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.yaml").write_text("outside")
    root = tree(tmp_path / "r", {"models/a.yaml": "a", "strategies/s.yaml": "s"})
    (root / "models" / "link.yaml").symlink_to(tmp_path / "secret.txt")
    (root / "models" / "linkdir").symlink_to(tmp_path / "outside")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    src = LocalSource(root, "vllm")
    for path in ("../secret.txt", "models/../../secret.txt", str(tmp_path / "secret.txt"), "models/link.yaml",
                 "models/linkdir/o.yaml"):
        assert src.get(path) is None, path
    assert src.list("models") == ["models/a.yaml"]
    assert src.list("..") == [] and src.list("models/linkdir") == []
    assert ".git/config" not in src.list("")
    assert src.get("models/a.yaml") == "a"
    assert src.revision.startswith("local:")  # a .git without HEAD is no checkout


def test_local_revision_is_read_from_git_as_text(tmp_path: Path) -> None:
    root = tree(tmp_path / "r", {"models/a.yaml": "a", "strategies/s.yaml": "s"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    head = git(root, "rev-parse", "HEAD").strip()
    assert LocalSource(root, "vllm").revision == head  # .git/refs/heads/main
    git(root, "pack-refs", "--all")
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    assert LocalSource(root, "vllm").revision == head  # packed-refs
    git(root, "checkout", "-q", "--detach")
    assert LocalSource(root, "vllm").revision == head  # HEAD holds the SHA
    # a worktree-style .git file pointing at a git dir
    other = tree(tmp_path / "w", {"models/a.yaml": "a", "strategies/s.yaml": "s"})
    gitdir = tmp_path / "gitdir"
    (gitdir / "refs" / "heads").mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/dev\n")
    (gitdir / "refs" / "heads" / "dev").write_text("c" * 40 + "\n")
    (other / ".git").write_text(f"gitdir: {gitdir}\n")
    assert LocalSource(other, "vllm").revision == "c" * 40
    # a ref that would climb out, or garbage: the content digest instead
    (gitdir / "HEAD").write_text("ref: refs/../../../etc/passwd\n")
    assert LocalSource(other, "vllm").revision.startswith("local:")


# -- GitHub -----------------------------------------------------------------------------------------------


def test_github_source_lists_and_reads_through_pygithub(gh: FakeGitHub) -> None:
    sha = gh.state.repo(VLLM).branches["main"]
    src = GitHubSource("vllm", VLLM, None, client(gh))
    assert src.revision == sha
    assert src.list("models") == ["models/qwen/Qwen3.yaml", GLM]
    assert src.list("models/") == src.list("models") and src.list("nothing") == []
    assert src.get(GLM) == RECIPES[GLM]
    assert reads(gh, "/git/trees/") == 1  # one recursive tree call for every list and get
    before = len(gh.requests)
    assert src.get("models/none.yaml") is None and src.get("../x") is None and src.get("/etc/passwd") is None
    assert len(gh.requests) == before  # absent from the tree: no call
    assert GitHubSource("vllm", VLLM, "main", client(gh)).revision == sha
    assert GitHubSource("vllm", VLLM, sha[:10], client(gh)).revision == sha  # a short SHA: the commits API


def test_github_large_files_come_from_blobs_and_huge_ones_are_refused(gh: FakeGitHub) -> None:
    big = "x" * (2 * 1024 * 1024)
    add_files(gh, VLLM, {**RECIPES, "models/big.yaml": big, "models/huge.yaml": "y" * (5 * 1024 * 1024)},
              branch="big")
    src = GitHubSource("vllm", VLLM, "big", client(gh))
    assert src.get("models/big.yaml") == big
    assert reads(gh, "/git/blobs/") == 1
    before = len(gh.requests)
    assert src.get("models/huge.yaml") is None
    assert len(gh.requests) == before  # the tree says 5 MB: never downloaded


def test_github_rate_limit_and_no_network_are_unavailable(gh: FakeGitHub) -> None:
    rate_limit(gh)
    with pytest.raises(SourceUnavailable) as err:
        _ = GitHubSource("vllm", VLLM, None, client(gh)).revision
    assert "rate limit" in err.value.reason and VLLM in err.value.reason
    rate_limit(gh, status=429)
    with pytest.raises(SourceUnavailable, match="rate limit"):
        _ = GitHubSource("vllm", VLLM, "main", client(gh)).revision
    rate_limit(gh, on=False)
    assert GitHubSource("vllm", VLLM, None, client(gh)).get(GLM) == RECIPES[GLM]
    with pytest.raises(SourceUnavailable, match="cannot be reached"):
        _ = GitHubSource("vllm", VLLM, None, client(dead_url())).revision
    with pytest.raises(SourceUnavailable, match="no such repository"):
        _ = GitHubSource("vllm", "nobody/nothing", None, client(gh)).revision


def test_truncated_tree_is_noted_and_files_looked_up(gh: FakeGitHub) -> None:
    truncate(gh, VLLM)
    try:
        src = GitHubSource("vllm", VLLM, None, client(gh))
        assert not src.complete and GLM in src.list("")
        assert any("truncated" in n for n in src.notes)
        assert src.get("models/none.yaml") is None  # asked GitHub: a 404
        assert reads(gh, "/contents/models/none.yaml") == 1
    finally:
        truncate(gh, VLLM, on=False)


def test_token_is_optional_and_never_sent_to_another_server() -> None:
    assert ContentsClient(None).gh.requester.auth is None
    env = {"GITHUB_TOKEN": "ghe-token", "GITHUB_API_URL": "https://ghe.example/api/v3"}
    assert from_env(env).gh.requester.auth is None
    assert from_env({"GITHUB_TOKEN": "t"}).gh.requester.auth is not None
    assert from_env({**env, "BENCHBOT_RECIPES_TOKEN": "r"}).gh.requester.auth is not None


# -- the cache and --offline --------------------------------------------------------------------------------


def test_second_read_comes_from_the_cache_with_the_network_gone(gh: FakeGitHub) -> None:
    online = CachedSource(GitHubSource("vllm", VLLM, None, client(gh)))
    sha = online.revision
    assert online.get(GLM) == RECIPES[GLM] and online.list("models")[0] == "models/qwen/Qwen3.yaml"
    gh.stop()
    assert online.get(GLM) == RECIPES[GLM]  # the same run: no call
    later = CachedSource(GitHubSource("vllm", VLLM, None, client(gh)))  # the next run, GitHub unreachable
    assert later.revision == sha
    assert any("cannot be reached" in n and sha[:12] in n for n in later.notes)
    assert later.get(GLM) == RECIPES[GLM] and later.list("models") == online.list("models")
    assert later.get("models/none.yaml") is None  # the cached file list is complete


@pytest.mark.parametrize("port", [42963, 4290, 14291, 429])
def test_a_refused_connection_on_a_port_with_429_in_it_is_not_a_rate_limit(port: int) -> None:
    """The fake GitHub listens on a random port: one such as 42963 made the refused connection's
    message (which names the port) read as "too many 429 error responses" (a flaky test)."""
    refused = (f"HTTPConnectionPool(host='127.0.0.1', port={port}): Max retries exceeded with url: "
               f"/api/v3/repos/o/r (Caused by NewConnectionError('Failed to establish a new connection: "
               f"[Errno 111] Connection refused'))")
    assert "cannot be reached" in _reason(GitHubError(0, refused), "vLLM recipes")
    limited = ("HTTPSConnectionPool(host='api.github.com', port=443): Max retries exceeded with url: "
               "/repos/o/r (Caused by ResponseError('too many 429 error responses'))")
    assert "rate limit is exhausted" in _reason(GitHubError(0, limited), "vLLM recipes")


def test_offline_uses_only_the_cache(gh: FakeGitHub) -> None:
    cold = CachedSource(GitHubSource("vllm", VLLM, None, None), offline=True)
    with pytest.raises(SourceUnavailable) as err:
        _ = cold.revision
    assert err.value.reason.startswith("offline and no cached copy of vLLM recipes vllm-project/recipes")
    warm = CachedSource(GitHubSource("vllm", VLLM, None, client(gh)))
    sha = warm.revision
    assert warm.get(GLM) == RECIPES[GLM]
    gh.clear_requests()
    offline = CachedSource(GitHubSource("vllm", VLLM, None, None), offline=True)
    assert offline.revision == sha and offline.get(GLM) == RECIPES[GLM]
    assert offline.list("strategies") == ["strategies/tp.yaml"]
    assert offline.get("models/none.yaml") is None  # not in the cached file list
    with pytest.raises(SourceUnavailable, match="offline and no cached copy of .*Qwen3.yaml"):
        offline.get("models/qwen/Qwen3.yaml")  # listed, never read online
    assert gh.requests == []
    # another ref was never resolved online
    with pytest.raises(SourceUnavailable, match="offline and no cached copy"):
        _ = CachedSource(GitHubSource("vllm", VLLM, "dev", None), offline=True).revision


def test_damaged_entries_are_refetched_online_and_unavailable_offline(gh: FakeGitHub, fresh_cache: Path) -> None:
    src = CachedSource(GitHubSource("vllm", VLLM, None, client(gh)))
    sha = src.revision
    assert src.get(GLM) == RECIPES[GLM]
    key = cache.key("file", "vllm", VLLM, sha, GLM)
    (entry,) = [p for p in fresh_cache.rglob(key)]
    entry.write_bytes(entry.read_bytes()[:-3] + b"XX}")  # a flipped byte: fails its checksum
    gh.clear_requests()
    with pytest.raises(SourceUnavailable, match="offline and no cached copy"):
        CachedSource(GitHubSource("vllm", VLLM, None, None), offline=True).get(GLM)
    assert CachedSource(GitHubSource("vllm", VLLM, None, client(gh))).get(GLM) == RECIPES[GLM]
    assert reads(gh, f"/contents/{GLM}") == 1  # fetched again, and cached again
    assert CachedSource(GitHubSource("vllm", VLLM, None, None), offline=True).get(GLM) == RECIPES[GLM]
    # an entry that verifies but is not of the shape written (or a SHA that is none) is a miss too
    cache.put(CACHE_KIND, key, b'{"text": 5}')
    cache.put(CACHE_KIND, cache.key("ref", "vllm", VLLM, ""), b'{"sha": "../../etc"}')
    with pytest.raises(SourceUnavailable, match="offline and no cached copy"):
        _ = CachedSource(GitHubSource("vllm", VLLM, None, None), offline=True).revision
    assert CachedSource(GitHubSource("vllm", VLLM, None, client(gh))).get(GLM) == RECIPES[GLM]
    assert reads(gh, f"/contents/{GLM}") == 2


def test_open_sources_notes_what_cannot_be_reached(gh: FakeGitHub, tmp_path: Path) -> None:
    calls: list[int] = []

    def factory() -> ContentsClient:
        calls.append(1)
        return client(gh)

    conf = RecipeSettings(sglang=RepoRef("nobody/cookbook", None, CONFIGS))
    sources, notes = open_sources(conf, ["github"], False, factory)
    assert [(s.kind, s.name) for s in sources] == [("vllm", VLLM)] and calls == [1]
    assert len(notes) == 1 and notes[0].startswith("SGLang cookbook not compared") and "nobody/cookbook" in notes[0]
    assert sources[0].get(GLM) == RECIPES[GLM]
    sources, notes = open_sources(None, ["github"], True, factory)  # offline: the default repositories
    assert [s.kind for s in sources] == ["vllm"] and calls == [1]
    assert notes == ["SGLang cookbook not compared: offline and no cached copy of SGLang cookbook "
                     "sgl-project/sglang@default branch (run once online to fill the cache)"]
    local = tree(tmp_path / "cookbook", {f"{CONFIGS}/q.jsx": "z"})
    sources, notes = open_sources(None, [str(local)], True, factory)
    assert [(s.kind, s.name) for s in sources] == [("sglang", str(local))] and notes == []
    with pytest.raises(ValueError, match="no recipe collection"):
        open_sources(None, [str(tmp_path)], True, factory)


# -- the recipes: configuration -----------------------------------------------------------------------------


def test_config_recipes_section(tmp_path: Path) -> None:
    (tmp_path / ".benchbot.yml").write_text(
        "recipes:\n  vllm: {repo: me/recipes, ref: v1.2}\n  sglang: {ref: main}\n  local: [vendor/recipes]\n")
    conf = load_config(WorkTree(str(tmp_path))).recipes
    assert conf.vllm == RepoRef("me/recipes", "v1.2", "")
    assert conf.sglang == RepoRef(SGLANG, "main", CONFIGS) and conf.local == ("vendor/recipes",)
    (tmp_path / ".benchbot.yml").write_text("select: [dead-script]\n")
    assert load_config(WorkTree(str(tmp_path))).recipes == RecipeSettings()
    assert RecipeSettings().of("vllm") == RepoRef(VLLM, None, "")


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("recipes:\n  vllm: {repo: not-a-repo}\n",
                 ".benchbot.yml:2:16: recipes.vllm.repo must be OWNER/NAME of a GitHub repository", id="repo"),
    pytest.param("recipes:\n  sglang: {repo: a/b, path: ../up}\n",
                 ".benchbot.yml:2:29: recipes.sglang.path must be a folder of the repository, relative to its root "
                 "(no leading '/', no '..'), not '../up'", id="path"),
    pytest.param("recipes:\n  vllm: {ref: 'a b'}\n", "recipes.vllm.ref must be a branch, tag or commit", id="ref"),
    pytest.param("recipes:\n  local: [ok, /abs]\n", "recipes.local[1] must be a folder of this repository",
                 id="local"),
    pytest.param("recipes:\n  vlm: {repo: a/b}\n", "unknown field 'vlm' in recipes; did you mean 'vllm'?",
                 id="field"),
])
def test_config_recipes_errors(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / ".benchbot.yml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(WorkTree(str(tmp_path)))
    assert expected in str(err.value)
