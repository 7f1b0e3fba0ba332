"""``/bench <sku>``: which entries a pull request's command selects, and whether it is safe
to spend GPU hours on them. Pure functions over facts; :mod:`bot.github.comments` does the I/O.

Selection: by default the entries the PR changed: entries whose YAML changed, plus entries
whose dispatched launcher or benchmark script the PR changed (through the dispatch
analysis: a change to ``kimik2.5_int4_mi325x_mtp.sh`` selects
``kimik2.5-int4-mi325x-vllm-mtp``), restricted to the runner labels of the GPU family.

Gating (:func:`blockers`): a selected entry is not dispatched (without ``--force``) when lint
says it would run the wrong script (``ignored-variant``, ``missing-script``) or when what it
would run is unknown: its launcher does not parse (``shell-syntax``), the analysis hit a bound
on it (``dispatch-bound``), or a launcher run for it dispatches nothing and does not exit (a
call-depth or budget limit left the script unknown), or any budget of the evaluation
(``Run.budget_hits``: steps, deadline, depths, sizes) ran out on it, or no launcher of it could
be analysed at all. Suppressions the pull request adds never lift a blocker: the caller passes the findings
computed with the head's inline suppressions turned off, and any blocker that only the head's
own suppressions hid (the base did not hide it) is listed as "suppressed by this pull request".

Inputs (:func:`unsafe_inputs`): every entry name and config path that reaches the dispatch,
whatever chose it (the comment, the changed entries, ``--all``), must match a strict pattern;
the dispatched workflow may expand them inside ``run:``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.findings import Finding
from bot.repo.changed import changed_entries
from bot.repo.facts import Facts
from bot.report.markdown import code

BLOCKING = ("ignored-variant", "missing-script")
UNKNOWN = ("shell-syntax", "dispatch-bound")  # what the entry runs is unknown
MAX_DISPATCH = 32  # entries one dispatch takes (the bench template's validation; InferenceX's too)
ENTRY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
CONFIG_PATH = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/-]{0,255}\.ya?ml")


def family_labels(target: str, labels: list[str]) -> list[str]:
    """Runner labels of a GPU family: ``mi325x`` -> mi325x, mi325x-disagg, cluster:mi325x-*;
    a full label (``mi325x-disagg``) names itself and its own sub-labels."""
    t = target.lower()
    out = []
    for label in labels:
        bare = label.lower().removeprefix("cluster:")
        if bare == t or bare.startswith(t + "-") or bare.startswith(t + "_") or label.lower() == t:
            out.append(label)
    return out


@dataclass
class Selection:
    label_family: list[str]
    entries: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)
    problem: str | None = None  # why nothing can be dispatched
    touched: list[str] = field(default_factory=list)  # runner labels of the entries the PR changed


def select(head: Facts, base: Facts | None, changed_paths: set[str], target: str, names: tuple[str, ...],
           everything: bool) -> Selection:
    labels = list(head.runners.labels) or sorted({e.runner for e in head.entries if e.runner})
    family = family_labels(target, labels)
    changed = changed_entries(head, base, changed_paths)
    by_name = {e.name: e for e in head.entries}
    touched = sorted({by_name[n].runner or "?" for n in changed if n in by_name})
    sel = Selection(family, touched=touched)
    if not family:
        sel.problem = (f"no runner label of {code(target)} in {code(head.runners.path or 'runners.yaml')}"
                       + (f"; labels: {', '.join(code(x) for x in labels[:20])}" if labels else ""))
        return sel
    on_family = [e for e in head.entries if e.runner in family]
    if names:
        unknown = [n for n in names if n not in by_name]
        elsewhere = [n for n in names if n in by_name and by_name[n].runner not in family]
        if unknown or elsewhere:
            parts = []
            if unknown:
                parts.append("no entry named " + ", ".join(code(n) for n in unknown))
            if elsewhere:
                parts.append(", ".join(f"{code(n)} runs on {code(str(by_name[n].runner))}" for n in elsewhere))
            sel.problem = "; ".join(parts)
            return sel
        sel.entries = list(names)
        sel.why = {n: changed.get(n, "named in the command") for n in names}
    elif everything:
        sel.entries = [e.name for e in on_family]
        sel.why = {e.name: "--all" for e in on_family}
    else:
        sel.entries = [e.name for e in on_family if e.name in changed]
        sel.why = {n: changed[n] for n in sel.entries}
    if not sel.entries:
        where = ", ".join(code(t) for t in touched) if touched else "none"
        sel.problem = (f"this pull request changes no entry on {', '.join(code(f) for f in family)} "
                       f"(nor a launcher or script one of them runs). Runner labels it touches: {where}. "
                       "Name entries, or use `--all` for every entry on that SKU.")
    return sel


@dataclass(frozen=True)
class Blocker:
    path: str
    line: int
    message: str
    suppressed: bool = False  # hidden only by a suppression this pull request adds


def launchers(head: Facts, entries: Iterable[str]) -> set[str]:
    """The launcher files (as the workflow names them, and what links resolve to) of these entries."""
    chosen = set(entries)
    out: set[str] = set()
    for e in head.entries:
        if e.name in chosen and e.runner:
            for node in head.runners.labels.get(e.runner, ()):
                path = head.launcher_of_node(node)
                out.add(path)
                out.add(head.tree.resolve(path) or path)
    return out


def _blocks(f: Finding, chosen: set[str], paths: set[str]) -> bool:
    if f.rule in BLOCKING:
        return bool(chosen.intersection(f.entries))
    if f.rule in UNKNOWN:
        return bool(chosen.intersection(f.entries)) or f.path in paths
    return False


def blockers(head: Facts, findings: list[Finding], entries: list[str], unsuppressed: list[Finding] | None = None,
             base_hidden: frozenset[str] = frozenset()) -> list[Blocker]:
    """What stops a dispatch of these entries (see the module docstring). ``unsuppressed``: the
    head's findings with its inline suppressions off; ``base_hidden``: fingerprints of the
    findings the base's own suppressions hide (those stay hidden)."""
    chosen = set(entries)
    paths = launchers(head, entries)
    out = [Blocker(f.path, f.line, f.message) for f in findings if _blocks(f, chosen, paths)]
    kept = {f.fingerprint for f in findings}
    for f in unsuppressed or ():
        if f.fingerprint not in kept and f.fingerprint not in base_hidden and _blocks(f, chosen, paths):
            out.append(Blocker(f.path, f.line, f.message, suppressed=True))
    by_entry: dict[str, list[bool]] = {}
    for run in head.runs:
        if run.entry.name in chosen:
            unknown = not run.dispatches and not run.exits_early and not run.handoffs
            by_entry.setdefault(run.entry.name, []).append(unknown)
            said = {(b.path, b.line) for b in out}
            for hit in run.budget_hits:  # one line per place: a dispatch-bound finding there says it already
                if (hit.path, hit.line) not in said:
                    out.append(Blocker(hit.path, hit.line, f"{hit.text()}: the analysis of {run.entry.name} ran "
                                                           "out of budget there, so what it would run is unknown"))
            if unknown and not run.budget_hits and not any(b.path in (run.launcher, run.real) for b in out):
                out.append(Blocker(run.launcher, 1, f"{run.launcher} dispatches no script for {run.entry.name} "
                                                    "and does not exit: the analysis stopped (a call-depth or "
                                                    "budget limit), so what it would run is unknown"))
    for name in entries:
        if name not in by_entry and not any(b.path in paths for b in out):
            out.append(Blocker("", 0, f"no launcher of {name} could be analysed, so what it would run is unknown"))
    return list(dict.fromkeys(out))


def unsafe_inputs(entries: Iterable[str], config_files: Iterable[str]) -> list[str]:
    """Why these dispatch inputs are refused (markdown; every offender an inert code span), if they are."""
    out = [f"entry name {code(n)} is not `[A-Za-z0-9][A-Za-z0-9._-]*` (at most 128 characters)"
           for n in entries if not ENTRY_NAME.fullmatch(n)]
    for path in config_files:
        if not CONFIG_PATH.fullmatch(path) or ".." in path or "//" in path:
            out.append(f"config file {code(path)} is not a relative `.yaml`/`.yml` path of letters, digits, "
                       "`.`, `_`, `-` and `/` without `..`")
    return out


def config_files(head: Facts, entries: list[str]) -> list[str]:
    files = {e.path for e in head.entries if e.name in set(entries)}
    return sorted(files)


def render(template: str, values: dict[str, str]) -> str:
    out = template
    for k, v in values.items():
        out = out.replace("{" + k + "}", v)
    return out
