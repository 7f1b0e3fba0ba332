"""The map's data: every entry's routes (``bot.map.chain``), lint's findings placed on the nodes
they concern, and what shares a launcher or a script (the blast radius of a change to it).

A finding goes to the node of each of its entries' chains whose file it is on (the exact line
first, else by kind: launcher, script, hand-off, config, runner, workflow, server, client); a
finding of an entry on no node of its chain stays with the entry; a finding that names no
entry goes to the nodes on its line and to the launcher or script it is about, else to the
map's list of findings on no chain.
Pure: the CLI gathers, lints and serves; this module only arranges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.findings import Finding
from bot.map.chain import Node, Route, by_entry, routes, status
from bot.shell.ir.values import known

if TYPE_CHECKING:
    from bot.launches.launch import Launch
    from bot.repo.facts import Facts
    from bot.repo.load.configs import Entry

PRIORITY = ("launcher", "script", "handoff", "config", "runner", "workflow", "server", "client")


@dataclass(frozen=True)
class EntryView:
    """One entry of the map: its routes and the findings on their nodes."""

    name: str
    path: str
    line: int
    label: str
    framework: str
    status: str  # analysed, handed to <tool>, rejected, unknown
    routes: tuple[Route, ...]
    marks: Mapping[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)  # (route, node) -> findings
    findings: tuple[int, ...] = ()  # the entry's findings on no node of its chain

    def keys(self, kind: str) -> list[str]:
        """The distinct keys of its nodes of ``kind`` (launcher or script paths), in order."""
        return list(dict.fromkeys(n.key for r in self.routes for n in r.nodes if n.kind == kind and n.key))


@dataclass(frozen=True)
class MapData:
    title: str  # the repo root, or ``repo@rev``
    commit: str | None
    summary: str  # lint's summary line (``bot.report.text.summary``)
    entries: tuple[EntryView, ...]
    findings: tuple[Finding, ...]
    loose: tuple[int, ...]  # findings on no chain of the map
    # "launcher" / "script" -> path -> the names of every entry that runs it (the whole repo's)
    shared: Mapping[str, Mapping[str, tuple[str, ...]]]
    total: int = 0  # entries in the repo (``entries`` may be a selection)


def shared(facts: Facts) -> dict[str, dict[str, tuple[str, ...]]]:
    """Every launcher and dispatched script, with the entries that run it (main and other
    workflow paths), as ``dispatch`` lists them."""
    out: dict[str, dict[str, list[str]]] = {"launcher": {}, "script": {}}

    def add(kind: str, key: str | None, name: str) -> None:
        if key:
            names = out[kind].setdefault(key, [])
            if name not in names:
                names.append(name)

    for run in facts.runs:
        add("launcher", run.launcher, run.entry.name)
        for d in run.dispatches:
            add("script", known(d.target), run.entry.name)
    for pr in facts.path_runs:
        if pr.entry is not None:
            add("launcher", pr.launcher, pr.entry.name)
            for d in pr.result.dispatches():
                add("script", known(d.target), pr.entry.name)
    return {kind: {k: tuple(v) for k, v in sorted(table.items())} for kind, table in out.items()}


def _best(nodes: Sequence[tuple[int, int, Node]], f: Finding, named: bool) -> list[tuple[int, int]]:
    """The nodes of one entry a finding concerns: those of the best kind standing for its file.
    A finding that names no entry concerns a node only if it is on the node's line, or on the
    launcher or script the node is (not every runner node of runners.yaml, say)."""
    on = [(r, i, n) for r, i, n in nodes if f.path in n.files and (
        named or (n.path == f.path and n.line == f.line) or (n.kind in ("launcher", "script") and n.key == f.path))]
    if not on:
        return []
    exact = [x for x in on if x[2].path == f.path and x[2].line == f.line]
    pool = exact or on
    kind = min((n.kind for _, _, n in pool), key=PRIORITY.index)
    return [(r, i) for r, i, n in pool if n.kind == kind]


def build(facts: Facts, findings: Sequence[Finding], summary: str, entries: Sequence[Entry],
          launched: Sequence[Launch] | None, title: str, commit: str | None = None) -> MapData:
    """The map of ``entries`` (a selection of ``facts.entries``, in config order)."""
    serve = by_entry(launched) if launched is not None else None
    views: list[EntryView] = []
    for entry in entries:
        mine = serve.get((entry.name, entry.path), []) if serve is not None else None
        views.append(EntryView(entry.name, entry.path, entry.pos.line, entry.runner or "",
                               str(entry.fields.get("framework") or ""),
                               status(entry, [r for r in facts.runs if r.entry is entry], facts),
                               tuple(routes(facts, entry, mine))))
    marks: list[dict[tuple[int, int], list[int]]] = [{} for _ in views]
    loose_of: list[list[int]] = [[] for _ in views]
    by_name: dict[str, list[int]] = {}
    for k, v in enumerate(views):
        by_name.setdefault(v.name, []).append(k)
    flat = [[(r, i, n) for r, route in enumerate(v.routes) for i, n in enumerate(route.nodes)] for v in views]
    loose: list[int] = []
    for index, f in enumerate(findings):
        named = [k for e in f.entries for k in by_name.get(e, [])]
        placed = False
        for k in dict.fromkeys(named) if named else range(len(views)):
            spots = _best(flat[k], f, bool(named))
            for spot in spots:
                marks[k].setdefault(spot, []).append(index)
            placed = placed or bool(spots)
            if named and not spots:
                loose_of[k].append(index)
                placed = True
        if not placed:
            loose.append(index)
    out = tuple(EntryView(v.name, v.path, v.line, v.label, v.framework, v.status, v.routes,
                          {spot: tuple(ix) for spot, ix in marks[k].items()}, tuple(loose_of[k]))
                for k, v in enumerate(views))
    return MapData(title, commit, summary, out, tuple(findings), tuple(loose), shared(facts), len(facts.entries))
