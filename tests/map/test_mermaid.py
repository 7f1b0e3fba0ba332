"""The Mermaid charts: the seed PR's section (base: the seed; head: the seed with lint's fix,
whose MTP entries move from the plain script to the _mtp one) parsed by Mermaid's own parser
(the pinned npm package, in headless chromium); labels from hostile entry names parse and
render as text; the section's shape (collapsed, moved first, the rest counted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.config import load_config
from bot.map.mermaid import entry_flowchart, pr_section, text
from bot.repo.files.git import open_tree
from tests.conftest import EXAMPLE, copy_repo
from tests.map.browser import mermaid_check
from tests.map.helpers import MTP, PLAIN, facts_of, fixed_seed

_BLOCK = re.compile(r"^```mermaid\n(.*?)\n```$", re.S | re.M)
HOSTILE = 'a"b[c]#d<e>|f-->g`h;i{j}k style:#1; classDef x <!-- @you'
@pytest.fixture(scope="module")
def seed_pr(tmp_path_factory: pytest.TempPathFactory) -> str:
    head = fixed_seed(tmp_path_factory.mktemp("pr"))
    names = [*MTP, "kimik2.5-int4-mi355x-vllm"]  # the two the fix moves, one it does not
    return pr_section(facts_of(EXAMPLE), facts_of(head), names, limit=5)


def test_the_seed_pr_section_parses_with_mermaid(seed_pr: str, tmp_path: Path) -> None:
    blocks = _BLOCK.findall(seed_pr)
    assert len(blocks) == 5  # before and after for each moved entry, one chart for the unchanged one
    broken = "flowchart LR\n  a[\"x\"] --> b[[[\n"  # the control: Mermaid's parser does reject
    results = mermaid_check(tmp_path, [*blocks, broken])
    assert [r["parsed"] for r in results] == [True] * 5 + [False]
    assert all(r.get("renderError") is None and r.get("scripts") == 0 for r in results[:5])
    # the first moved entry: before, the plain script; after, the _mtp one (what GitHub will draw)
    assert PLAIN[MTP[0]] in str(results[0]["text"]) and "_mtp.sh" not in str(results[0]["text"])
    assert PLAIN[MTP[0]].replace(".sh", "_mtp.sh") in str(results[1]["text"])


def test_the_seed_pr_section_shape(seed_pr: str) -> None:
    assert seed_pr.startswith("### Dispatch chains of the changed entries\n")
    assert seed_pr.count("<details>") == seed_pr.count("</details>") == 3
    assert "<details open" not in seed_pr  # collapsed by default
    summaries = re.findall(r"<summary>(.*?)</summary>", seed_pr)
    assert [s.split("</code>")[0].removeprefix("<code>") for s in summaries] == [*MTP, "kimik2.5-int4-mi355x-vllm"]
    assert summaries[0].count("moved; script: " + PLAIN[MTP[0]] + " \u2192 ") == 1
    assert "spec off) \u2192" in summaries[0] and summaries[2].endswith("its chain is unchanged")
    before, after = _BLOCK.findall(seed_pr)[:2]
    assert "class b4,b5 moved" in before and "class a4,a5 moved" in after  # script and server highlighted


def test_at_most_limit_entries_the_rest_counted(tmp_path: Path) -> None:
    head = fixed_seed(tmp_path)
    base_facts, head_facts = facts_of(EXAMPLE), facts_of(head)
    names = [*MTP, "kimik2.5-int4-mi355x-vllm", "no-such-entry"]
    one = pr_section(base_facts, head_facts, names, limit=1, servers=False)
    assert one.count("<details>") == 1 and f"<code>{MTP[0]}</code>" in one
    assert one.rstrip().endswith("\u2026 and 2 more entries (1 moved, 1 unchanged).")
    assert pr_section(base_facts, head_facts, ["no-such-entry"]) == ""
    none = pr_section(base_facts, head_facts, names, limit=0, servers=False)
    assert "<details>" not in none and none.rstrip().endswith("\u2026 and 3 more entries (2 moved, 1 unchanged).")
    new = pr_section(None, head_facts, [MTP[0]], servers=False)  # no base: every entry is new
    assert "a new entry" in new and new.count("```mermaid") == 1


def test_read_only_facts_are_refused() -> None:
    from bot.repo.facts import gather

    tree = open_tree(str(EXAMPLE))
    read_only = gather(tree, load_config(tree, None).profile, evaluate=False)  # what LintResult.read_facts gives
    with pytest.raises(ValueError, match="evaluated facts"):
        pr_section(read_only, facts_of(EXAMPLE), [MTP[0]])


def test_hostile_entry_names_parse_and_render_as_text(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    master = repo / "configs" / "amd-master.yaml"
    doc = yaml.safe_load(master.read_text())
    master.write_text(yaml.safe_dump({(HOSTILE if n == MTP[0] else n): b for n, b in doc.items()}, sort_keys=False))
    chart = entry_flowchart(facts_of(repo), HOSTILE)
    assert chart is not None and chart.startswith("flowchart LR\n")
    label = text(HOSTILE)
    bare = re.sub(r"#\d+;", "", label)  # what is left once the entity codes are taken out
    assert not set('"<>|[]`{};#@!') & set(bare) and "--" not in label
    assert "style" not in label and "classDef" not in label  # words Mermaid rewrites anywhere
    assert re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label) == HOSTILE  # nothing lost
    [result] = mermaid_check(tmp_path, [chart])
    assert result["parsed"] is True and result["scripts"] == 0
    assert HOSTILE in str(result["text"])  # drawn as the name is written, every character
