"""Which entries a change touches: added, their YAML changed, or what they run changed (their
launcher or a script they dispatch). ``/bench`` picks them, ``changelog-missing`` asks that
each has a changelog entry, the PR summary draws their chains. Facts only: no GitHub here.
"""

from __future__ import annotations

import json

from bot.repo.facts import Facts
from bot.repo.load.configs import Entry
from bot.shell.ir.values import known


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
