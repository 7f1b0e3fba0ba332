"""The architecture as contracts (import-linter, configured in pyproject.toml): no import
circles, and the layers (shell and serve below repo; rules and reports without GitHub). The
contracts hold, and they do fail: a circle planted in a copy of the package breaks them. grimp
(import-linter's graph) also finds no circle at all at run time, parent and child packages
included (what acyclic_siblings does not look at), and none in the full graph with the
imports made only for annotations (under TYPE_CHECKING) counted too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Collection
from pathlib import Path

import grimp
import pytest

from tests.conftest import ROOT

PYPROJECT = ROOT / "pyproject.toml"


def _lint_imports(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env, check=False)


def _circles(graph: grimp.ImportGraph, ignored: Collection[tuple[str, str]] = frozenset()) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if (v, w) in ignored:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _debts() -> set[tuple[str, str]]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    [acyclic] = [c for c in contracts if c["id"] == "no-circles"]
    return {tuple(e.split(" -> ")) for e in acyclic.get("ignore_imports", [])}  # type: ignore[misc]


def test_the_contracts_hold() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Contracts: 7 kept, 0 broken." in done.stdout


def test_no_circle_at_all() -> None:
    assert _circles(grimp.build_graph("bot", cache_dir=None, exclude_type_checking_imports=True)) == []
    full = grimp.build_graph("bot", cache_dir=None)
    assert _circles(full) == []
    assert _debts() == set()  # the contract ignores no import
    # the check is not vacuous: a circle in the graph is found
    full.add_import(importer="bot.findings", imported="bot.lint")
    assert any("bot.findings" in c and "bot.lint" in c for c in _circles(full))


@pytest.mark.parametrize("planted", [
    ("bot/findings.py", "import bot.lint  # planted\n"),  # a circle between top-level modules
    ("bot/shell/ir/values.py", "import bot.shell.evaluator.evaluate  # planted\n"),  # inside one package
])
def test_a_planted_circle_breaks_the_contracts(tmp_path: Path, planted: tuple[str, str]) -> None:
    shutil.copytree(ROOT / "bot", tmp_path / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    path, line = planted
    target = tmp_path / path
    target.write_text(target.read_text() + line)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = _lint_imports(tmp_path, env)
    assert done.returncode != 0, done.stdout[-3000:]
    assert "No import circles between the modules or packages of one package BROKEN" in done.stdout
    graph = grimp.build_graph("bot", cache_dir=None)  # this process's own bot: still clean
    assert _circles(graph) == []
