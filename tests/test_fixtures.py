"""Every fixture repo yields exactly its expected findings (triggering repos and clean twins)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config import load_config
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, NOT_REPOS

CASES = sorted(p.stem for p in (FIXTURES / "expected").glob("*.json"))


def findings_of(repo: Path) -> list[dict[str, object]]:
    tree = WorkTree(str(repo))
    result = lint(tree, load_config(tree))
    return sorted(({"rule": f.rule, "path": f.path, "line": f.line} for f in result.findings),
                  key=lambda d: (str(d["path"]), int(str(d["line"])), str(d["rule"])))


def test_every_fixture_has_an_expectation() -> None:
    repos = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_REPOS)
    assert repos == CASES


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str) -> None:
    expected = json.loads((FIXTURES / "expected" / f"{name}.json").read_text())
    assert findings_of(FIXTURES / name) == expected


def test_each_rule_has_a_trigger_and_a_clean_twin() -> None:
    triggered: set[str] = set()
    for name in CASES:
        for f in json.loads((FIXTURES / "expected" / f"{name}.json").read_text()):
            triggered.add(f["rule"])
    from bot.rules import RULES

    # tested in tests/rules/test_dispatch_bound.py and test_changelog_missing.py (a change-level rule);
    # profile-overridden (information) by its documented example (tests/rules/test_docs_examples.py)
    untested = set(RULES) - triggered - {"dispatch-bound", "changelog-missing", "profile-overridden"}
    assert not untested, f"rules without a triggering fixture: {sorted(untested)}"
    clean = [n for n in CASES if not json.loads((FIXTURES / "expected" / f"{n}.json").read_text())]
    assert len(clean) >= 8
