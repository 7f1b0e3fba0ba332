"""The rule registry: an explicit dict, no import side effects.

Each rule module has ID (stable kebab-case), CODE (alias), SEVERITY (default), a
docstring (What it does / Why is this bad? / Example / Fix) and
``check(facts, conf) -> Iterator[Finding]``, pure over the facts.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import TYPE_CHECKING

from bot.rules import (
    config_syntax,
    dead_script,
    dispatch_bound,
    ignored_variant,
    launcher_rejects_entry,
    missing_script,
    no_launcher,
    shell_syntax,
    unknown_runner_label,
    unreachable_launcher,
)

if TYPE_CHECKING:
    from bot.config import Config
    from bot.findings import Finding
    from bot.repo.facts import Facts

RULES: dict[str, ModuleType] = {
    m.ID: m
    for m in (
        shell_syntax,
        config_syntax,
        missing_script,
        dead_script,
        ignored_variant,
        launcher_rejects_entry,
        unknown_runner_label,
        no_launcher,
        unreachable_launcher,
        dispatch_bound,
    )
}
BY_CODE: dict[str, str] = {m.CODE: rid for rid, m in RULES.items()}


def resolve_rule(name: str) -> str | None:
    """A rule id from an id or a code (BB103)."""
    if name in RULES:
        return name
    return BY_CODE.get(name.upper())


def run(facts: Facts, conf: Config) -> list[Finding]:
    """Every enabled rule over the facts, with configured severities, sorted."""
    out: list[Finding] = []
    for rid, module in RULES.items():
        if not conf.enabled(rid):
            continue
        for f in module.check(facts, conf):
            sev = conf.severity.get(rid)
            out.append(dataclasses.replace(f, severity=sev) if sev is not None else f)
    out.sort(key=lambda f: f.sort_key())
    return out
