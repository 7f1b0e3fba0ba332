"""An entry's chain as a Mermaid flowchart (GitHub renders ```` ```mermaid ```` blocks), and the
pull-request section built from them: each added or changed entry's chain before and after,
with what the change moved marked.

Labels are Mermaid text from the repository, so every character outside a small safe set is
written as a numeric entity code (``#34;`` for ``"``, ``#60;`` for ``<``, ``#124;`` for
``|``, ``#45;`` for a ``-`` next to another): nothing in an entry name or a path can end a
label, open a link or a subgraph, become HTML, or spell ``<!--`` or ``-->`` (the bot's hidden
markers stay unforgeable; the only ``-->`` in a chart are its own arrows, which is why the
block is fenced here and not by ``markdown.fenced``, which would break them). Pure: functions
of facts (``serve``'s launches are evaluated from them when servers are asked for, as
``serve`` does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.map.chain import Node, Route, launches, routes
from bot.report import visible

if TYPE_CHECKING:
    from bot.repo.facts import Facts

_SAFE = re.compile(r"[A-Za-z0-9 _.,:/=+()*'-]")
# Mermaid rewrites ``style ...:...#...;`` and ``classDef ...`` anywhere in a diagram's text
# (``utils.encodeEntities``): labels never spell those words.
_REWRITTEN = re.compile(r"style|classDef")
MAX_LABEL = 90  # characters of one label line, the rest elided
STATES = ("moved", "added", "unchanged")


def text(value: str) -> str:
    """Repository text as the inside of a quoted Mermaid label (one line)."""
    value = visible(" ".join(value.split()))
    if len(value) > MAX_LABEL:
        value = value[:MAX_LABEL - 1] + "\u2026"
    out = "".join(ch if _SAFE.match(ch) and not (ch == "-" and "--" in value[max(i - 1, 0):i + 2]) else f"#{ord(ch)};"
                  for i, ch in enumerate(value))
    return _REWRITTEN.sub(lambda m: f"#{ord(m.group()[0])};{m.group()[1:]}", out)


def lines_of(node: Node) -> list[str]:
    """What a node says in a chart: its kind and title, then where (or its first detail)."""
    first = f"{node.kind}: {node.title}"
    where = f"{node.path}:{node.line}" if node.path and node.line else node.path or ""
    if node.kind == "server" and node.detail:
        second = node.detail[0]
    elif node.kind == "handoff":
        second = f"{len(node.detail)} recipe lines" if node.detail else (node.notes[0] if node.notes else "")
    elif node.kind in ("workflow", "config", "launcher", "client") or where != node.title:
        second = where if where != node.title else ""
    else:
        second = ""
    return [first, second] if second else [first]


def _label(node: Node) -> str:
    return "<br/>".join(text(line) for line in lines_of(node))


def _sig(node: Node) -> tuple[str, ...]:
    """What makes two nodes of one chart the same box (its kind and what it says)."""
    return (node.kind, *lines_of(node))


def _key(node: Node) -> tuple[str, str]:
    """What the base's and the head's chains are compared by: the node's kind and what it is,
    line numbers left out (lines added above an entry or in a launcher move nothing)."""
    what = f"{node.title} ({node.detail[0]})" if node.kind == "server" and node.detail else node.title
    return node.kind, what


def flowchart(chain: Sequence[Route], *, marked: Iterable[tuple[str, str]] = (), prefix: str = "n") -> str:
    """A ``flowchart LR`` of ``chain``: its routes as a tree from the config line, a node shared
    while the routes agree up to it (never merged further on: no path is drawn that no route
    takes). ``marked``: the nodes to highlight (what a change moved), by ``(kind, what)`` as
    :func:`_key` gives them."""
    marks = set(marked)
    ids: dict[tuple[tuple[str, ...], ...], str] = {}
    hot: list[str] = []
    out = ["flowchart LR"]
    edges: list[str] = []
    for route in chain:
        path: tuple[tuple[str, ...], ...] = ()
        prev = None
        for node in route.nodes:
            path = (*path, _sig(node))
            if path not in ids:
                ids[path] = f"{prefix}{len(ids)}"
                out.append(f'  {ids[path]}["{_label(node)}"]')
                if _key(node) in marks:
                    hot.append(ids[path])
                if prev is not None:
                    edges.append(f"  {prev} --> {ids[path]}")
            prev = ids[path]
    out += edges
    if hot:
        out.append("  classDef moved fill:#fff5b1,stroke:#bf8700,stroke-width:2px")
        out.append(f"  class {','.join(hot)} moved")
    return "\n".join(out)


def block(chart: str) -> str:
    """A chart as a fenced ```` ```mermaid ```` block (its text never holds a backtick)."""
    return f"```mermaid\n{chart}\n```"


def _checked(facts: Facts) -> Facts:
    if "resolve" not in facts.timings:
        raise ValueError("the map needs evaluated facts (LintResult.facts or gather(tree, profile)); these were "
                         "only read (LintResult.read_facts: no runs)")
    return facts


def chain_of(facts: Facts, name: str, servers: bool = True) -> list[Route] | None:
    """The routes of the entry called ``name`` (the first of that name), None if there is none.
    ``servers``: follow it into its server and client, as ``serve`` does."""
    entry = next((e for e in _checked(facts).entries if e.name == name), None)
    if entry is None:
        return None
    return routes(facts, entry, launches(facts, [entry]) if servers else None)


def entry_flowchart(facts: Facts, name: str, servers: bool = True) -> str | None:
    """The Mermaid flowchart of one entry's chain (no fence), None if there is no such entry."""
    chain = chain_of(facts, name, servers)
    return flowchart(chain) if chain is not None else None


@dataclass(frozen=True)
class Change:
    """One changed entry: its chain in the base (None: added) and in the head."""

    name: str
    before: list[Route] | None
    after: list[Route]

    @property
    def state(self) -> str:
        if self.before is None:
            return "added"
        return "unchanged" if _shape(self.before) == _shape(self.after) else "moved"

    def moved(self) -> list[str]:
        """``script A -> B``: per kind, what the head's chain has that the base's has not."""
        if self.before is None:
            return []
        out = []
        for kind in ("workflow", "runner", "launcher", "script", "handoff", "server", "client"):
            old = list(dict.fromkeys(_key(n)[1] for r in self.before for n in r.nodes if n.kind == kind))
            new = list(dict.fromkeys(_key(n)[1] for r in self.after for n in r.nodes if n.kind == kind))
            if old != new:
                gone = [x for x in old if x not in new] or ["(none)"]
                came = [x for x in new if x not in old] or ["(none)"]
                out.append(f"{kind}: {', '.join(gone)} \u2192 {', '.join(came)}")
        return out


def _shape(chain: Sequence[Route]) -> set[tuple[tuple[str, str], ...]]:
    return {tuple(_key(n) for n in r.nodes) for r in chain}


def changes(base: Facts | None, head: Facts, names: Iterable[str], servers: bool = True) -> list[Change]:
    """The chains of the changed entries that the head has, moved first, then added, then
    unchanged (each in the order given)."""
    found = []
    for name in dict.fromkeys(names):
        after = chain_of(head, name, servers)
        if after is None:
            continue
        before = chain_of(base, name, servers) if base is not None else None
        found.append(Change(name, before, after))
    return sorted(found, key=lambda c: STATES.index(c.state))


def pr_section(base: Facts | None, head: Facts, changed: Iterable[str], *, limit: int = 5,
               servers: bool = True, title: str = "Dispatch chains of the changed entries") -> str:
    """The pull request's dispatch-chain section (markdown): for each added or changed entry
    ``changed`` names that the head has, its chain as Mermaid flowcharts inside a collapsed
    ``<details>``: before and after when the change moved it (what moved highlighted), else
    one chart. At most ``limit`` entries, the rest counted. "" when no entry is left to show.

    ``base`` and ``head``: evaluated facts (``LintResult.facts``; ``read_facts`` raises
    ValueError), base None for a repo with no base. ``servers``: follow into the server and
    client (evaluates the shown entries' scripts, as ``serve`` does)."""
    from bot.report.markdown import html_text

    names = list(dict.fromkeys(changed))
    light = changes(base, head, names, servers=False)  # cheap: who moved, to choose whom to show
    shown = [c.name for c in light[:max(limit, 0)]]
    full = changes(base, head, shown, servers) if servers else light[:max(limit, 0)]
    if not light:
        return ""
    out = [f"### {html_text(title)}", ""]
    for c in full:
        summary = f"<code>{html_text(c.name)}</code>: "
        if c.state == "moved":
            summary += "moved; " + html_text("; ".join(c.moved()[:3]))
        elif c.state == "added":
            summary += "a new entry"
        else:
            summary += "its chain is unchanged"
        out += ["<details>", f"<summary>{summary}</summary>", ""]
        if c.state == "moved" and c.before is not None:
            before = {_key(n) for r in c.before for n in r.nodes}
            after = {_key(n) for r in c.after for n in r.nodes}
            out += ["**Before** (base)", "", block(flowchart(c.before, marked=before - after, prefix="b")),
                    "", "**After** (head)", "", block(flowchart(c.after, marked=after - before, prefix="a"))]
        else:
            out += [block(flowchart(c.after))]
        out += ["", "</details>", ""]
    rest = light[len(full):]
    if rest:
        counts = [f"{sum(1 for c in rest if c.state == s)} {s}" for s in STATES if any(c.state == s for c in rest)]
        out += [f"\u2026 and {len(rest)} more {'entry' if len(rest) == 1 else 'entries'} ({', '.join(counts)}).", ""]
    return "\n".join(out)
