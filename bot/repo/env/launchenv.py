"""Where a launcher's env comes from: the workflows when they say, else the profile's table.

When the repo's workflows run the launcher for the config entries (a step reached from a
job whose matrix is a generator's output), the env of the main such path
(:func:`bot.repo.env.wfenv.sweep`) is what every rule judges: which variables exist and how they
are computed come from the workflow files. Without one (a template no file of the repo
calls, or no workflow at all) the profile's env table is used, limited to the names the
benchmark template mentions, as before the workflows were read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bot.repo.cache import envcache
from bot.repo.cache.envcache import EnvStore
from bot.repo.env import wfenv
from bot.repo.env.envrender import additional_settings
from bot.repo.env.profile import Profile, build_env, render
from bot.repo.files.parsed import shared
from bot.repo.files.tree import Tree
from bot.repo.load.configs import Entry, Point
from bot.repo.workflows.wfcalls import LauncherCall, Workflows
from bot.shell.ir.values import Val, known, lit, re2_compile


def linear(pattern: str) -> Any:
    """A linear-time (re2) pattern of ours, run over the repo's text."""
    rx = re2_compile(pattern)
    if rx is None:  # pragma: no cover - our own patterns are valid
        raise ValueError(pattern)
    return rx


_TERNARY = linear(r"(?m)^\s+([A-Z_][A-Z0-9_]*):\s*\$\{\{\s*inputs\.([\w-]+)\s*==\s*'([^']*)'\s*&&\s*"
                  r"'([^']*)'\s*\|\|\s*'([^']*)'\s*\}\}\s*$")


@dataclass
class EnvSource:
    tree: Tree
    profile: Profile
    workflows: Workflows
    _sweeps: dict[bool, wfenv.Sweep] = field(default_factory=dict)
    _passed: dict[bool, frozenset[str] | None] = field(default_factory=dict)
    _ternaries: dict[bool, list[tuple[str, ...]]] = field(default_factory=dict)
    _applies: dict[tuple[str, str, str, int], bool] = field(default_factory=dict)
    # (call, entry, point, node, label) -> the rendered env (calls and points by identity:
    # both live as long as the facts)
    _envs: dict[tuple[int, str | None, int, str, str], dict[str, Val]] = field(default_factory=dict)
    _fields: dict[tuple[object, ...], object] = field(default_factory=dict)  # wfenv.render_env's memo
    _values: dict[Val, Val] = field(default_factory=dict)  # and its one copy of each value
    _calls: dict[tuple[int, int, str, str], LauncherCall | None] = field(default_factory=dict)  # call_for
    # Shared with the next lint (``bot.repo.files.parsed.shared``) when set: what the renders depend on
    # besides the entry and the point (the workflows' texts, the profile). Keyed by content then.
    shared_key: tuple[object, ...] | None = None
    _content: dict[int, object] = field(default_factory=dict)  # id(entry or point) -> its content hash
    _wanted: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)

    @cached_property
    def disk(self) -> EnvStore | None:
        """The answers kept across processes (``bot.repo.cache.envcache``), when renders are shared."""
        return EnvStore(self.shared_key) if self.shared_key is not None and envcache.enabled() else None

    def _env_kept(self, across: tuple[object, ...], make: Callable[[], dict[str, Val]]) -> dict[str, Val]:
        """An env shared by content: in this process, and across processes when the disk is on."""
        disk = self.disk
        return shared(across, make) if disk is None else disk.kept(across, make, disk.dec_env)

    @cached_property
    def _call_index(self) -> dict[int, int]:
        return {id(c): i for i, c in enumerate(self.workflows.calls)}

    def _across(self, what: str, call: LauncherCall, entry: Entry | None, point: Point | None,
                *rest: object) -> tuple[object, ...] | None:
        """The key of a render shared across lints: by the call's place among the workflows'
        calls, the entry's and point's contents (never their positions: a render holds none)."""
        if self.shared_key is None or entry is None or point is None:
            return None
        at = self._call_index.get(id(call))
        if at is None:
            return None
        e = self._content.get(id(entry))
        if e is None:
            e = self._content[id(entry)] = (entry.name, hashlib.sha1(repr(entry.fields).encode()).digest())
        p = self._content.get(id(point))
        if p is None:
            text = repr((point.scenario, point.fields, point.seq))
            p = self._content[id(point)] = hashlib.sha1(text.encode()).digest()
        return (what, self.shared_key, at, e, p, *rest)

    def sweep(self, multinode: bool) -> wfenv.Sweep:
        if multinode not in self._sweeps:
            self._sweeps[multinode] = wfenv.sweep(self.workflows, self.profile, multinode)
        return self._sweeps[multinode]

    def main_call(self, multinode: bool) -> LauncherCall | None:
        main = self.sweep(multinode).main
        return main.call if main is not None else None

    def paths(self, multinode: bool) -> list[wfenv.Group]:
        """Every path that runs the entries, the main one first."""
        sw = self.sweep(multinode)
        return ([sw.main] if sw.main is not None else []) + list(sw.others)

    def applies(self, call: LauncherCall, entry: Entry, point: Point, node: str, label: str) -> bool:
        """Whether a path runs this point at all: a job that fixes the scenario (a literal
        ``scenario-type: agentic-coding``, so ``SCENARIO_SUBDIR`` is ``agentic/``) runs the
        generator's points of that scenario only. Judged on the variables the profile derives
        from the scenario: where the path's value and the profile's for the point are both
        known and differ, the generator routes the point elsewhere."""
        key = (call.name, entry.name, point.scenario, point.pos.line)
        if key not in self._applies:
            across = self._across("applies", call, entry, point, node, label)
            if across is not None:
                make = lambda: self._applies_now(call, entry, point, node, label)  # noqa: E731
                disk = self.disk
                self._applies[key] = shared(across, make) if disk is None else disk.kept(across, make, disk.dec_bool)
            else:
                self._applies[key] = self._applies_now(call, entry, point, node, label)
        return self._applies[key]

    def _applies_now(self, call: LauncherCall, entry: Entry, point: Point, node: str, label: str) -> bool:
        names = self.scenario_vars()
        env = self.env_of(call, entry, point, node, label, names)
        templates = {**self.profile.env_common,
                     **(self.profile.env_multi if entry.multinode else self.profile.env_single)}
        table = {n: render(templates[n], entry, point, node, label) for n in names if n in templates}
        return not any(
            known(env[n]) is not None and v and known(v) is not None and known(env[n]) != known(v)
            for n, v in table.items() if n in env)

    @cached_property
    def _scenario_vars(self) -> tuple[str, ...]:
        tables = {**self.profile.env_common, **self.profile.env_single, **self.profile.env_multi}
        derived = re.compile(r"\{@(scenario|scenario-subdir|is-agentic)\}")
        return tuple(sorted(n for n, t in tables.items() if derived.fullmatch(t)))

    def scenario_vars(self) -> tuple[str, ...]:
        """The variables the profile's env table derives from the scenario alone."""
        return self._scenario_vars

    def call_for(self, entry: Entry, point: Point, node: str, label: str) -> LauncherCall | None:
        """The path whose env this point runs with: the first path (main first) that runs it,
        else the main path."""
        key = (id(entry), id(point), node, label)
        if key not in self._calls:
            paths = self.paths(entry.multinode)
            self._calls[key] = next((g.call for g in paths if self.applies(g.call, entry, point, node, label)),
                                    paths[0].call if paths else None)
        return self._calls[key]

    def env_for(self, entry: Entry, point: Point, node: str, label: str) -> dict[str, Val]:
        call = self.call_for(entry, point, node, label)
        if call is not None:
            return self.env_of(call, entry, point, node, label)
        return self.profile_env(entry, point, node, label)

    def env_some(self, entry: Entry, point: Point, node: str, label: str, names: Iterable[str]) -> dict[str, Val]:
        """``env_for`` of only the variables ``names`` (a fresh dict; cheaper where a few are compared)."""
        names = tuple(names)
        call = self.call_for(entry, point, node, label)
        if call is not None:
            return self.env_of(call, entry, point, node, label, names)
        env = self.profile_env(entry, point, node, label)
        return {n: env[n] for n in names if n in env}

    def env_of(self, call: LauncherCall, entry: Entry | None, point: Point | None, node: str,
               label: str, names: Iterable[str] | None = None) -> dict[str, Val]:
        """The env ``call`` hands the launcher (a fresh dict: callers may add to it); only
        the variables ``names`` of it when given (cheaper where few are compared)."""
        key = (id(call), entry.name if entry is not None else None, id(point), node, label)
        env = self._envs.get(key)
        if env is None and names is not None:
            wanted = frozenset(names)
            wanted = self._wanted.setdefault(wanted, wanted)  # one copy of each set of names (memo keys)
            across = self._across("some", call, entry, point, node, label, wanted)
            if across is None:
                return self._render(call, entry, point, node, label, wanted)
            return dict(self._env_kept(across, lambda: self._render(call, entry, point, node, label, wanted)))
        if env is None:
            across = self._across("env", call, entry, point, node, label)
            if across is not None:  # never changed: callers get copies
                env = self._envs[key] = self._env_kept(across, lambda: self._render(call, entry, point, node, label,
                                                                                    None))
            else:
                env = self._envs[key] = self._render(call, entry, point, node, label, None)
        if names is not None:
            return {n: env[n] for n in names if n in env}
        return dict(env)

    def _render(self, call: LauncherCall, entry: Entry | None, point: Point | None, node: str,
                label: str, names: frozenset[str] | None) -> dict[str, Val]:
        env = wfenv.render_env(call, self.profile, entry, point, node, label, self.workflows, names, self._fields,
                               self._values)
        if entry is not None and point is not None:
            for name, value in additional_settings(entry, point).items():
                if names is None or name in names:
                    env.setdefault(name, value)
        return env

    def profile_env(self, entry: Entry, point: Point, node: str, label: str) -> dict[str, Val]:
        """The profile's table (names limited to those the template mentions), and the
        ternaries the template computes itself."""
        passed = self.passed_vars(entry.multinode)
        env = build_env(self.profile, entry, point, node, label, passed)
        for name, key, value, then, other in self.ternaries(entry.multinode):
            have = point.scenario if key == "scenario-type" else _field(entry, point, key)
            if have is not None:
                env[name] = lit(then if have == value else other)
        return env

    def passed_vars(self, multinode: bool) -> frozenset[str] | None:
        """Env var names the benchmark workflow passes (None: no template to read). From the
        main workflow path when there is one, else every upper-case word of the template."""
        if multinode not in self._passed:
            call = self.main_call(multinode)
            if call is not None:
                self._passed[multinode] = frozenset(call.env) | frozenset(wfenv.RUNNER_SET)
            else:
                templates = self.profile.workflow_multi if multinode else self.profile.workflow_single
                self._passed[multinode] = _names(self.tree, templates)
        return self._passed[multinode]

    def ternaries(self, multinode: bool) -> list[tuple[str, ...]]:
        if multinode not in self._ternaries:
            templates = self.profile.workflow_multi if multinode else self.profile.workflow_single
            text = "\n".join(t for t in (self.tree.text(p) for p in templates) if t)
            self._ternaries[multinode] = [m.groups() for m in _TERNARY.finditer(text)]
        return self._ternaries[multinode]


def _names(tree: Tree, templates: Iterable[str]) -> frozenset[str] | None:
    text = "\n".join(t for t in (tree.text(p) for p in templates) if t)
    if not text:
        return None
    return frozenset(re.findall(r"\b[A-Z][A-Z0-9_]*\b", text))


def _field(entry: Entry, point: Point, key: str) -> str | None:
    for source in (point.fields, point.seq, entry.fields):
        if key in source and source[key] is not None:
            v = source[key]
            return "true" if v is True else "false" if v is False else str(v)
    return None
