"""A launcher call's env for one (entry, point, node), and which calls stand for the sweep.

A workflow call (:class:`bot.repo.workflows.workflows.LauncherCall`) holds templates over the
outermost caller's contexts. Rendering them for an entry needs to know what the matrix
generator puts in each field of an entry's JSON (``matrix.config.exp-name`` is the run
name, ``matrix.config.ep`` the point's ``ep`` or 1): that is the profile's
``matrix-fields`` table, the one assumption left when the workflows are read. Everything
else (which variables exist, how they are computed, what a caller passes) comes from the
workflows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.repo.env.profile import Profile, render
from bot.repo.files.tree import glob_match
from bot.repo.load.configs import Entry, Point
from bot.repo.workflows import ghexpr as gx
from bot.repo.workflows.wfcalls import LauncherCall, Workflows
from bot.repo.workflows.workflows import input_default
from bot.shell.ir.values import Val, concat, known, lit, unknown

# Variables GitHub's runner sets itself on every job (the rest of GITHUB_*/RUNNER_* are the
# profile's unknown-env): the launcher sees them whatever the workflow says.
RUNNER_SET = ("RUNNER_NAME", "GITHUB_WORKSPACE")


def is_multinode(call: LauncherCall, profile: Profile) -> bool:
    """Whether the call runs multinode entries: it goes through the profile's multinode
    template, or sets IS_MULTINODE to true itself."""
    if any(glob_match(p, t) for t in call.templates for p in profile.workflow_multi):
        return True
    if any(glob_match(p, t) for t in call.templates for p in profile.workflow_single):
        return False
    var = call.env.get("IS_MULTINODE")
    return var is not None and var.value == ("true",)


def signature(call: LauncherCall) -> tuple[object, ...]:
    """Calls with equal signatures give every entry the same env (one evaluation)."""
    return (call.launcher, call.entries, call.matrix, gx.unparse(call.runner),
            tuple(sorted((n, gx.unparse(v.value)) for n, v in call.env.items())))


@dataclass(frozen=True)
class Group:
    """Calls that give the same env: evaluated once, reported with every name."""

    calls: tuple[LauncherCall, ...]

    @property
    def call(self) -> LauncherCall:
        return self.calls[0]

    @property
    def name(self) -> str:
        first = self.calls[0].name
        return first if len(self.calls) == 1 else f"{first} (and {len(self.calls) - 1} more)"


def groups(calls: Iterable[LauncherCall]) -> list[Group]:
    by: dict[tuple[object, ...], list[LauncherCall]] = {}
    for c in calls:
        by.setdefault(signature(c), []).append(c)
    return [Group(tuple(sorted(v, key=lambda c: c.name))) for v in by.values()]


@dataclass(frozen=True)
class Sweep:
    """The workflow calls that run config entries, per kind: ``main`` gives the env of the
    runs every rule judges (the one most callers share); ``others`` are the other paths."""

    main: Group | None
    others: tuple[Group, ...]


def sweep(wf: Workflows, profile: Profile, multinode: bool) -> Sweep:
    generated = [c for c in wf.calls if c.entries == "generated" and is_multinode(c, profile) == multinode]
    # the general path: the one that pins the fewest values itself (an evals or smoke job
    # passes ``eval-only: true``, ``isl: '0'``); among equals the one most callers share,
    # then the one that forwards the most entry fields
    # (paths through the profile's benchmark template before any other workflow's own step)
    templates = profile.workflow_multi if multinode else profile.workflow_single
    found = sorted(groups(generated), key=lambda g: (not any(glob_match(p, t) for t in g.call.templates
                                                             for p in templates),
                                                     _pinned(g.call), -len(g.calls), -_forwarded(g.call),
                                                     g.call.name))
    if not found:
        return Sweep(None, ())
    return Sweep(found[0], tuple(found[1:]))


def _pinned(call: LauncherCall) -> int:
    """Env vars whose value a caller wrote as a literal (``with: {eval-only: true}``)."""
    return sum(1 for v in call.env.values() for inp in v.inputs if inp in call.passed
               and not gx.refs(v.value) and all(isinstance(p, str) or isinstance(p, gx.Lit) for p in v.value))


def _forwarded(call: LauncherCall) -> int:
    m = call.matrix
    return sum(1 for v in call.env.values() for r in gx.refs(v.value) if m and r[: len(m)] == m)


def standalone(wf: Workflows) -> list[Group]:
    """Calls that run a launcher with an env of their own (no config entry)."""
    return sorted(groups(c for c in wf.calls if c.entries == "literal"), key=lambda g: g.call.name)


# ------------------------------------------------------------------ rendering


def render_env(call: LauncherCall, profile: Profile, entry: Entry | None, point: Point | None,
               node: str, label: str, wf: Workflows | None = None,
               names: Iterable[str] | None = None,
               fields: dict[tuple[object, ...], object] | None = None,
               values: dict[Val, Val] | None = None) -> dict[str, Val]:
    """The env the launcher starts with on ``node`` for ``entry`` at ``point`` (None for a
    standalone call); only ``names`` of it when given. ``fields``: a memo of generated
    entry fields, shared by the renders of one lint (they do not depend on the call);
    ``values``: one copy of each value the renders made (most envs of a lint differ in a
    few values: 10x InferenceX's shape kept 35 MB of equal tuples)."""
    lookup = _Lookup(call, profile, entry, point, node, label, wf, fields)
    env: dict[str, Val] = {}
    items = call.env.items() if names is None else ((n, call.env[n]) for n in names if n in call.env)
    for name, var in items:
        v = lookup.value(var.value)
        env[name] = v if values is None else values.setdefault(v, v)
    for name, value in (("RUNNER_NAME", node), ("GITHUB_WORKSPACE", profile.workspace)):
        if names is None or name in names:
            env.setdefault(name, lit(value))
    return env


class _Lookup:
    def __init__(self, call: LauncherCall, profile: Profile, entry: Entry | None, point: Point | None,
                 node: str, label: str, wf: Workflows | None,
                 fields: dict[tuple[object, ...], object] | None = None) -> None:
        self.call, self.profile, self.entry, self.point = call, profile, entry, point
        self.node, self.label, self.wf = node, label, wf
        self.fields = {} if fields is None else fields
        self._py: dict[tuple[str, ...], object] = {}  # ``py`` of each reference, for this render

    def value(self, t: gx.Template) -> Val:
        out: list[Any] = []
        for part in t:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, gx.Ref):
                out.extend(self.val(part.path))
            else:
                text = gx.to_string(self.evaluate(part))
                out.extend(unknown(gx.unparse(part)) if text is gx.UNKNOWN else (str(text),))
        return concat(tuple(out))  # adjacent text joined, empty text dropped

    def evaluate(self, expr: gx.Node) -> object:
        """``gx.evaluate`` under this render's lookups, memoized in ``fields``: the same
        expression asked the same references the same answers before (answers compared
        with their types: ``True == 1.0`` in Python)."""
        seen = self.fields.setdefault(("expr", id(expr)), [])
        assert isinstance(seen, list)
        for asked, result in seen:
            if all(_same(self.py(ref), v) for ref, v in asked):
                return result
        log: list[tuple[tuple[str, ...], object]] = []

        def look(ref: tuple[str, ...]) -> object:
            v = self.py(ref)
            log.append((ref, v))
            return v

        result = gx.evaluate(expr, look)
        if len(seen) < _EXPR_MEMO:
            seen.append((tuple(log), result))
        return result

    def val(self, ref: tuple[str, ...]) -> Val:
        """A reference as a shell value (partly known values stay partly known)."""
        got = self.field(ref)
        if got is not _NOT_FIELD:
            return () if got is None else got  # type: ignore[return-value]
        py = self.py(ref)
        text = gx.to_string(py)
        return unknown("${{ " + ".".join(ref) + " }}") if text is gx.UNKNOWN else lit(str(text))

    def field(self, ref: tuple[str, ...]) -> object:
        """A generated entry field (``matrix.config.tp``) as a Val (None when the generator
        leaves it out), or _NOT_FIELD."""
        static = self.fields.get(("field", id(self.call), ref))  # what the call and profile say, once
        if not isinstance(static, tuple) or static[0] is not self.call:
            static = self.fields["field", id(self.call), ref] = (self.call, self._field_template(ref))
        found: tuple[str, bool] | None = static[1]
        if found is None:
            return _NOT_FIELD
        if self.entry is None or self.point is None:
            return unknown("${{ " + ".".join(ref) + " }}")
        template, by_node = found
        where = (self.node, self.label) if by_node else ()
        memo = (template, id(self.entry), id(self.point), where)
        if memo in self.fields:
            v = self.fields[memo]
        else:
            v = self.fields[memo] = render(template, self.entry, self.point, self.node, self.label)
        if v is None:
            return unknown(f"${{{{ {'.'.join(ref)} }}}}")
        if v == () and template != "":
            return None
        return v

    def _field_template(self, ref: tuple[str, ...]) -> tuple[str, bool] | None:
        """The profile's template of a generated entry field, and whether it names the node or
        the label (None: ``ref`` is no such field of the call)."""
        m = self.call.matrix
        if self.call.entries != "generated" or not m or ref[: len(m)] != m or len(ref) == len(m):
            return None
        key = ".".join(ref[len(m):])
        template = self.profile.matrix_fields.get(key, "{" + key + "}")
        return template, "{@node" in template or "{@label" in template

    def py(self, ref: tuple[str, ...]) -> object:
        """A reference as a GitHub value (for operators and functions); once per reference and
        render (``evaluate`` asks each again for every answer it kept)."""
        done = self._py
        if ref in done:
            return done[ref]
        v = done[ref] = self._py_of(ref)
        return v

    def _py_of(self, ref: tuple[str, ...]) -> object:
        if ref == ("runner", "name"):
            return self.node
        got = self.field(ref)
        if got is not _NOT_FIELD:
            if got is None:
                return None
            text = known(got)  # type: ignore[arg-type]
            if text is None:
                return gx.UNKNOWN
            return {"true": True, "false": False}.get(text, text)
        if ref and ref[0] == "dispatch-inputs" and self.wf is not None and len(ref) == 2:
            return gx.UNKNOWN
        return gx.UNKNOWN


_NOT_FIELD = object()
_EXPR_MEMO = 32  # answers kept per expression


def _same(a: object, b: object) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def runner_label(call: LauncherCall, wf: Workflows) -> str | None:
    """The runner label a standalone call runs on (its runs-on, with dispatch inputs at their
    defaults), when that can be told."""
    if not call.runner:
        return None
    doc = wf.files.get(call.chain[0].path)

    def py(ref: tuple[str, ...]) -> object:
        if doc is not None and len(ref) == 2 and ref[0] == "dispatch-inputs":
            d = input_default(doc, ref[1], "workflow_dispatch")
            return gx.UNKNOWN if d is None else d
        return gx.UNKNOWN

    parts = [p if isinstance(p, str) else gx.to_string(gx.evaluate(p, py)) for p in call.runner]
    if any(p is gx.UNKNOWN for p in parts):
        return None
    text = "".join(str(p) for p in parts).strip()
    return text or None


def differences(main: LauncherCall, profile_env: Mapping[str, Val], env: Mapping[str, Val]) -> list[str]:
    """Names whose workflow value differs from the profile's (both set, both known)."""
    out = []
    for name, v in env.items():
        p = profile_env.get(name)
        if p is None or name in RUNNER_SET:
            continue
        a, b = known(v), known(p)
        if a is not None and b is not None and a != b:
            out.append(name)
    return out
