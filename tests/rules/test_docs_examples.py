"""Every rule's documented example, run through the linter, yields exactly that rule.

An example is one or more fenced blocks in the docstring's "Example:" section, each
starting with ``# file: PATH``. They are written over a copy of a small clean repo
(tests/docs_base, which lints clean) and the whole repo is linted.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from bot import rules
from bot.config import Config, load_config
from bot.lint import lint
from bot.repo.files.git import GitTree
from bot.repo.files.tree import WorkTree
from tests.conftest import ROOT, copy_repo, git

BASE = ROOT / "tests" / "docs_base"
_FENCE = re.compile(r"^```[\w-]*\n(.*?)^```", re.S | re.M)


def example_files(doc: str, tag: str = "file") -> dict[str, str]:
    """The example's ``# file: PATH`` blocks (``tag="base"``: its ``# base: PATH`` blocks, the
    base revision of a change-level rule's example)."""
    text = inspect.cleandoc(doc)
    m = re.search(r"^Example:\n(.*?)^(?:Fix:|\Z)", text, re.S | re.M)
    assert m, "no Example: section"
    section = inspect.cleandoc(m.group(1))
    files: dict[str, str] = {}
    for block in _FENCE.findall(section):
        first, _, rest = block.partition("\n")
        fm = re.fullmatch(r"# (file|base): (\S+)", first.strip())
        assert fm, f"an example block must start with '# file: PATH', not {first!r}"
        if fm.group(1) == tag:
            files[fm.group(2)] = rest
    assert files, "the Example: section has no fenced block"
    return files


def test_base_repo_is_clean() -> None:
    assert lint(WorkTree(str(BASE)), Config()).findings == []


@pytest.mark.parametrize("rule_id", sorted(rules.RULES))
def test_documented_example_yields_exactly_its_rule(rule_id: str, tmp_path: Path) -> None:
    module = rules.RULES[rule_id]
    repo = copy_repo(BASE, tmp_path / "repo")
    change = getattr(module, "CHANGE_RULE", False)  # judged on a change: the base, then the files
    for tag in ("base", "file") if change else ("file",):
        for path, content in example_files(module.__doc__ or "", tag).items():
            target = repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        if change and tag == "base":
            git(repo, "init", "-q", "-b", "main")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "base")
    # the repo's own configuration, as a lint loads it (an example may ship a policy file)
    conf = load_config(WorkTree(str(repo)))
    found = lint(WorkTree(str(repo)), conf).findings
    if change:
        base = GitTree(str(repo), "HEAD")
        found += module.check_change(base, WorkTree(str(repo)), lint(base, conf).facts,
                                     lint(WorkTree(str(repo)), conf).facts, conf)
    assert rule_id in {f.rule for f in found}, f"the {rule_id} example yields no {rule_id} finding"
    # A rule may name companions its example necessarily triggers (its docstring says so).
    also = set(getattr(module, "EXAMPLE_ALSO", ()))
    assert {f.rule for f in found} - {rule_id} == also, "\n".join(f.text() for f in found)


def test_every_rule_documents_all_sections() -> None:
    for rid, module in rules.RULES.items():
        doc = inspect.cleandoc(module.__doc__ or "")
        assert doc.startswith(f"{rid}: "), rid
        for section in ("What it does:", "Why is this bad?", "Example:", "Fix:"):
            assert f"\n{section}\n" in doc, (rid, section)
        for other in getattr(module, "EXAMPLE_ALSO", ()):
            assert other in rules.RULES and other in doc, (rid, other)
