"""The routes the map draws are what ``dispatch`` lists (the same facts): every (entry, launcher,
script) of the dispatch table, on the main and the other workflow paths, and no other; entries
handed to a tool end in a hand-off node with their recipes; an entry that dispatches nothing
says why on the node where its chain stops."""

from __future__ import annotations

import pytest

from bot.config import load_config
from bot.map.chain import Node, launches, routes
from bot.repo.facts import Facts, gather
from bot.repo.files.git import open_tree
from bot.report.dispatch import rows
from tests.conftest import EXAMPLE, FIXTURES

REPOS = {"seed": EXAMPLE, **{name: FIXTURES / name for name in (
    "workflow-env", "multinode-recipes", "rejected-entry", "runner-labels", "fallback-chain", "inconsistent-dispatch",
    "bash-c")}}


def _facts(name: str) -> Facts:
    tree = open_tree(str(REPOS[name]))
    return gather(tree, load_config(tree, None).profile)


def _kinds(nodes: tuple[Node, ...]) -> list[str]:
    return [n.kind for n in nodes]


def _target(row: dict[str, object]) -> str | None:
    handed = row.get("handed_to")
    return str(row["script"]) if row["script"] else str(handed["tool"]) if isinstance(handed, dict) else None


@pytest.mark.parametrize("name", sorted(REPOS))
def test_routes_are_the_dispatch_table(name: str) -> None:
    facts = _facts(name)
    table = {(str(r["entry"]), str(r["workflow"]), str(r["launcher"]), _target(r)) for r in rows(facts) if _target(r)}
    drawn = set()
    for entry in facts.entries:
        for route in routes(facts, entry):
            by = {n.kind: n for n in route.nodes}
            end = by.get("script") or by.get("handoff")
            if end is not None:
                drawn.add((entry.name, route.other or by["workflow"].key, by["launcher"].key, end.key))
    assert table, name
    assert drawn == table  # main and other workflow paths, named as dispatch names them


def test_other_workflow_paths_are_routes_of_their_own() -> None:
    facts = _facts("workflow-env")
    [mtp] = [e for e in facts.entries if e.name == "dsr1-fp8-mi300x-sglang-mtp"]
    got = {(r.other, r.nodes[-1].key) for r in routes(facts, mtp)}
    assert got == {("", "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x_mtp.sh"),
                   ("e2e-tests.yml \u203a sweep \u2192 benchmark-tmpl.yml \u203a benchmark \u203a Launch job script",
                    "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh")}
    [plain] = [e for e in facts.entries if e.name == "dsr1-fp8-mi300x-sglang"]
    [profiled] = [r for r in routes(facts, plain) if r.other]
    assert profiled.nodes[-1].kind == "launcher"
    assert profiled.nodes[-1].notes == ("every path exits before it dispatches a script",)


def test_handed_entries_end_in_their_recipes() -> None:
    facts = _facts("multinode-recipes")
    entry = facts.entries[0]
    [route] = routes(facts, entry, launches(facts, [entry]))
    assert _kinds(route.nodes) == ["config", "workflow", "runner", "launcher", "handoff", "server"]
    handoff = route.nodes[4]
    assert handoff.title == "handed to srtctl" and handoff.files
    assert any(d.endswith("(missing)") for d in handoff.detail)  # the recipe missing-recipe reports
    assert route.nodes[3].detail == ("hands the job to srtctl",) and route.nodes[3].line > 0
    assert len(route.points) == len(entry.points)  # every point names its recipe


def test_where_a_chain_stops_it_says_why() -> None:
    facts = _facts("rejected-entry")
    rejected = [e for e in facts.entries if not any(r.dispatches for r in facts.runs if r.entry is e)]
    assert len(rejected) == 1
    [route] = routes(facts, rejected[0])
    assert route.nodes[-1].kind == "launcher"
    assert route.nodes[-1].notes[0].startswith("every path exits before it dispatches a script (exit at ")
    facts = _facts("runner-labels")
    unknown = [e for e in facts.entries if not any(r.entry is e for r in facts.runs)]
    assert len(unknown) == 1
    [route] = routes(facts, unknown[0], launches(facts, unknown))
    assert _kinds(route.nodes)[:2] == ["config", "runner"] and route.nodes[1].notes
