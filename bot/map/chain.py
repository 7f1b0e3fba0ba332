"""An entry's chain as nodes: config line -> workflow job -> runner label -> launcher (the line
that built the script path) -> script -> server -> client, each node with the ``path:line`` it
comes from.

Built from the facts lint, ``dispatch`` and ``serve`` use (``Facts.runs``, ``Facts.path_runs``,
``Facts.jobs``, the workflow call each run's env comes from, and ``bot.launches.gather``'s
launches): nothing is evaluated here that those did not evaluate, and nothing is judged.
A route is one way through the chain; the points of an entry that take the same way share
it. Entries handed to an external tool end in a ``handoff`` node (the recipes the entry names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.repo.load.configs import Entry, Point
from bot.shell.ir.values import describe, known

if TYPE_CHECKING:
    from bot.launches.launch import Launch
    from bot.repo.facts import Facts, Run
    from bot.serve.model import Command
    from bot.shell.evaluator.evaluate import Dispatch

KINDS = ("config", "workflow", "runner", "launcher", "script", "handoff", "server", "client")
MAX_DETAIL = 12  # detail lines a node shows (recipes of a hand-off), the rest counted


@dataclass(frozen=True)
class Node:
    """One step of a chain. ``path``/``line``: where it comes from (line 0: the whole file);
    ``files``: every repo file it stands for (a finding on one of them concerns it)."""

    kind: str  # one of KINDS
    title: str
    detail: tuple[str, ...] = ()
    path: str | None = None
    line: int = 0
    files: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()  # what was not analysed here, and why
    key: str = ""  # what it stands for, for filters and sharing: the launcher's or the script's path, the label


@dataclass(frozen=True)
class Route:
    """One way through the chain, and the points of the entry that take it."""

    nodes: tuple[Node, ...]
    points: tuple[str, ...]
    other: str = ""  # "": the sweep's main workflow path; else the other path's name


def point_text(point: Point) -> str:
    """``fixed-seq-len 1024/1024 spec=mtp, line 33``."""
    seq = point.seq
    size = f" {seq.get('isl')}/{seq.get('osl')}" if "isl" in seq or "osl" in seq else ""
    spec = f" spec={point.spec_decoding}" if point.spec_decoding != "none" else ""
    return f"{point.scenario}{size}{spec}, line {point.pos.line}"


def status(entry: Entry, runs: Sequence[Run], facts: Facts) -> str:
    """How far the analysis got for ``entry``, as lint's coverage counts it
    (``bot.repo.jobs.coverage``): analysed, handed to a tool, rejected or unknown."""
    if any(r.dispatches for r in runs):
        return "analysed"
    job = facts.jobs.of(entry)
    if job is not None:
        return f"handed to {job.tool}"
    if runs and all(r.exits_early for r in runs):
        return "rejected"
    return "unknown"


def launches(facts: Facts, entries: Sequence[Entry]) -> list[Launch]:
    """What ``serve`` reports for ``entries``: the lint's facts with the serve sinks on (made
    once per facts, ``bot.launches.gather.serve_facts``), one point per group."""
    from bot.launches.gather import gather, serve_facts

    return list(gather(serve_facts(facts), list(entries)))


def config_node(entry: Entry) -> Node:
    fw = entry.fields.get("framework")
    detail = tuple(x for x in (f"framework {fw}" if fw else "", "multinode" if entry.multinode else "") if x)
    return Node("config", entry.name, detail, entry.path, entry.pos.line, frozenset({entry.path}), key=entry.name)


def _runner_node(facts: Facts, label: str | None, node: str, notes: tuple[str, ...] = ()) -> Node:
    path = facts.runners.path
    pos = facts.runners.label_pos.get(label or "")
    return Node("runner", label if label is not None else "(no runner label)", (f"node {node}",) if node else (),
                path if pos is not None else None, pos.line if pos is not None else 0,
                frozenset({path}) if path else frozenset(), notes, label or "")


def _workflow_node(facts: Facts, run: Run) -> Node:
    call = facts.envs.call_for(run.entry, run.point, run.node, run.label)
    if call is None:
        return Node("workflow", "profile env table", ("no workflow step runs a launcher: the env is the profile's",),
                    key="profile env table")
    hops = tuple(f"{h.path}:{h.line} job {h.job}" for h in call.chain)
    files = frozenset({call.path, *(h.path for h in call.chain)})
    return Node("workflow", call.name, hops, call.path, call.line, files, key=call.name)


def _launcher_node(facts: Facts, run: Run, d: Dispatch | None) -> Node:
    files = {run.launcher, run.real}
    title = run.launcher if run.real == run.launcher else f"{run.launcher} -> {run.real}"
    notes = [f"ran out of its {h.what} at {h.path}:{h.line}" for h in run.budget_hits]
    if d is not None:
        files.add(d.built_at.path)
        return Node("launcher", title, ("builds the script path", f"via {d.via}"),
                    d.built_at.path, d.built_at.line, frozenset(files), tuple(notes), run.launcher)
    if run.handoffs:
        at = run.handoffs[0].loc
        files.add(at.path)
        return Node("launcher", title, (f"hands the job to {run.handoffs[0].name}",),
                    at.path, at.line, frozenset(files), tuple(notes), run.launcher)
    if run.exits_early:
        notes.append("every path exits before it dispatches a script"
                     + (f" (exit at {', '.join(f'{x.path}:{x.line}' for x in run.exits)})" if run.exits else ""))
    else:
        notes.append("dispatches no benchmark script we can read")
    return Node("launcher", title, (), run.launcher, 0, frozenset(files), tuple(notes), run.launcher)


def _script_node(facts: Facts, d: Dispatch) -> Node:
    path = known(d.target)
    if path is None:
        return Node("script", describe(d.target), ("path not known statically",),
                    notes=("the script's path has parts the repository cannot know",), key=describe(d.target))
    if not facts.tree.is_file(path):
        return Node("script", path, ("missing",), None, 0, frozenset({path}), (f"{path} does not exist",), path)
    return Node("script", path, (), path, 0, frozenset({path}), key=path)


def _handoff_node(facts: Facts, entry: Entry, tool: str) -> Node:
    job = facts.jobs.of(entry)
    lines: list[str] = []
    files: set[str] = set()
    first: str | None = None
    for ref in job.refs if job is not None else ():
        recipe = job.recipe(ref) if job is not None else None
        if recipe is None:
            continue
        if recipe.found:
            files.add(recipe.found)
            first = first or recipe.found
            where = recipe.found
        elif recipe.expected:
            where = f"{recipe.expected} (missing)"
        else:
            where = f"only in {tool}'s repository"
        lines.append(f"{ref.setting}={ref.value} -> {where}")
    lines = list(dict.fromkeys(lines))
    if len(lines) > MAX_DETAIL:
        lines = [*lines[:MAX_DETAIL], f"and {len(lines) - MAX_DETAIL} more recipes"]
    notes = () if lines else (f"no recipe file is named for {tool}",)
    return Node("handoff", f"handed to {tool}", tuple(lines), first, 0, frozenset(files), notes, tool)


def _value(v: Any) -> str:
    return "?" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


def command_summary(cmd: Command) -> str:
    """``TP 8, EP 1, spec mtp x3``: the parallelism and speculative settings of a server."""
    from bot.launches.parallel import effective
    from bot.report.serve import TP_KEYS

    key = TP_KEYS.get(cmd.engine)
    tp = _value(cmd.args.get(key)) if key and key in cmd.args else ("1" if key else "?")
    ep = effective(cmd, "ep")
    spec = cmd.spec
    if spec is None:
        spec_text = "spec off"
    else:
        kind = spec.get("kind") or spec.get("method")
        n = spec.get("num_speculative_tokens")
        spec_text = f"spec {_value(kind)}" + (f" x{_value(n)}" if n is not None else "")
    return f"TP {tp}, EP {ep if ep is not None else '?'}, {spec_text}"


def _src(text: str | None) -> tuple[str | None, int]:
    if not text:
        return None, 0
    path, _, line = text.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (text, 0)


def served_nodes(launch: Launch | None) -> tuple[Node, ...]:
    """The server and client nodes of a launch (none when serve was not asked)."""
    from bot.report.serve import status as serve_status

    if launch is None:
        return ()
    state, why = serve_status(launch)
    notes = tuple(why) if state != "resolved" else ()
    if launch.workers:
        models = sorted({c.model or "(model unknown)" for c in launch.workers.values()})
        engines = sorted({c.engine for c in launch.workers.values()})
        detail = tuple(f"{role}: {command_summary(c)}" for role, c in launch.workers.items())
        files = frozenset({launch.recipe} if launch.recipe else ())
        return (Node("server", f"{'/'.join(engines)} {', '.join(models)}", detail, launch.recipe, 0, files, notes),)
    if launch.server is None:
        return (Node("server", "no server found", (), None, 0, frozenset(), notes),)
    cmd = launch.server
    path, line = _src(cmd.sources.get("model") or next(iter(cmd.sources.values()), None))
    files = frozenset(p for p in (_src(s)[0] for s in cmd.sources.values()) if p)
    extra = [f"{len(launch.others)} more server command(s) on other paths"] if launch.others else []
    extra += [f"{name}={value} set without export at {src}: it never reaches the server"
              for name, (value, src) in launch.unexported.items()]
    server = Node("server", f"{cmd.engine} {cmd.model or '(model unknown)'}", (command_summary(cmd),),
                  path, line, files, notes + tuple(extra))
    if launch.client is None:
        return (server,)
    cpath, cline = _src(next(iter(launch.client.sources.values()), None))
    return server, Node("client", "benchmark client", (), cpath, cline, frozenset({cpath} if cpath else ()))


class _Routes:
    """Routes in first-seen order, the points of equal routes merged."""

    def __init__(self) -> None:
        self.order: dict[tuple[tuple[Node, ...], str], list[str]] = {}

    def add(self, nodes: Iterable[Node], points: Iterable[str], other: str = "") -> None:
        got = self.order.setdefault((tuple(nodes), other), [])
        got.extend(p for p in points if p not in got)

    def routes(self) -> list[Route]:
        return [Route(nodes, tuple(points), other) for (nodes, other), points in self.order.items()]


def routes(facts: Facts, entry: Entry, launched: Sequence[Launch] | None = None) -> list[Route]:
    """The routes of ``entry``; ``launched``: its launches from ``serve`` (None: no server and
    client nodes). A launch no run of lint's matches (a launcher assumed for a label that
    lists no nodes) makes a route of its own."""
    by_key: dict[tuple[int, str, str | None], Launch] = {}
    for launch in launched or ():
        by_key.setdefault((launch.point.pos.line, launch.launcher, launch.script), launch)
    out = _Routes()
    runs = [r for r in facts.runs if r.entry is entry]
    for run in runs:
        _run_routes(facts, run, by_key, launched, out)
    _other_routes(facts, entry, out)
    if not runs:  # serve may still have assumed a launcher; else the chain ends at the runner label
        unrun: list[Launch | None] = [*launched] if launched else [None]
        for one in unrun:
            out.add(_unrun(facts, entry, one), [point_text(one.point)] if one is not None else [])
    return out.routes()


def _run_routes(facts: Facts, run: Run, by_key: Mapping[tuple[int, str, str | None], Launch],
                launched: Sequence[Launch] | None, out: _Routes) -> None:
    """The routes of one of lint's runs (an entry, a point, a launcher)."""
    head = (config_node(run.entry), _workflow_node(facts, run), _runner_node(facts, run.label, run.node))
    point = point_text(run.point)
    for d in run.dispatches:
        line, script = run.point.pos.line, known(d.target)
        launch = by_key.get((line, run.launcher, script)) or by_key.get((line, run.launcher, None))
        out.add((*head, _launcher_node(facts, run, d), _script_node(facts, d),
                 *(served_nodes(launch) if launched is not None else ())), [point])
    if not run.dispatches and run.handoffs:
        tool = run.handoffs[0].name
        mine = [x for x in launched or () if x.launcher == run.launcher and x.script is None]
        servers = _merge_servers([n for x in mine for n in served_nodes(x)])
        out.add((*head, _launcher_node(facts, run, None), _handoff_node(facts, run.entry, tool), *servers),
                [point_text(p) for p in run.entry.points])
    elif not run.dispatches:
        out.add((*head, _launcher_node(facts, run, None)), [point])


def _other_routes(facts: Facts, entry: Entry, out: _Routes) -> None:
    """The other workflow paths of ``entry`` where what runs differs from the main path (as
    ``dispatch`` lists them)."""
    for pr in facts.path_runs:
        if pr.entry is not entry or pr.point is None:
            continue
        targets = {known(d.target) for d in pr.result.dispatches()}
        if pr.main is not None and targets == {known(d.target) for d in pr.main.dispatches}:
            continue
        call = pr.group.call
        wf = Node("workflow", pr.group.name, tuple(f"{h.path}:{h.line} job {h.job}" for h in call.chain),
                  call.path, call.line, frozenset({call.path, *(h.path for h in call.chain)}), key=pr.group.name)
        head = (config_node(entry), wf, _runner_node(facts, pr.label, pr.node))
        for d in pr.result.dispatches():
            node = Node("launcher", pr.launcher, ("builds the script path", f"via {d.via}"),
                        d.built_at.path, d.built_at.line, frozenset({pr.launcher, d.built_at.path}), key=pr.launcher)
            out.add((*head, node, _script_node(facts, d)), [point_text(pr.point)], pr.group.name)
        if not pr.result.dispatches():
            paths = pr.result.paths
            why = ("every path exits before it dispatches a script" if paths and all(p.exited for p in paths)
                   else "dispatches nothing on this path")
            launcher = Node("launcher", pr.launcher, (), pr.launcher, 0, frozenset({pr.launcher}), (why,), pr.launcher)
            out.add((*head, launcher), [point_text(pr.point)], pr.group.name)


def _unrun(facts: Facts, entry: Entry, launch: Launch | None) -> tuple[Node, ...]:
    """The chain of an entry lint evaluated no run of, as far as it goes."""
    label = entry.runner
    labels = facts.runners.labels
    if launch is not None and launch.launcher:  # serve assumed the label's only launcher: it says why
        why = [launch.assumed] if launch.assumed else []
    else:  # serve's reason when it has one, else what lint's facts say
        why = list(launch.reasons) if launch is not None else []
        if not why and label is None:
            why.append("the entry names no runner label")
        elif not why and label not in labels:
            why.append(f"runner label {label!r} is not in {facts.runners.path or 'runners.yaml'}")
        elif not why and label is not None:
            launchers = sorted({facts.launcher_of_node(n) for n in labels[label]})
            why += [f"launcher {p} does not exist" for p in launchers if not facts.tree.is_file(p)]
            why += [f"launcher {p} cannot be analysed (see lint)" for p in launchers if p in facts.broken_launchers]
        return config_node(entry), _runner_node(facts, label, "", tuple(dict.fromkeys(why)))
    nodes = [config_node(entry), _runner_node(facts, label, "", tuple(why)),
             Node("launcher", launch.launcher, ("assumed: the only launcher named for the label",), launch.launcher, 0,
                  frozenset({launch.launcher}), key=launch.launcher)]
    if launch.script is not None:
        nodes.append(Node("script", launch.script, (), launch.script, 0, frozenset({launch.script}), key=launch.script))
    nodes.extend(served_nodes(launch))
    return tuple(nodes)


def _merge_servers(nodes: Sequence[Node]) -> tuple[Node, ...]:
    """The worker servers of a hand-off's recipes as one node: distinct summaries, counted."""
    servers = [n for n in nodes if n.kind == "server"]
    if not servers:
        return ()
    counts: dict[str, int] = {}
    for n in servers:
        for line in (f"{n.title}: {d}" for d in n.detail):
            counts[line] = counts.get(line, 0) + 1
    lines = [f"{text} ({n} recipes)" if n > 1 else text for text, n in counts.items()]
    if len(lines) > MAX_DETAIL:
        lines = [*lines[:MAX_DETAIL], f"and {len(lines) - MAX_DETAIL} more"]
    notes = tuple(dict.fromkeys(x for n in servers for x in n.notes))
    files = frozenset(f for n in servers for f in n.files)
    titles = sorted({n.title for n in servers if n.detail})
    title = titles[0] if len(titles) == 1 else f"{len(titles)} kinds of server" if titles else "no server found"
    return (Node("server", title, tuple(lines), None, 0, files, notes[:MAX_DETAIL]),)


def by_entry(launched: Iterable[Launch]) -> Mapping[tuple[str, str], list[Launch]]:
    """Launches grouped by their entry's (name, config path)."""
    out: dict[tuple[str, str], list[Launch]] = {}
    for launch in launched:
        out.setdefault((launch.entry.name, launch.entry.path), []).append(launch)
    return out
