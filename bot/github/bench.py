"""``/bench <sku>``: which entries a pull request's command selects, and whether it is safe
to spend GPU hours on them. Pure functions over facts; :mod:`bot.github.comments` does the I/O.

Selection: by default the entries the PR changed: entries whose YAML changed, plus entries
whose dispatched launcher or benchmark script the PR changed (through the dispatch
analysis: a change to ``kimik2.5_int4_mi325x_mtp.sh`` selects
``kimik2.5-int4-mi325x-vllm-mtp``), restricted to the runner labels of the GPU family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from bot.findings import Finding
from bot.repo.configs import Entry
from bot.repo.facts import Facts
from bot.shell.values import known

BLOCKING = ("ignored-variant", "missing-script")


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


def _canonical(entry: Entry) -> str:
    return json.dumps(entry.fields, sort_keys=True, default=str)


def changed_entries(head: Facts, base: Facts | None, changed_paths: set[str]) -> dict[str, str]:
    """entry name -> why it is selected (its YAML changed, or what it runs changed)."""
    before = {e.name: _canonical(e) for e in base.entries} if base is not None else {}
    out: dict[str, str] = {}
    for e in head.entries:
        if e.name not in before:
            out[e.name] = f"new entry in {e.path}"
        elif before[e.name] != _canonical(e):
            out[e.name] = f"entry changed in {e.path}"
    for run in head.runs:
        if run.entry.name in out:
            continue
        for path in (run.launcher, run.real):
            if path in changed_paths:
                out[run.entry.name] = f"its launcher {path} changed"
                break
        else:
            for d in run.dispatches:
                script = known(d.target)
                if script and script in changed_paths:
                    out[run.entry.name] = f"its script {script} changed"
                    break
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
        sel.problem = (f"no runner label of `{target}` in {head.runners.path or 'runners.yaml'}"
                       + (f"; labels: {', '.join(f'`{x}`' for x in labels[:20])}" if labels else ""))
        return sel
    on_family = [e for e in head.entries if e.runner in family]
    if names:
        unknown = [n for n in names if n not in by_name]
        elsewhere = [n for n in names if n in by_name and by_name[n].runner not in family]
        if unknown or elsewhere:
            parts = []
            if unknown:
                parts.append("no entry named " + ", ".join(f"`{n}`" for n in unknown))
            if elsewhere:
                parts.append(", ".join(f"`{n}` runs on `{by_name[n].runner}`" for n in elsewhere))
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
        where = ", ".join(f"`{t}`" for t in touched) if touched else "none"
        sel.problem = (f"this pull request changes no entry on {', '.join(f'`{f}`' for f in family)} "
                       f"(nor a launcher or script one of them runs). Runner labels it touches: {where}. "
                       "Name entries, or use `--all` for every entry on that SKU.")
    return sel


def blockers(findings: list[Finding], entries: list[str]) -> list[Finding]:
    """Findings that mean a selected entry would not run what its author thinks."""
    chosen = set(entries)
    return [f for f in findings if f.rule in BLOCKING and chosen.intersection(f.entries)]


def config_files(head: Facts, entries: list[str]) -> list[str]:
    files = {e.path for e in head.entries if e.name in set(entries)}
    return sorted(files)


def render(template: str, values: dict[str, str]) -> str:
    out = template
    for k, v in values.items():
        out = out.replace("{" + k + "}", v)
    return out
