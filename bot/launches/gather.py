"""What each (entry, point, launcher) serves: the chain followed into the benchmark script.

For every entry and search-space point the launcher is evaluated under the entry's env
with the serve sinks on (``bot.shell.evaluator.serving``); each benchmark script it dispatches is
then evaluated under the environment that reaches it (``Handed``: the launcher's exports,
or what crosses ``docker run -e`` / ``srun --export``). The server and client commands the
script starts (``Served``) are normalized by :func:`bot.serve.normalize`. Entries handed
to an external tool read their engine args from the recipe (:mod:`bot.launches.multinode`).

Facts only: nothing here says a command is wrong. What could not be resolved is kept
as a reason, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from bot.launches.launch import Launch, concurrencies
from bot.repo.env.points import representatives
from bot.repo.facts import Facts
from bot.repo.labels import launcher_candidates
from bot.repo.load.configs import Entry, Point
from bot.serve import detect, normalize, normalize_client
from bot.serve.model import MARK, Command, File, Tok, engine_env, engine_env_var
from bot.shell.evaluator.evaluate import Handed, Loc, Result, Served, Sink
from bot.shell.ir.values import Val, known, lit, render

# The run serve models is the benchmark (throughput) run, not an eval-only one: in
# InferenceX ``EVAL_ONLY=true`` starts the server with an eval context length instead.
SERVE_ENV = {"EVAL_ONLY": "false"}
# Helper functions (benchmark_lib.sh) that run the benchmark client: fixed-length (its arguments
# are the client's) and agentic (it runs the command ``build_replay_cmd`` left in REPLAY_CMD,
# ``$AIPERF_CLI profile ...``: the client is that command, as the variable holds it at the call).
CLIENT_FUNCTIONS: Mapping[str, str] = {"run_benchmark_serving": "",
                                       "run_agentic_replay_and_write_outputs": "REPLAY_CMD"}


def engine_of(entry: Entry) -> str:
    """The engine an entry's framework names (for counting what was not found)."""
    fw = str(entry.fields.get("framework") or "").lower()
    for key, engine in (("sglang", "sglang"), ("vllm", "vllm"), ("trt", "trtllm"), ("atom", "atom")):
        if key in fw:
            return engine
    return fw or "unknown"


# Paths a benchmark script's evaluation keeps apart (fewer than a launcher's: forks in its
# setup helpers, ``pip install ... || ...``, rarely change the server command; merged paths
# make what they disagree on unknown, never a guess).
SCRIPT_PATHS = 4
# Words one of which every command ``detect`` recognises has (besides any ``python*``).
_LAUNCH_WORDS = frozenset({"vllm", "sglang", "trtllm-serve", "run_benchmark_serving"})


def sinks(client_functions: Mapping[str, str] = CLIENT_FUNCTIONS) -> Callable[[list[Val]], Sink | None]:
    """The evaluator's sink test: a server (``bot.serve.detect``) or a client call."""

    def sink(argv: list[Val]) -> Sink | None:
        if not argv:
            return None
        first = known(argv[0])
        if first is not None and first in client_functions:
            return ("client", 1, client_functions[first]) if client_functions[first] else ("client", 1)
        for i, v in enumerate(argv):  # a cheap look for a launch word before the full ``detect``
            k = known(v)
            if k is None:
                if i + 1 < len(argv) and known(argv[i + 1]) == "-m":
                    break
                continue
            base = k.rsplit("/", 1)[-1]
            if base in _LAUNCH_WORDS or base.startswith("python") or base.endswith(".py"):
                break
        else:
            return None
        return detect([render(v, MARK) for v in argv])

    return sink


def serve_facts(facts: Facts, memo_key: str = "serve.facts", **options: object) -> Facts:
    """The lint's facts with the serve sinks on (``options``: more ``Facts`` fields, such as
    ``stop_at``), made once per lint under ``memo_key``: what was read and parsed is shared;
    evaluations are not (with sinks they record more)."""
    twin = facts.memo.get(memo_key)
    if not isinstance(twin, Facts):
        twin = facts.memo[memo_key] = replace(facts, sinks=sinks(), memo={}, _result_cache={}, _spent={},
                                              _spent_total=0.0, **options)  # type: ignore[arg-type]
    return twin


def gather(facts: Facts, entries: list[Entry], all_points: bool = False,
           points_of: Callable[[Entry], list[Point]] | None = None) -> Iterator[Launch]:
    """The launches of ``entries``: one point per group, as lint evaluates them (``all_points``:
    every point at every concurrency; ``points_of``: these points, at their first concurrency).
    A multinode entry handed to a tool lists every point: each names its own recipe, and
    reading one evaluates nothing."""
    from bot.launches.multinode import recipe_launches

    labels = facts.runners.labels
    conc_var = facts.profile.conc_var
    for entry in entries:
        if entry.multinode and facts.jobs.of(entry) is not None:
            yield from recipe_launches(facts, entry)
            continue
        label = entry.runner
        assumed = ""
        if label is None or label not in labels:
            cands = launcher_candidates(facts, label) if label else []
            # a multinode entry's recipe comes from lint's reading of its launcher run, which
            # needs the label's nodes: with an assumed launcher it would be a guess twice over
            if label is None or len(cands) != 1 or entry.multinode:
                named = f" (launchers named for its nodes: {', '.join(cands)})" if cands else ""
                for point in entry.points:
                    yield _nothing(entry, point, None, "", f"runner label {label!r} lists no nodes in runners.yaml, "
                                                           f"so the launcher is unknown{named}")
                continue
            prefix = facts.profile.prefix_of_launcher(cands[0]) or ""
            by_launcher = {cands[0]: f"{prefix}{facts.profile.node_separator}0"}
            assumed = (f"launcher assumed: runner label {label!r} lists no nodes in runners.yaml, and "
                       f"{cands[0]} is the only launcher named for its nodes")
        else:
            by_launcher = {}
            for node in labels[label]:
                by_launcher.setdefault(facts.launcher_of_node(node), node)
        for launcher, node in by_launcher.items():
            # as lint does: one point per group (scenario, sequence lengths, spec-decoding), at
            # its first concurrency; ``all_points``: every point at every concurrency
            points = (points_of(entry) if points_of is not None else list(entry.points) if all_points
                      else representatives(facts.profile, entry.points))
            for point in points:
                concs: list[str | None] = list(concurrencies(point) if all_points else concurrencies(point)[:1])
                for conc in concs or [None]:
                    env = facts.env_for(entry, point, node, label)
                    env.update({k: lit(v) for k, v in SERVE_ENV.items() if k in env})
                    if conc is not None and conc_var in env:
                        env[conc_var] = lit(conc)
                    for launch in _launches(facts, entry, point, conc, launcher, env):
                        yield replace(launch, assumed=assumed) if assumed else launch


def _nothing(entry: Entry, point: Point, conc: str | None, launcher: str, why: str,
             script: str | None = None) -> Launch:
    return Launch(entry, point, conc, launcher, script, None, None, reasons=(why,))


def _launches(facts: Facts, entry: Entry, point: Point, conc: str | None, launcher: str,
              env: dict[str, Val]) -> Iterator[Launch]:
    if not facts.tree.is_file(launcher):
        yield _nothing(entry, point, conc, launcher, f"launcher {launcher} does not exist")
        return
    if launcher in facts.broken_launchers:
        yield _nothing(entry, point, conc, launcher, f"launcher {launcher} cannot be analysed (see lint)")
        return
    result = facts.evaluate(launcher, env)
    if result.stopped is not None:
        hit = result.stopped
        yield _nothing(entry, point, conc, launcher, f"the launcher's evaluation ran out of its {hit.what} "
                                                     f"({hit.path}:{hit.line})")
        return
    handed = [h for h in result.handed() if known(h.target) and facts.tree.is_file(known(h.target) or "")]
    scripts = list(dict.fromkeys(known(h.target) or "" for h in handed))
    if not scripts:
        ran = [r.name for r in result.ran() if r.name in facts.profile.external_tools]
        why = (f"the launcher hands the entry to {ran[0]} (no recipe file read)" if ran
               else "the launcher dispatches no benchmark script we can read")
        unknown_targets = [render(d.target) for d in result.dispatches() if known(d.target) is None]
        missing = [known(d.target) for d in result.dispatches() if known(d.target)]
        if unknown_targets:
            why = f"the dispatched script's path is unknown ({unknown_targets[0]})"
        elif missing:
            why = f"the launcher dispatches {missing[0]}, which does not exist"
        yield _nothing(entry, point, conc, launcher, why)
        return
    for script in scripts:
        h = next(x for x in handed if known(x.target) == script)
        yield _script_launch(facts, entry, point, conc, launcher, script, h, handed_env(env, h), env)


def handed_env(env: Mapping[str, Val], h: Handed) -> dict[str, Val]:
    """What reaches a dispatched script: the launcher's ``env`` as ``h`` hands it on."""
    if h.inherit_all:
        out = {n: v for n, v in env.items() if n not in h.dropped}
    else:
        out = {n: env[n] for n in h.inherited if n in env}
    out.update(h.env)
    return out


def unexported(served: list[Served]) -> dict[str, tuple[str, str]]:
    """Engine-style variables the servers' paths set without ``export``: name -> (value, "path:line")."""
    out: dict[str, tuple[str, str]] = {}
    for s in served:
        if s.kind == "client":
            continue
        for name, value, loc in s.plain:
            if engine_env_var(name):
                out.setdefault(name, (render(value, MARK), f"{loc.path}:{loc.line}"))
    return out


def _script_launch(facts: Facts, entry: Entry, point: Point, conc: str | None, launcher: str, script: str,
                   h: Handed, env: dict[str, Val], inputs: Mapping[str, Val]) -> Launch:
    """``env``: what reaches the script; ``inputs``: the workflow's env the launcher started with."""
    result: Result = facts.evaluate(script, env, max_paths=SCRIPT_PATHS)
    reasons: list[str] = []
    if not h.complete:
        reasons.append(f"more of the environment may reach the script than we can tell ({h.boundary or 'wrapper'})")
    if result.stopped is not None:
        hit = result.stopped
        reasons.append(f"the script's evaluation ran out of its {hit.what} ({hit.path}:{hit.line})")
    served = result.served()
    distinct = list({(s.kind, s.argv, s.env, s.files, s.dropped): s for s in served}.values())
    memo = facts.memo.setdefault("serve.commands", {})
    servers = list({(c.engine, c.argv, tuple(c.env.items())): c
                    for c in (_command(s, env, memo, inputs) for s in distinct if s.kind != "client")}.values())
    clients = [_command(s, env, memo, inputs) for s in distinct if s.kind == "client"][:1]
    if not servers and not reasons:
        reasons.append(_ended(result) or "the script starts no server we recognise")
    return Launch(entry, point, conc, launcher, script, servers[0] if servers else None,
                  clients[0] if clients else None, tuple(servers[1:]), h.boundary, h.complete,
                  unexported(served), tuple(reasons))


def _ended(result: Result) -> str | None:
    """Why no server: every path of the script exits before one starts (where, and for an env
    check such as ``check_env_vars``, which variables it found unset or empty); None otherwise."""
    exits = [p.exit_at for p in result.paths]
    if not exits or any(e is None for e in exits):
        return None
    first = exits[0]
    assert first is not None
    where = f"{first.loc.path}:{first.loc.line}"
    missing = list(dict.fromkeys(r.name for r in result.reads() if r.kind == "check" and r.loc == first.loc))
    if missing:
        return f"the script exits at {where} before it starts a server: {', '.join(missing)} unset or empty there"
    code = f" (exit {first.code})" if first.code is not None else ""
    return f"the script exits at {where}{code} before it starts a server"


def _command(s: Served, script_env: Mapping[str, Val], memo: dict[object, Command],
             inputs: Mapping[str, Val]) -> Command:
    """A recorded command, normalized (once per distinct command: ``memo``); ``script_env``:
    the env the script was evaluated under (the values of what the command inherits). Its env
    is every variable that reaches it but the workflow's inputs (``inputs``: ``MODEL``, ``TP``...,
    as they came), which only an engine-named one (``VLLM_...``) stays among."""
    toks = tuple(Tok(render(v, MARK), _src(loc)) for v, loc in zip(s.argv[s.start:], s.lines[s.start:]))
    if s.kind == "client":
        key: object = ("client", toks)
        if key not in memo:
            memo[key] = normalize_client(list(toks))
        return memo[key]
    passed = {n: v for n, v in script_env.items() if n not in s.dropped}
    passed.update(s.env)
    env = {n: render(v, MARK) for n, v in sorted(passed.items()) if engine_env(n) or inputs.get(n) != v}
    key = (s.kind, toks, tuple(env.items()), s.files)
    if key not in memo:
        files: dict[str, File] = {}
        for w in s.files:
            f = File(render(w.target, MARK), render(w.content, MARK), _src(w.loc))
            for name in _file_keys(w.target, w.raw):
                files.setdefault(name, f)
        memo[key] = normalize(s.kind, list(toks), files, env)
    return memo[key]


def _file_keys(target: Val, raw: Val) -> list[str]:
    keys = [render(raw, MARK), render(target, MARK)]
    for k in list(keys):
        if k.startswith("./"):
            keys.append(k[2:])
    return list(dict.fromkeys(keys))


def _src(loc: Loc) -> str:
    return f"{loc.path}:{loc.line}"
