"""What the speculative-decoding rules look at: the server each (entry, point) starts, read
the way ``serve`` reads it, for the entries where speculation is in question.

A site is one (entry, point, launcher) with the benchmark script it dispatches and the
server command that script starts. Sites are made for

- every point that asks for speculative decoding (``spec-decoding`` other than ``none``);
- every other point whose dispatched script says anything speculative (``spec-unexpected``);
- multinode entries handed to a tool: their recipe's workers (nothing is evaluated).

Cost is what decides the shape (the rules run inside every cold lint):

- the launcher is not evaluated again: the lint's own run (``Facts.runs``) already holds the
  environment it hands the script (``Handed``);
- the script is evaluated with the serve sinks on, and each path ends at its server
  (``Facts.stop_at``): the rules need the server, not what follows it;
- one point per group (scenario, sequence lengths, spec-decoding), as lint evaluates
  launchers, unless the script switches speculation on a variable that differs between
  the group's points (``bot.serve.specswitch``: ``case "$CONC"``, ``if [ "$TP" ...``): then
  every point, at every concurrency when the switch reads the concurrency;
- what only some rules need is made when asked: the eval-only run (``eval_site``) and the
  base sibling's server (``base_server``).

Facts only: nothing here says a setting is wrong.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.launches import specstatic
from bot.launches.gather import SERVE_ENV, _command, handed_env, serve_facts
from bot.launches.gather import unexported as unexported_vars
from bot.launches.launch import concurrencies
from bot.repo.env.points import point_key
from bot.repo.facts import Facts, Run
from bot.repo.files import parsed
from bot.repo.load.configs import Entry, Point
from bot.serve import specswitch
from bot.serve.model import ENGINES, MARK, Command
from bot.shell.evaluator.state import Handed
from bot.shell.ir.values import Val, known, lit, render

MAX_POINT_SITES = 48  # evaluations one group may spend on a per-point switch
# Paths a script's evaluation keeps apart: fewer than ``serve``'s (bot.launches.gather.SCRIPT_PATHS,
# 4) halves the cost; on InferenceX HEAD every server command read is the same with 2 as with 4.
SCRIPT_PATHS = 2


@dataclass(frozen=True)
class Site:
    """One (entry, point, launcher) and the server its script starts."""

    entry: Entry
    point: Point  # the point evaluated
    points: tuple[Point, ...]  # the points this site stands for (its group, or itself)
    conc: str | None  # the concurrency evaluated (None: the point's first)
    # the concurrencies this site stands for when the script switches on the concurrency
    # (those on the same side of every threshold it compares it with); empty: all of them
    concs: tuple[str, ...]
    launcher: str
    script: str | None  # None: a multinode recipe
    server: Command | None
    run: Run | None = None
    workers: Mapping[str, Command] = field(default_factory=dict)  # multinode: "prefill" / "decode" ...
    unexported: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value, "path:line")
    env: Mapping[str, Val] = field(default_factory=dict)  # what reached the script
    switched: tuple[str, ...] = ()  # variables the script switches speculation on (per-point sites)
    reasons: tuple[str, ...] = ()  # why ``server`` is None
    recipe: str | None = None

    @property
    def wanted(self) -> str:
        """What the point asks for: ``none``, ``mtp``, ``eagle3``... (lower case)."""
        return wanted(self.point)

    @property
    def servers(self) -> list[tuple[str, Command]]:
        """(role, command): the server, or every worker of a multinode recipe."""
        if self.server is not None:
            return [("server", self.server)]
        return list(self.workers.items())


def wanted(point: Point) -> str:
    value = point.spec_decoding.strip().lower()
    return value if value not in ("", "null", "false", "no") else "none"


def _twin(facts: Facts) -> Facts:
    """The lint's facts with the serve sinks on, ending each path at its server (what was read
    and parsed is shared; evaluations are not: with sinks they record more)."""
    return serve_facts(facts, "spec.facts", stop_at=frozenset(ENGINES), cache_mode="spec-view")


def sites(facts: Facts) -> list[Site]:
    """Every site of the repo, made once per lint (``facts.memo``)."""
    made = facts.memo.get("spec.sites")
    if made is None:
        t0 = time.perf_counter()
        made = facts.memo["spec.sites"] = list(_sites(facts))
        facts.timings["spec"] = facts.timings.get("spec", 0.0) + time.perf_counter() - t0
    return made


def _sites(facts: Facts) -> list[Site]:
    out: list[Site] = []
    seen: set[tuple[str, str, int, str]] = set()
    hints: dict[str, bool] = {}
    for run in facts.runs:
        entry = run.entry
        key = (entry.path, entry.name, run.point.pos.line, run.launcher)
        if entry.multinode or run.bound_hit or run.result is None or key in seen:
            continue
        seen.add(key)
        scripts = [s for s in (known(d.target) for d in run.dispatches) if s and facts.tree.is_file(s)]
        if wanted(run.point) == "none" and not any(_hinted(facts, s, hints) for s in scripts):
            continue
        group = [p for p in entry.points if point_key(facts.profile, p) == point_key(facts.profile, run.point)]
        out.extend(_run_sites(facts, run, group))
    out.extend(_recipe_sites(facts))
    return out


def _hinted(facts: Facts, script: str, memo: dict[str, bool]) -> bool:
    if script not in memo:
        memo[script] = specswitch.mentions_spec(parsed.text(facts, script) or "")
    return memo[script]


def _run_sites(facts: Facts, run: Run, group: list[Point]) -> list[Site]:
    assert run.result is not None
    out: list[Site] = []
    env = _launcher_env(facts, run.entry, run.point, run)
    for h in run.result.handed():
        script = known(h.target)
        if not script or not facts.tree.is_file(script):
            continue
        script_env = handed_env(env, h)
        switched = _per_point(facts, run, script, group)
        if switched:
            out.extend(_point_sites(facts, run, script, group, switched, h, script_env))
        else:
            out.append(_site(facts, run, run.point, tuple(group), None, script, script_env, env))
    return out


def _launcher_env(facts: Facts, entry: Entry, point: Point, run: Run,
                  names: tuple[str, ...] | None = None) -> dict[str, Val]:
    """The env the launcher starts with for ``point``, in the run ``serve`` models (the
    benchmark run: ``EVAL_ONLY=false``, as bot.launches.gather.SERVE_ENV); only ``names`` of it
    when given."""
    env = facts.env_for(entry, point, run.node, run.label) if names is None else \
        facts.envs.env_some(entry, point, run.node, run.label, names)
    env.update({k: lit(v) for k, v in SERVE_ENV.items() if k in env})
    return env


def _per_point(facts: Facts, run: Run, script: str, group: list[Point]) -> tuple[str, ...]:
    """The variables the script switches speculation on that differ between the group's
    points or concurrencies (empty: one evaluation stands for the group)."""
    switched = specstatic.switches(facts, script)
    if not switched:
        return ()
    conc_var = facts.profile.conc_var
    envs = [facts.envs.env_some(run.entry, p, run.node, run.label, switched) for p in group]
    out = [n for n in switched if n != "EVAL_ONLY" and len({render(e.get(n, lit("")), MARK) for e in envs}) > 1]
    if conc_var in switched and any(len(concurrencies(p)) > 1 for p in group):
        out.append(conc_var)
    return tuple(dict.fromkeys(out))


def _point_sites(facts: Facts, run: Run, script: str, group: list[Point], switched: tuple[str, ...], h: Handed,
                 script_env: dict[str, Val]) -> list[Site]:
    """One site per distinct value of the switched variables over the group's points (and
    concurrencies, when the switch reads the concurrency). The script's env is the run's with
    those values put in when the launcher hands them on as they came; else the launcher is
    evaluated for the point."""
    conc_var = facts.profile.conc_var
    cuts = {n: specstatic.cuts(facts, script, n) for n in switched}
    handed = dict(h.env)
    passed = all(n not in handed and (n not in h.dropped if h.inherit_all else n in h.inherited) for n in switched)
    by_values: dict[tuple[object, ...], tuple[Point, str | None, dict[str, Val], list[str], list[Point]]] = {}
    for point in group:
        values_of: list[str | None] = list(concurrencies(point)) if conc_var in switched else [None]
        some = _launcher_env(facts, run.entry, point, run, switched)  # what the classes read
        for conc in values_of or [None]:
            if conc is not None and conc_var in some:
                some[conc_var] = lit(conc)
            # values that take the same branches of every switch (``$CONC -le 8``) share a site
            values = tuple(_class(render(some.get(n, lit("")), MARK), cuts[n]) for n in switched)
            if values in by_values:
                if point not in by_values[values][4]:
                    by_values[values][4].append(point)
                if conc is not None:
                    by_values[values][3].append(conc)
                continue
            if len(by_values) >= MAX_POINT_SITES:
                break
            env = _launcher_env(facts, run.entry, point, run)
            if conc is not None and conc_var in env:
                env[conc_var] = lit(conc)
            by_values[values] = (point, conc, env, [conc] if conc is not None else [], [point])
    out: list[Site] = []
    for point, conc, env, concs, points in by_values.values():
        if passed:
            senv = dict(script_env)
            senv.update({n: env[n] for n in switched if n in env})
        else:
            result = facts.evaluate(run.launcher, env)
            h2 = next((x for x in result.handed() if known(x.target) == script), None)
            if h2 is None:
                continue  # this point runs another script: the launcher's business
            senv = handed_env(env, h2)
        out.append(_site(facts, run, point, tuple(points), conc, script, senv, env, switched,
                         tuple(dict.fromkeys(concs))))
    return out


def _class(value: str, cuts: tuple[specswitch.Cut, ...] | None) -> object:
    return value if cuts is None else specswitch.value_class(value, cuts)


def _site(facts: Facts, run: Run, point: Point, points: tuple[Point, ...], conc: str | None, script: str,
          env: dict[str, Val], inputs: Mapping[str, Val], switched: tuple[str, ...] = (),
          concs: tuple[str, ...] = ()) -> Site:
    """``env``: what reaches the script; ``inputs``: the env the launcher started with."""
    twin = _twin(facts)
    result = twin.evaluate(script, env, max_paths=SCRIPT_PATHS)
    reasons: list[str] = []
    if result.stopped is not None:
        hit = result.stopped
        reasons.append(f"the script's evaluation ran out of its {hit.what} ({hit.path}:{hit.line})")
    memo = twin.memo.setdefault("serve.commands", {})
    served = [s for s in result.served() if s.kind != "client"]
    servers = [_command(s, env, memo, inputs) for s in served]
    if not servers and not reasons:
        reasons.append("the script starts no server we recognise")
    return Site(run.entry, point, points, conc, concs, run.launcher, script, servers[0] if servers else None, run,
                unexported=unexported_vars(served), env=env, switched=switched, reasons=tuple(reasons))


def _recipe_sites(facts: Facts) -> list[Site]:
    from bot.launches.multinode import recipe_launches

    out: list[Site] = []
    hints: dict[str, bool] = {}

    def keep(point: Point, recipe: str) -> bool:  # a plain point counts only if its recipe says anything speculative
        return wanted(point) != "none" or _hinted(facts, recipe, hints)

    for entry in facts.entries:
        if not entry.multinode or facts.jobs.of(entry) is None:
            continue
        for launch in recipe_launches(facts, entry, keep, _SPEC_ARGS):
            if launch.workers:
                out.append(Site(entry, launch.point, (launch.point,), launch.conc, (), launch.launcher, None, None,
                                workers=launch.workers, reasons=launch.reasons, recipe=launch.recipe))
    return out


# Recipe worker args the spec rules read (the rest of a worker's command is not normalized):
# speculative settings (``speculative-*``, TRT-LLM ``speculative_config``), the model
_SPEC_ARGS = re.compile(r"spec|draft|mtp|eagle|nextn|model", re.I)


def eval_site(facts: Facts, site: Site, always: bool = False) -> Site | None:
    """The same site in an eval-only run (``EVAL_ONLY=true``); None when the script does not
    switch speculation on ``EVAL_ONLY`` in a way that may turn it off
    (``specswitch.may_disable``), or, with ``always``, when it never reads ``EVAL_ONLY``
    (synthetic acceptance: a switch between synthetic and real verification keeps speculation
    on, and still matters). Made when a rule asks, once per site."""
    if site.script is None or site.run is None:
        return None
    memo = facts.memo.setdefault("spec.eval", {})
    key = (id(site), always)
    if key not in memo:
        memo[key] = None
        text = parsed.text(facts, site.script) or ""
        wanted_run = (specswitch.reads(text, "EVAL_ONLY") if always
                      else specstatic.eval_may_disable(facts, site.script))
        if wanted_run:
            env = dict(site.env)
            env["EVAL_ONLY"] = lit("true")
            memo[key] = _site(facts, site.run, site.point, site.points, site.conc, site.script, env, site.env,
                              ("EVAL_ONLY",), site.concs)
    return memo[key]  # type: ignore[no-any-return]


def base_sibling(facts: Facts, entry: Entry) -> Entry | None:
    """The entry an ``-mtp`` (``-eagle``, ``-spec``) entry is a variant of: the same name without
    that word, in the same config file."""
    words = entry.name.split("-")
    for i, w in enumerate(words):
        if w.lower() in _SPEC_WORDS:
            name = "-".join(words[:i] + words[i + 1:])
            hit = next((e for e in facts.entries if e.name == name and e.path == entry.path), None)
            if hit is not None:
                return hit
    return None


_SPEC_WORDS = frozenset({"mtp", "eagle", "eagle3", "spec", "dspark"})


def base_server(facts: Facts, site: Site, base: Entry) -> Command | None:
    """The server ``base`` starts at the point of its own that matches ``site``'s (same
    scenario and sequence lengths, the first such), on the same launcher. Made when asked."""
    memo = facts.memo.setdefault("spec.base", {})
    key = (base.path, base.name, site.launcher, site.point.scenario, str(site.point.seq.get("isl")),
           str(site.point.seq.get("osl")))
    if key in memo:
        return memo[key]  # type: ignore[no-any-return]
    memo[key] = None
    run = next((r for r in facts.runs if r.entry is base and r.launcher == site.launcher
                and r.point.scenario == site.point.scenario and r.point.seq.get("isl") == site.point.seq.get("isl")
                and r.point.seq.get("osl") == site.point.seq.get("osl") and r.result is not None), None)
    if run is None or run.result is None or run.bound_hit:
        return None
    env = _launcher_env(facts, base, run.point, run)
    for h in run.result.handed():
        script = known(h.target)
        if script and facts.tree.is_file(script):
            got = _site(facts, run, run.point, (run.point,), None, script, handed_env(env, h), env)
            memo[key] = got.server
            break
    return memo[key]  # type: ignore[no-any-return]


def site_at(facts: Facts, run: Run, point: Point) -> Site | None:
    """The server ``point`` (a point of ``run``'s entry) starts on ``run``'s launcher and node:
    the run's own evaluation when it is the run's point, else the launcher evaluated for it
    (cached by what it reads, as every evaluation). None when it dispatches no script."""
    env = _launcher_env(facts, run.entry, point, run)
    result = run.result if point is run.point else facts.evaluate(run.launcher, env)
    if result is None:
        return None
    for h in result.handed():
        script = known(h.target)
        if script and facts.tree.is_file(script):
            return _site(facts, run, point, (point,), None, script, handed_env(env, h), env)
    return None
