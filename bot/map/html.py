"""The map as one self-contained HTML page: lint's summary at the top, filters (entry, GPU label,
framework, launcher, script, text), one card per entry with its routes drawn as columns of
nodes, findings and "not analysed" reasons on the nodes they concern, and the blast-radius
tables (what runs each launcher and each script).

Everything from the repository (entry names, paths, messages) is escaped as HTML text or
attribute values, control and bidi characters shown as escapes (``bot.report.visible``); the
filter script gets the same names as JSON with ``<``, ``>`` and ``&`` escaped. The stylesheet
and the script are the page's own (``bot.map.assets``): the page needs nothing from the network.
"""

from __future__ import annotations

import html
import json
import urllib.parse
from collections import Counter
from collections.abc import Iterable

from bot.findings import Finding
from bot.map.assets import CSS, JS
from bot.map.build import EntryView, MapData
from bot.map.chain import Node, Route
from bot.map.links import Link
from bot.report import plural, visible


def entries(n: int) -> str:
    """``1 entry``, ``6 entries``."""
    return f"{n} {'entry' if n == 1 else 'entries'}"


def esc(text: object) -> str:
    """Repository text as HTML text or a quoted attribute value."""
    return html.escape(visible(str(text)), quote=True)


def _frag(key: str, value: str) -> str:
    return f"#{key}={urllib.parse.quote(value, safe='')}"


def _where(path: str | None, line: int, link: Link) -> str:
    if path is None:
        return ""
    text = esc(f"{path}:{line}" if line > 0 else path)
    target = link(path, line)
    return f'<a class="where" href="{esc(target)}">{text}</a>' if target else f'<span class="where">{text}</span>'


def _finding(f: Finding, link: Link) -> str:
    target = link(f.path, f.line)
    code = esc(f.code)
    code = f'<a href="{esc(target)}">{code}</a>' if target else code
    where = esc(f"{f.path}:{f.line}")
    return (f'<li class="{f.severity.label}"><b>{code}</b> {esc(f.rule)} <span class="at">{where}</span>: '
            f"{esc(f.message)}</li>")


def _node(node: Node, found: Iterable[Finding], data: MapData, link: Link) -> str:
    found = list(found)
    worst = max((f.severity for f in found), default=None)
    cls = f"node k-{node.kind}" + (" bad" if worst is not None and worst.label == "error" else
                                   " warn" if worst is not None else "")
    target = link(node.path, node.line) if node.path is not None else None
    title = (f'<a class="title" href="{esc(target)}">{esc(node.title)}</a>' if target
             else f'<span class="title">{esc(node.title)}</span>')
    where = ""
    if node.path is not None and node.path != node.title:
        where = f'<span class="where">{esc(f"{node.path}:{node.line}" if node.line else node.path)}</span>'
    elif node.line:
        where = f'<span class="where">line {node.line}</span>'
    parts = [f'<li class="{cls}" data-kind="{node.kind}">', f'<span class="kind">{node.kind}</span>', title, where]
    parts += [f'<span class="detail">{esc(d)}</span>' for d in node.detail]
    parts += [f'<span class="note">{esc(n)}</span>' for n in node.notes]
    if node.kind in ("launcher", "script") and node.key:
        names = data.shared.get(node.kind, {}).get(node.key, ())
        if len(names) > 1:
            one = len(names) == 2
            verb = ("uses" if one else "use") if node.kind == "launcher" else ("runs" if one else "run")
            parts.append(f'<a class="shared" href="{esc(_frag(node.kind, node.key))}">'
                         f"{len(names) - 1} other {'entry' if one else 'entries'} {verb} it</a>")
    if found:
        parts.append('<ul class="findings">' + "".join(_finding(f, link) for f in found) + "</ul>")
    parts.append("</li>")
    return "".join(parts)


def _route(route: Route, r: int, view: EntryView, data: MapData, link: Link) -> str:
    pts = "; ".join(route.points)
    other = f"other workflow path {route.other}: " if route.other else ""
    label = f"{other}{plural(len(route.points), 'point')}: {pts}" if route.points else other.rstrip(": ")
    nodes = "".join(_node(n, (data.findings[i] for i in view.marks.get((r, k), ())), data, link)
                    for k, n in enumerate(route.nodes))
    return f'<div class="route"><p class="points">{esc(label)}</p><ol class="chain">{nodes}</ol></div>'


def _counts(view: EntryView, data: MapData) -> str:
    mine = {i for ix in view.marks.values() for i in ix} | set(view.findings)
    counts = Counter(data.findings[i].severity.label for i in mine)
    return "".join(f'<span class="n {sev}">{plural(counts[sev], sev)}</span>'
                   for sev in ("error", "warning", "info") if counts[sev])


def _entry(k: int, view: EntryView, data: MapData, link: Link) -> str:
    status_cls = "analysed" if view.status == "analysed" else "other"
    status = view.status if view.status == "analysed" else f"not analysed: {view.status}"
    head = (f'<h2><a class="name" href="{esc(_frag("entry", view.name))}">{esc(view.name)}</a>'
            f'{_where(view.path, view.line, link)}'
            + "".join(f'<span class="tag">{esc(t)}</span>' for t in (view.label, view.framework) if t)
            + f'<span class="status {status_cls}">{esc(status)}</span>{_counts(view, data)}</h2>')
    loose = ""
    if view.findings:
        loose = ('<ul class="efind findings">' + "".join(_finding(data.findings[i], link) for i in view.findings)
                 + "</ul>")
    routes = "".join(_route(route, r, view, data, link) for r, route in enumerate(view.routes))
    return f'<article class="entry" id="e{k}" data-entry="{esc(view.name)}">{head}{loose}{routes}</article>'


def _options(key: str, label: str, values: Iterable[str]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in sorted(set(values)) if v)
    return f'<select id="{key}" aria-label="{label}"><option value="">{label}</option>{opts}</select>'


def _shared_table(kind: str, data: MapData, shown: set[str], link: Link) -> str:
    table = data.shared.get(kind, {})
    rows = []
    for key, names in sorted(table.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        listed = ", ".join(f'<a href="{esc(_frag("entry", n))}">{esc(n)}</a>' if n in shown else esc(n)
                           for n in names)
        rows.append(f'<tr><td>{_where(key, 0, link)} <a href="{esc(_frag(kind, key))}">show</a></td>'
                    f'<td class="num">{len(names)}</td><td><details><summary>{entries(len(names))}'
                    f"</summary>{listed}</details></td></tr>")
    title = "Launchers" if kind == "launcher" else "Scripts"
    return (f"<h3>{title}</h3><table><thead><tr><th>{kind}</th><th>entries</th><th>which</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _index(data: MapData) -> str:
    rows = []
    for v in data.entries:
        mine = {i for ix in v.marks.values() for i in ix} | set(v.findings)
        rows.append({"name": v.name, "label": v.label, "framework": v.framework, "launchers": v.keys("launcher"),
                     "scripts": v.keys("script"), "findings": len(mine)})
    text = json.dumps(rows, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: MapData, link: Link) -> str:
    """The page. ``link(path, line)``: where a node links (``bot.map.links``), None for no link."""
    title = esc(data.title)
    commit = f" at {esc(data.commit[:12])}" if data.commit else ""
    selection = "" if len(data.entries) == data.total else f" ({len(data.entries)} of {data.total} entries)"
    launchers = [k for v in data.entries for k in v.keys("launcher")]
    scripts = [k for v in data.entries for k in v.keys("script")]
    filters = ('<form id="filters" role="search" onsubmit="return false">'
               '<input type="search" id="q" placeholder="search entries, paths, engines" aria-label="search">'
               + _options("label", "every GPU label", (v.label for v in data.entries))
               + _options("framework", "every framework", (v.framework for v in data.entries))
               + _options("launcher", "every launcher", launchers)
               + _options("script", "every script", scripts)
               + '<label><input type="checkbox" id="findings"> with findings only</label>'
               '<span class="chip" id="entry-chip" hidden><span></span> <button type="button" '
               'aria-label="clear the entry filter">\u00d7</button></span>'
               '<button type="button" id="reset">reset</button>'
               f'<output id="count">{entries(len(data.entries))}</output></form>')
    loose = ""
    if data.loose:
        loose = (f"<section><h3>Findings on no entry's chain ({len(data.loose)})</h3><ul class=\"findings\">"
                 + "".join(_finding(data.findings[i], link) for i in data.loose) + "</ul></section>")
    shown = {v.name for v in data.entries}
    cards = "".join(_entry(k, v, data, link) for k, v in enumerate(data.entries))
    blast = ('<section id="shared"><h2>Blast radius: what runs each launcher and script</h2>'
             + _shared_table("launcher", data, shown, link) + _shared_table("script", data, shown, link)
             + "</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>benchbot map: {title}</title><style>{CSS}</style></head><body>"
            f"<header><h1>benchbot dispatch map <small>{title}{commit}{esc(selection)}</small></h1>"
            f'<p class="summary" id="summary">{esc(data.summary)}</p>{filters}</header>'
            f'{loose}<main id="entries">{cards}</main>{blast}<p id="perf"></p>'
            f'<script type="application/json" id="map-index">{_index(data)}</script>'
            f"<script>{JS}</script></body></html>\n")
