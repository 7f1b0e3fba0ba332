"""Everything the rules need to know about a repo, gathered once.

Reads the tree (configs, runners.yaml, launchers, benchmark scripts, workflows), parses
the shell files, and resolves every (entry, search-space point, launcher) to the
scripts it dispatches by partially evaluating the launcher under the entry's env.
No judgement happens here: the rules decide what is wrong.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial
from typing import Any

from bot import gctune
from bot.repo import jobs as _jobs
from bot.repo import paths as _paths
from bot.repo.cache import envcache, evalcache
from bot.repo.env.launchenv import EnvSource
from bot.repo.env.points import representatives
from bot.repo.env.profile import Profile, is_unknown_env
from bot.repo.files import parsed as _parsed
from bot.repo.files.tree import Tree
from bot.repo.load.configs import ConfigFile, Entry, Point, Runners, load_config, load_runners
from bot.repo.paths import PathRun
from bot.repo.references import scan_references
from bot.repo.runs import Run as Run  # re-exported: where most readers look for it
from bot.repo.workflows import workflows as _workflows
from bot.repo.workflows.wfcalls import Workflows
from bot.shell import default_parser
from bot.shell.evaluator.budget import BudgetHit, Limits
from bot.shell.evaluator.evaluate import Dispatch, Evaluator, FileSystem, Options, Result, Sink
from bot.shell.evaluator.reads import presence_key
from bot.shell.ir import nodes as ir
from bot.shell.ir.nesting import is_too_deep
from bot.shell.ir.values import Val
from bot.suppress import Suppression
from bot.suppress import parse_files as parse_suppressions

Parser = Callable[[str, bytes], ir.Script]
ts_parse, syntax_errors = default_parser()


LAUNCHER_SHARE = 2  # deadlines one launcher may spend over all its entries
TOTAL_SHARE = 15  # deadlines all evaluations of one lint may spend


AFTER_SINK_STEPS = 5_000  # serve: steps a script may run after its server (InferenceX: 1,864 at most to the client)


class _RepoFS(FileSystem):
    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def is_file(self, path: str) -> bool:
        return self.facts.tree.is_file(path)

    def is_dir(self, path: str) -> bool:
        return self.facts.tree.is_dir(path)

    def script(self, path: str) -> ir.Script | None:
        return self.facts.script(path)


@dataclass
class Facts:
    tree: Tree
    profile: Profile
    parser: Parser = ts_parse
    configs: list[ConfigFile] = field(default_factory=list)
    runners: Runners = field(default_factory=lambda: Runners(None))
    launcher_files: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # benchmark scripts (dead-script candidates)
    runs: list[Run] = field(default_factory=list)
    path_runs: list[PathRun] = field(default_factory=list)  # launchers under the other workflow paths
    jobs: _jobs.Jobs = field(default_factory=_jobs.Jobs)  # entries handed to external tools, their recipes
    # scripts sourced or run by other scripts: path -> where
    referenced: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    referenced_patterns: list[tuple[re.Pattern[str], str, int]] = field(default_factory=list)
    workflow_text: str = ""
    workflows: Workflows = field(default_factory=Workflows)  # launcher calls of the workflows
    broken_launchers: list[str] = field(default_factory=list)  # do not parse, or cannot be read
    # Files the analysis needs that exist but cannot be read (not a regular file, over the
    # size budget, permission denied): path -> why. Such a launcher dispatches nothing
    # known (it is in ``broken_launchers``, no run is made for it): an unknown for /bench.
    unreadable: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # analyses shared between rules
    suppressions: dict[str, list[Suppression]] = field(default_factory=dict)  # path -> inline suppressions
    syntax: dict[str, tuple[ir.ParseError, ...]] = field(default_factory=dict)  # real path -> errors
    parser_gaps: dict[str, tuple[ir.ParseError, ...]] = field(default_factory=dict)  # bash accepts these
    _scripts_cache: dict[str, ir.Script | None] = field(default_factory=dict)
    # per slot: (values of Result.relevant, set/empty state of Result.presence, result)
    _result_cache: dict[str, list[tuple[frozenset[tuple[str, Val | None]], frozenset[tuple[str, int]], Result]]] = \
        field(default_factory=dict)
    _spent: dict[str, float] = field(default_factory=dict)  # seconds evaluating each launcher so far
    _spent_total: float = 0.0  # their sum
    _overrides: dict[str, bytes] = field(default_factory=dict)
    # The reference scan (no entry) running out of a budget: script path -> what ran out.
    scan_budget_hits: dict[str, tuple[BudgetHit, ...]] = field(default_factory=dict)
    undecided: list[str] = field(default_factory=list)  # files ``bash -n`` gave no verdict on in time
    # The serve sinks (``bot.launches.gather.sinks``): evaluations record servers, clients,
    # written files and hand-off environments (``bot.shell.evaluator.serving``). None for lint.
    sinks: Callable[[list[Val]], Sink | None] | None = None
    # Sink kinds at which a path ends besides the client (``bot.launches.specview``: the server)
    stop_at: frozenset[str] = frozenset()
    # With the sinks on, evaluations are kept across lints only under a mode of their own
    cache_mode: str = ""

    # ------------------------------------------------------------ shell files
    def script(self, path: str) -> ir.Script | None:
        """The parsed script at a path (links resolved), cached; None if absent."""
        real = self.tree.resolve(path)
        if real is None:
            return None
        if real in self._overrides:  # a fix being checked: parsed once per text
            key = f"{real}\0{hashlib.sha1(self._overrides[real]).hexdigest()}"
            if key not in self._scripts_cache:
                self._scripts_cache[key] = self.parser(real, self._overrides[real])
            return self._scripts_cache[key]
        if real not in self._scripts_cache:
            data = _parsed.read(self, real)
            self._scripts_cache[real] = _parsed.parse(self.parser, real, data) if data is not None else None
        return self._scripts_cache[real]

    def shell_files(self) -> list[str]:
        """Every shell file the analysis reads (launchers, benchmark scripts, helpers)."""
        return sorted(set(self.launcher_files) | set(self.tree.glob(self.profile.scripts))
                      | set(self.tree.glob(["runners/**/*.sh"])))

    @cached_property
    def entries(self) -> list[Entry]:
        return [e for c in self.configs for e in c.entries]

    def launcher_of_node(self, node: str) -> str:
        return self.profile.launcher_for(node)

    # ------------------------------------------------------------ evaluation
    def options(self) -> Options:
        from bot.shell.evaluator.evaluate import DEFAULT_WRAPPERS

        scripts = self._all_scripts
        return Options(
            max_paths=self.profile.max_paths,
            wrappers=DEFAULT_WRAPPERS | frozenset(self.profile.wrappers),
            workspace_aliases=tuple(dict.fromkeys(self.profile.workspace_aliases
                                                  + (self.profile.workspace.rstrip("/") + "/",))),
            parse=self.parser,
            follow=lambda p: p not in scripts and p.endswith(".sh") and self.tree.is_file(p),
            unknown_names=self._unknown_name,
            observe=frozenset(self.profile.external_tools) | _jobs.COPIES,
            limits=Limits(self.profile.max_steps, self.profile.max_seconds, self.profile.max_value_bytes),
            sinks=self.sinks,
            stop_after=frozenset({"client"}) | self.stop_at if self.sinks is not None else frozenset(),
            after_sink_steps=AFTER_SINK_STEPS if self.sinks is not None and not self.stop_at else 0,
            # env-not-passed: what a launcher reads unset, the env each script is handed
            record_reads=True,
            handoffs=True,
            env_checks=frozenset(self.profile.env_checks),
        )

    @cached_property
    def _unknown_name(self) -> Callable[[str], bool]:
        """``is_unknown_env`` of the profile, once per name (every evaluation asks it again)."""
        return lru_cache(maxsize=None)(partial(is_unknown_env, self.profile))

    @cached_property
    def _all_scripts(self) -> frozenset[str]:
        """Benchmark scripts, excluded folders included: never followed as launchers."""
        return frozenset(self.tree.glob(self.profile.scripts))

    def evaluate(self, launcher: str, env: dict[str, Val], max_paths: int | None = None) -> Result:
        """Evaluate a launcher under env. Results are cached, keyed by the values of the env
        vars that influenced a branch or a dispatched path (``Result.relevant``)."""
        real = self.tree.resolve(launcher) or launcher
        # Checking a fix (overridden texts) has its own cache: one per set of texts.
        slot = real + (f"\0paths={max_paths}" if max_paths is not None else "")
        slot += "".join(f"\0{p}\0{hashlib.sha1(t).hexdigest()}" for p, t in sorted(self._overrides.items()))
        cache = self._result_cache.setdefault(slot, [])
        for key, presence, result in cache:
            if all(env.get(name) == value for name, value in key) and \
                    presence == presence_key(env, (n for n, _ in presence)):
                return result
        opts = self.options()
        if max_paths is not None:
            opts.max_paths = min(opts.max_paths, max_paths)
        # across lints (``bot.repo.cache.evalcache``): not for serve, a path bound or a fix being checked
        persist = not self._overrides and ((self.sinks is None and max_paths is None) or bool(self.cache_mode))
        mode = f"{self.cache_mode}:{max_paths}" if self.cache_mode else ""
        store, slot_key = evalcache.slot(self, launcher, real, persist=persist, mode=mode)
        if store is not None and slot_key is not None:
            kept = store.lookup(slot_key, env, _RepoFS(self), opts.follow, self.digest)
            if kept is not None:
                cache.append((frozenset((n, env.get(n)) for n in kept.relevant), presence_key(env, kept.presence),
                              kept))
                return kept
        script = self.script(launcher)
        if script is None:
            return Result([])
        # One launcher's evaluations share a time budget (LAUNCHER_SHARE deadlines over all its
        # entries): a construct that eats each entry's whole deadline cannot multiply it by them.
        # and all launchers share TOTAL_SHARE deadlines, so that many hostile launchers cannot add up either.
        spent = self._spent.get(slot, 0.0)
        left = LAUNCHER_SHARE * opts.limits.max_seconds - spent
        total_left = TOTAL_SHARE * opts.limits.max_seconds - self._spent_total
        if min(left, total_left) <= 0.01:
            if total_left <= 0.01:
                what = f"time budget of the whole analysis ({TOTAL_SHARE * opts.limits.max_seconds:g} s)"
            else:
                what = f"time budget of the launcher ({LAUNCHER_SHARE * opts.limits.max_seconds:g} s over its entries)"
            return Result([], budget_hits=(BudgetHit(what, real, 1, "spent by earlier evaluations", True),))
        opts.limits = replace(opts.limits, max_seconds=min(opts.limits.max_seconds, left, total_left))
        fs: FileSystem = _RepoFS(self)
        recorder = evalcache.Recorder(fs, self.digest) if slot_key is not None else None
        if recorder is not None:
            fs = recorder
            opts.follow = recorder.follow(opts.follow) if opts.follow is not None else None
        ev = Evaluator(fs, opts)
        t0 = time.monotonic()
        result = ev.run(script, dict(env), argv0=f"./{launcher}")
        if store is not None and slot_key is not None and recorder is not None:
            store.add(slot_key, env, result, recorder.asked)
        took = time.monotonic() - t0
        self._spent[slot] = spent + took
        self._spent_total += took
        key = frozenset((name, env.get(name)) for name in result.relevant)
        cache.append((key, presence_key(env, result.presence), result))
        return result

    def digest(self, path: str) -> str | None:
        """What ``script(path)`` would parse, as a hash (the evaluation cache compares it)."""
        return evalcache.digest(self, path)

    def env_for(self, entry: Entry, point: Point, node: str, label: str) -> dict[str, Val]:
        """The env the launcher starts with (:mod:`bot.repo.env.launchenv`)."""
        return self.envs.env_for(entry, point, node, label)

    def passed_vars(self, multinode: bool) -> frozenset[str] | None:
        """Env var names the benchmark workflow passes (None: no workflow to read)."""
        return self.envs.passed_vars(multinode)

    @cached_property
    def envs(self) -> EnvSource:
        wf_key = self.memo.get("workflows-key")
        return EnvSource(self.tree, self.profile, self.workflows,
                         shared_key=(wf_key, repr(self.profile)) if wf_key is not None else None)

    def resolve_with(self, launcher: str, text: bytes, entry: Entry, point: Point, node: str,
                     label: str) -> list[Dispatch]:
        """Dispatches of an entry if the launcher's text were ``text`` (checks a fix)."""
        real = self.tree.resolve(launcher) or launcher
        self._overrides[real] = text
        try:
            result = self.evaluate(launcher, self.env_for(entry, point, node, label))
        finally:
            del self._overrides[real]
        return [d for d in result.dispatches()]

    # --------------------------------------------------------------- queries
    def is_script(self, path: str) -> bool:
        return path in self._script_set

    @cached_property
    def _script_set(self) -> frozenset[str]:
        return frozenset(self.scripts)

    def could_be_script(self, path: str) -> bool:
        """Whether a path (existing or not) is where the profile keeps benchmark scripts."""
        from bot.repo.files.tree import glob_match

        return (any(glob_match(p, path) for p in self.profile.scripts)
                and not any(glob_match(p, path) for p in self.profile.scripts_exclude))

    def all_benchmark_files(self) -> list[str]:
        """Benchmark scripts including excluded folders (for 'closest name' hints)."""
        return self.tree.glob(self.profile.scripts)


def gather(tree: Tree, profile: Profile, parser: Parser = ts_parse,
           sinks: Callable[[list[Val]], Sink | None] | None = None, references: bool = True,
           evaluate: bool = True) -> Facts:
    """The facts of a tree. ``sinks``: evaluate with the serve sinks on (``bot.serve``);
    ``references``: scan every shell file for the scripts it names (dead-script; lint only);
    ``evaluate=False``: stop after reading (configs, runners, workflows, suppressions): what a
    change rule needs of a base (``LintResult.read_facts``), with no runs."""
    t0 = time.perf_counter()
    _parsed.begin()
    facts = Facts(tree, profile, parser)
    facts.sinks = sinks
    prefetch = getattr(tree, "prefetch", None)
    config_paths = tree.glob(profile.configs, profile.configs_exclude)
    facts.launcher_files = tree.glob(profile.launchers)
    facts.scripts = tree.glob(profile.scripts, profile.scripts_exclude)
    workflow_paths = tree.glob(profile.workflows)
    if prefetch is not None:
        # a git revision: every blob the lint reads in one ``cat-file --batch``
        prefetch(config_paths + facts.shell_files() + workflow_paths + list(profile.runners)
                 + (tree.glob(profile.references) if references else []))
    facts.configs = [load_config(tree, p) for p in config_paths]
    facts.runners = load_runners(tree, list(profile.runners))
    texts = {p: tree.text(p) or "" for p in workflow_paths}
    facts.workflow_text = "\n".join(texts.values())
    wf_key = ("workflows", profile.launcher, *sorted(
        (p, hashlib.sha1(t.encode("utf-8", "surrogatepass")).digest()) for p, t in texts.items()))
    facts.memo["workflows-key"] = wf_key
    facts.workflows = _parsed.shared(wf_key, lambda: _workflows.gather(texts, profile.launcher),
                                     sum(map(len, texts.values())))
    commented = config_paths + facts.shell_files() + ([facts.runners.path] if facts.runners.path else [])
    facts.suppressions = parse_suppressions((p, _parsed.text(facts, p) or "") for p in dict.fromkeys(commented))
    gctune.settle()  # the loaded YAML stays to the end
    t1 = time.perf_counter()
    if not evaluate:
        facts.timings = {"read": t1 - t0}
        return facts
    for path in facts.shell_files():
        real = tree.resolve(path)
        data = _parsed.read(facts, path) if real is not None else None
        if real is not None and data is not None and real not in facts.syntax:
            errors = _parsed.syntax_errors(syntax_errors, data)
            verdict = _parsed.bash_accepts(data) if errors else False
            if verdict is None:  # bash did not answer in time: a verdict of this machine's, not of the file
                facts.undecided.append(real)
            if verdict:
                # tree-sitter-bash lacks a few constructs (e.g. ``exec 3<>/dev/tcp/...``);
                # bash's own parser (-n: read, never execute) has the last word.
                facts.parser_gaps[real] = errors
                errors = ()
            facts.syntax[real] = errors
    needed = config_paths + [facts.runners.path or ""] + facts.shell_files() + workflow_paths
    facts.unreadable = {p: why for p in dict.fromkeys(needed) if p and (why := tree.problem(p)) is not None}
    # a launcher nested too deep to analyse in full is as broken as one that does not parse: what its
    # entries run is unknown (a /bench blocker), and the scripts only it could run are not dead
    facts.broken_launchers = [p for p in facts.launcher_files
                              if facts.syntax.get(tree.resolve(p) or p) or p in facts.unreadable
                              or any(is_too_deep(e) for e in facts.parser_gaps.get(tree.resolve(p) or p, ()))]
    t2 = time.perf_counter()
    _resolve_runs(facts)
    facts.path_runs = _paths.resolve(facts)
    gctune.settle()  # and the evaluations
    t3 = time.perf_counter()
    if references:
        scan_references(facts, _RepoFS(facts))
    t4 = time.perf_counter()
    facts.jobs = _jobs.gather(facts)
    envcache.flush(facts)
    facts.timings = {"read": t1 - t0, "parse": t2 - t1, "resolve": t3 - t2, "references": t4 - t3,
                     "jobs": time.perf_counter() - t4}
    return facts


def _resolve_runs(facts: Facts) -> None:
    labels = facts.runners.labels
    broken = set(facts.broken_launchers)
    for entry in facts.entries:
        label = entry.runner
        if label is None or label not in labels:
            continue
        by_launcher: dict[str, str] = {}
        for node in labels[label]:
            by_launcher.setdefault(facts.launcher_of_node(node), node)
        for launcher, node in by_launcher.items():
            if not facts.tree.is_file(launcher) or launcher in broken or facts.tree.resolve(launcher) in broken:
                continue
            real = facts.tree.resolve(launcher) or launcher
            for point in representatives(facts.profile, entry.points):
                env = facts.env_for(entry, point, node, label)
                result = facts.evaluate(launcher, env)
                dispatches = tuple(result.dispatches())
                ran = result.ran()
                handoffs = tuple(r for r in ran if r.name in facts.profile.external_tools)
                exits = bool(result.paths) and all(p.exited for p in result.paths) and not dispatches and not handoffs
                where = tuple(dict.fromkeys(p.exit_at.loc for p in result.paths if p.exit_at is not None))
                facts.runs.append(Run(entry, point, label, node, launcher, real, dispatches, exits,
                                      result.bound_hit, where, handoffs,
                                      tuple(r for r in ran if r.name in _jobs.COPIES), result.budget_hits,
                                      result))
