"""Property: no YAML text makes the readers raise, and none makes the whole lint raise.

Documents are drawn as real YAML (nested maps and lists of InferenceX-like keys, anchors and
aliases, merge keys, tags, odd scalars), then broken at random; each goes through the plain
reader, the bot's own configuration reader and, as the master config of a small repo, the
whole lint pipeline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.config import Config, ConfigError, _from_text
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.repo.load.yamlfile import load

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed"

KEYS = st.sampled_from(["image", "model", "framework", "precision", "runner", "scenarios", "search-space",
                        "seq-len-configs", "spec-decoding", "tp", "conc-start", "labels", "<<", "x", "? a",
                        "kimik2.5-int4-mi325x-vllm-mtp", "rules", "max-paths", "1", "null", "&a", "*a"])
SCALARS = st.one_of(
    st.sampled_from(["mtp", "fp8", "vllm", "mi325x", "true", "~", "0x1F", "1e9", "2001-13-45", ".inf", "'q'",
                     '"\\x00"', "!!python/object:os.system x", "!!binary xx", "*a", "&a v", "|", ">", "- x", "{",
                     "[", "@x", "`x`", "%x", "a: b: c", "\t", "\u202e", "\ufeff"]),
    st.integers(-10**30, 10**30).map(str),
    st.text(max_size=12).map(lambda s: '"' + s.replace("\\", "/").replace('"', "'") + '"'),
)


def _node(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return SCALARS
    inner = _node(depth - 1)
    return st.one_of(
        SCALARS,
        st.lists(st.tuples(KEYS, inner), min_size=1, max_size=4).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
        st.lists(inner, min_size=0, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    )


def _block(indent: int, depth: int) -> st.SearchStrategy[str]:
    pad = " " * indent
    leaf = _node(2)
    if depth == 0:
        return st.lists(st.tuples(KEYS, leaf), min_size=1, max_size=4).map(
            lambda kv: "".join(f"{pad}{k}: {v}\n" for k, v in kv))
    child = _block(indent + 2, depth - 1)
    item = st.one_of(st.tuples(KEYS, leaf).map(lambda kv: f"{pad}{kv[0]}: {kv[1]}\n"),
                     st.tuples(KEYS, child).map(lambda kv: f"{pad}{kv[0]}:\n{kv[1]}"),
                     st.tuples(KEYS, st.sampled_from(["&a", "&b", ""]), child).map(
                         lambda kv: f"{pad}{kv[0]}: {kv[1]}\n{kv[2]}"),
                     st.tuples(KEYS, st.lists(leaf, min_size=1, max_size=3)).map(
                         lambda kv: f"{pad}{kv[0]}:\n" + "".join(f"{pad}- {x}\n" for x in kv[1])))
    return st.lists(item, min_size=1, max_size=4).map("".join)


DOC = _block(0, 3)
BROKEN = st.tuples(DOC, st.integers(0, 2000), st.sampled_from(["", ":", "- ", "  ", "\t", "&x ", "*x", "*a", "{",
                                                               "]", "'", '"', "\x00", "\r", "---\n", "...\n",
                                                               "<<: *a\n", "!!set\n", "\x85", "\ud800"]))

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def _as_read(text: str) -> str:
    """What a tree hands the readers: the file's bytes decoded with replacement characters."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _readers(text: str) -> None:
    text = _as_read(text)
    data, err = load(text)
    assert err is None or (err.line >= 1 and err.col >= 1 and err.message)
    try:
        conf = _from_text(".benchbot.yml", text)
    except ConfigError as exc:
        assert str(exc).startswith(".benchbot.yml")
    else:
        assert isinstance(conf, Config)


@given(DOC)
@example(LAUGHS)
@example("a: &a {b: *a}\n")
@example("a: !!python/object/apply:os.system ['id']\n")
@example("[" * 5000 + "]" * 5000)
@example("a: &a [1]\nb: *a\na: &a [2]\n")
def test_documents(text: str) -> None:
    _readers(text)


@given(BROKEN)
def test_broken(case: tuple[str, int, str]) -> None:
    text, at, junk = case
    at = min(at, len(text))
    _readers(text[:at] + junk + text[at:])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "seed"
    shutil.copytree(EXAMPLE, root)
    return root


@given(st.one_of(DOC, BROKEN.map(lambda c: c[0][:c[1]] + c[2] + c[0][c[1]:])))
@example(LAUGHS)
def test_pipeline(repo: Path, text: str) -> None:
    """The master config (and then runners.yaml) replaced: lint reports, never raises."""
    for name in ("configs/amd-master.yaml", "configs/runners.yaml"):
        target = repo / name
        saved = target.read_bytes()
        try:
            target.write_bytes(text.encode("utf-8", "surrogatepass"))
            result = lint(WorkTree(str(repo)), Config())
            assert all(f.line >= 1 for f in result.findings)
        finally:
            target.write_bytes(saved)
