"""A map that does not load whole, read block by block (bot.repo.load.recover), through real YAML loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import bot.repo.load.recover as recover_module
from bot.repo.env.profile import Profile
from bot.repo.files.tree import WorkTree
from bot.repo.load.configs import load_config, load_runners
from bot.repo.load.recover import CHUNK, MAX_ROUNDS, Recovered, recover
from bot.repo.load.yamlfile import Mark, YList, YMap, load
from tests.conftest import EXAMPLE

MASTER = "configs/amd-master.yaml"
SEED = (EXAMPLE / MASTER).read_text()
BROKEN_ENTRY = "kimik2.5-int4-mi325x-vllm"


def _break(text: str, entry: str, old: str = "tp: 8,", new: str = "tp: 8\uff0c") -> tuple[str, int]:
    """The text with a full-width comma in the first point of ``entry``, and that line (1-based)."""
    lines = text.split("\n")
    start = lines.index(f"{entry}:")
    at = next(i for i in range(start, len(lines)) if old in lines[i])
    lines[at] = lines[at].replace(old, new, 1)
    return "\n".join(lines), at + 1


def _marks(node: Any, at: str = "") -> dict[str, Mark]:
    """Every position a loaded document holds, by a path to it."""
    out: dict[str, Mark] = {}
    if isinstance(node, YMap):
        out[at] = node.pos
        for k, v in node.items():
            out[f"{at}/{k}@key"] = node.key_pos[k]
            out[f"{at}/{k}@val"] = node.val_pos[k]
            out.update(_marks(v, f"{at}/{k}"))
    elif isinstance(node, YList):
        out[at] = node.pos
        for i, v in enumerate(node):
            out[f"{at}[{i}]@item"] = node.item_pos[i]
            out.update(_marks(v, f"{at}[{i}]"))
    return out


def _recovered(text: str, nested: str | None = None) -> Recovered:
    rec = recover(text, nested)
    assert rec is not None
    return rec


def test_one_broken_entry_leaves_the_others_as_a_whole_load_reads_them() -> None:
    text, line = _break(SEED, BROKEN_ENTRY)
    assert load(text)[1] is not None
    rec = _recovered(text)
    assert [(b.key, b.error.line) for b in rec.broken] == [(BROKEN_ENTRY, line)]
    assert "full-width" in rec.broken[0].error.message and rec.blocks == 6
    whole, err = load(SEED)
    assert err is None and isinstance(whole, YMap)
    assert list(rec.data) == [k for k in whole if k != BROKEN_ENTRY]
    for name in rec.data:  # values and every position are those of the file
        assert rec.data[name] == whole[name]
        assert _marks(rec.data[name], name) == _marks(whole[name], name)
        assert rec.data.key_pos[name] == whole.key_pos[name]


def test_load_config_reads_the_other_entries_and_names_the_broken_one(tmp_path: Path) -> None:
    text, line = _break(SEED, BROKEN_ENTRY)
    (tmp_path / "configs").mkdir()
    (tmp_path / MASTER).write_text(text)
    cfg = load_config(WorkTree(str(tmp_path)), MASTER)
    assert cfg.error is None and isinstance(cfg.data, YMap)
    assert [e.name for e in cfg.entries] == [n for n in load(SEED)[0] if n != BROKEN_ENTRY]
    assert [(b.key, b.line, b.error.line) for b in cfg.broken] == [(BROKEN_ENTRY, SEED.split("\n").index(
        f"{BROKEN_ENTRY}:") + 1, line)]
    mtp = next(e for e in cfg.entries if e.name == "kimik2.5-int4-mi355x-vllm-mtp")
    assert text.split("\n")[mtp.points[0].pos.line - 1].lstrip().startswith("- { tp: 8")
    # a file that loads is read as before: nothing broken
    assert load_config(WorkTree(str(EXAMPLE)), MASTER).broken == ()


def test_an_alias_of_an_anchor_in_another_block_still_works() -> None:
    text = ("# header comment\n---\n"
            "base: &base\n  image: img\n  runner: mi300x\n"
            "bad:\n  search-space: [{ tp: 8\uff0c conc: 4 }]\n"
            "user:\n  <<: *base\n  model: m\n")
    rec = _recovered(text)
    assert [b.key for b in rec.broken] == ["bad"] and rec.broken[0].cause is None
    assert rec.data["user"] == {"image": "img", "runner": "mi300x", "model": "m"}
    assert rec.data.key_pos["user"] == Mark(8, 1) and rec.data["user"].val_pos["model"] == Mark(10, 10)


def test_blocks_that_need_an_anchor_of_a_broken_block_name_it_as_their_cause() -> None:
    text = ("base: &base\n  image: [img,\n"
            "a:\n  <<: *base\n"
            "b:\n  <<: *base\n"
            "c:\n  tp: *nowhere\n"
            "d:\n  tp: 8\n")
    rec = _recovered(text)
    assert [(b.key, b.line, b.cause) for b in rec.broken] == [
        ("base", 1, None), ("a", 3, 1), ("b", 5, 1), ("c", 7, None)]
    assert rec.broken[1].error.line == 4 and rec.broken[3].error.message.startswith("the alias *nowhere")
    assert dict(rec.data) == {"d": {"tp": 8}}


def test_an_anchor_defined_twice_is_reported_at_the_file_lines() -> None:
    across = _recovered("a: &x 1\nb:\n  k: 2\nc: &x 3\n")
    assert [(b.key, b.error.line) for b in across.broken] == [("c", 4)]
    assert "at line 1 and again at line 4" in across.broken[0].error.message
    within = _recovered("a: 1\nb: 2\nc:\n  k: &z 1\n  l: &z 2\nd: 4\n")
    assert [(b.key, b.error.line) for b in within.broken] == [("c", 5)]
    assert "at line 4 and again at line 5" in within.broken[0].error.message
    assert dict(within.data) == {"a": 1, "b": 2, "d": 4}


def test_an_error_at_the_end_of_a_block_stays_in_that_block() -> None:
    """An unclosed quote swallows the rest of the file when it loads whole; alone, its block
    ends at its own last line."""
    rec = _recovered('a:\n  k: "unclosed\n\n# comment\nb:\n  k: 1\nc:\n  k: 2\n')
    assert [(b.key, b.error.line) for b in rec.broken] == [("a", 2)]
    assert dict(rec.data) == {"b": {"k": 1}, "c": {"k": 2}}


@pytest.mark.parametrize("text", [
    "only:\n  k: [1,\n",  # one block
    "a: [\nb: {\n",  # every block broken
    "- a\n- [b\n",  # not a map
    "%YAML 9.9\n---\na: 1\nb: 2\n",  # the header every block needs is broken
], ids=["one-block", "all-broken", "a-list", "broken-header"])
def test_nothing_to_recover(text: str) -> None:
    assert load(text)[1] is not None
    assert recover(text) is None


def test_keys_as_written_quoted_or_cut_by_a_full_width_colon() -> None:
    text = ('"quoted key":\n  k: [1,\n'
            "'it''s':\n  k: {a: 1\n"
            "full\uff1a\n  k: 1\n"
            '"esc\\"aped":\n  k: [\n'
            "fine: 1\n")
    rec = _recovered(text)
    assert [(b.key, b.line) for b in rec.broken] == [
        ("quoted key", 1), ("it's", 3), ("full", 5), (None, 7)]
    assert rec.broken[3].text == '"esc\\"aped":'
    assert dict(rec.data) == {"fine": 1}


@pytest.mark.parametrize("eol", ["\r\n", "\r", "\u2028", "\x85"], ids=["crlf", "cr", "ls", "nel"])
def test_line_breaks_libyaml_counts_keep_positions(eol: str) -> None:
    lines = ["a:", "  k: 1", "b:", "  k: [1,", "c:", "  k: 3", ""]
    rec = _recovered(eol.join(lines))
    assert [(b.key, b.line) for b in rec.broken] == [("b", 3)]
    assert rec.data.key_pos["c"] == Mark(5, 1) and rec.data["c"].val_pos["k"] == Mark(6, 6)


def test_runners_labels_that_load_are_read(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    text = (EXAMPLE / "configs" / "runners.yaml").read_text()
    broken = text.replace("    - mi325x-amds_0\n", "    - mi325x-amds_0: [\n")
    (tmp_path / "configs" / "runners.yaml").write_text("hardware:\n  mi300x: {vram: 192}\n" + broken)
    runners = load_runners(WorkTree(str(tmp_path)), list(Profile().runners))
    assert runners.error is not None  # the rules that need every label still stand aside
    assert runners.labels == {"mi300x": ["mi300x-amds_0", "mi300x-amds_1"],
                              "mi355x": ["mi355x-amds_0", "mi355x-amds_1"]}
    assert [(b.key, b.parent, b.line) for b in runners.broken] == [("mi325x", "labels", 7)]
    assert runners.node_pos[("mi355x", 1)] == Mark(12, 7)
    assert runners.data["hardware"] == {"mi300x": {"vram": 192}}


def test_flat_runners_labels_at_the_top_level() -> None:
    rec = _recovered("h100:\n  - h100-cr_0\nh200:\n  - [h200-cr_0\nb200:\n  - b200-nb_0\n", "labels")
    assert [(b.key, b.parent) for b in rec.broken] == [("h200", None)]
    assert dict(rec.data) == {"h100": ["h100-cr_0"], "b200": ["b200-nb_0"]}


class _Counting:
    """``load`` with the calls and the characters it was given counted."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    def __call__(self, text: str) -> Any:
        self.calls += 1
        self.chars += len(text)
        return load(text)


def _entries(n: int, broken: set[int]) -> str:
    out = []
    for i in range(n):
        point = "{ tp: 8\uff0c conc: 4 }" if i in broken else "{ tp: 8, conc: 4 }"
        out.append(f"e{i}-mi300x-vllm:\n  runner: mi300x\n  search-space:\n  - {point}\n\n")
    return "".join(out)


def test_thousands_of_blocks_cost_a_few_loads_of_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets, not hangs: about twice the text is loaded, never a load per pair of blocks."""
    counting = _Counting()
    monkeypatch.setattr(recover_module, "load", counting)
    n = 3000
    text = _entries(n, {17, 1500, 2999})
    rec = _recovered(text)
    assert [b.key for b in rec.broken] == ["e17-mi300x-vllm", "e1500-mi300x-vllm", "e2999-mi300x-vllm"]
    assert len(rec.data) == n - 3
    assert counting.chars < 3 * len(text)
    assert counting.calls < n // CHUNK + 3 * (2 * CHUNK.bit_length()) + 2
    counting.calls = counting.chars = 0
    assert recover(_entries(n, set(range(n)))) is None  # every block broken: each loaded a few times at most
    assert counting.chars < 8 * len(text)


def test_blocks_that_fail_only_together_past_the_budget_are_not_recovered(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting()
    monkeypatch.setattr(recover_module, "load", counting)
    text = "".join(f"k{i}: &a{i % 2} {i}\n" for i in range(MAX_ROUNDS + 4))  # each anchor defined again and again
    assert load(text)[1] is not None
    assert recover(text) is None
    assert counting.calls <= (MAX_ROUNDS + 4) * 2 + MAX_ROUNDS
