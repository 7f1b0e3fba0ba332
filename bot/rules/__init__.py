"""The rule registry: an explicit dict, no import side effects.

Each rule module has ID (stable kebab-case), CODE (alias), SEVERITY (default), a
docstring (What it does / Why is this bad? / Example / Fix) and
``check(facts, conf) -> Iterator[Finding]``, pure over the facts. The one exception is
``unused-suppression``, which judges the suppressions after every other rule ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from bot.external import names as external_names
from bot.rules import (
    changelog_missing,
    config_schema,
    config_syntax,
    dead_script,
    dispatch_bound,
    env_not_passed,
    ignored_variant,
    inconsistent_dispatch,
    launcher_rejects_entry,
    missing_recipe,
    missing_script,
    no_launcher,
    profile_overridden,
    recipe_image_mismatch,
    recipe_mismatch,
    shell_syntax,
    spec_client_args,
    spec_config_invalid,
    spec_draft_not_allowed,
    spec_env_not_exported,
    spec_exceeds_mtp_layers,
    spec_not_enabled,
    spec_unexpected,
    unknown_runner_label,
    unreachable_launcher,
    unused_config_field,
    unused_suppression,
    variant_drift,
)

if TYPE_CHECKING:
    from bot.findings import Finding
    from bot.repo.facts import Facts
    from bot.settings import Config
    from bot.suppress import Suppression

RULES: dict[str, ModuleType] = {
    m.ID: m
    for m in (
        shell_syntax,
        config_syntax,
        config_schema,
        missing_script,
        dead_script,
        ignored_variant,
        inconsistent_dispatch,
        env_not_passed,
        profile_overridden,
        launcher_rejects_entry,
        unknown_runner_label,
        no_launcher,
        unreachable_launcher,
        unused_config_field,
        missing_recipe,
        recipe_image_mismatch,
        spec_not_enabled,
        spec_unexpected,
        spec_config_invalid,
        spec_exceeds_mtp_layers,
        spec_env_not_exported,
        variant_drift,
        spec_client_args,
        spec_draft_not_allowed,
        recipe_mismatch,
        dispatch_bound,
        changelog_missing,
        unused_suppression,
    )
}
BY_CODE: dict[str, str] = {m.CODE: rid for rid, m in RULES.items()}


def resolve_rule(name: str) -> str | None:
    """A rule id from an id or a code (BB103); an external checker's rule (``zizmor/artipacked``)
    or a tool's name for all of its rules (``actionlint``: ``bot.external.names``)."""
    if name in RULES:
        return name
    return BY_CODE.get(name.upper()) or external_names.resolve(name)


def run(facts: Facts, conf: Config, honoured: Callable[[Suppression], bool] | None = None) -> list[Finding]:
    """Every enabled rule over the facts, minus per-path ignores and inline
    suppressions, with configured severities, sorted. ``honoured``: which inline
    suppressions count (a pull request's review counts only those its base has)."""
    raw: list[Finding] = []
    for rid, module in RULES.items():
        if conf.enabled(rid) and module is not unused_suppression:
            raw.extend(f for f in module.check(facts, conf) if not conf.ignored_at(rid, f.path))
    sups = facts.suppressions if honoured is None else \
        {p: [s for s in found if honoured(s)] for p, found in facts.suppressions.items()}
    out, used = suppress(raw, sups)
    if conf.enabled(unused_suppression.ID):
        texts = {p: facts.tree.text(p) or "" for p in sups}
        out.extend(f for f in unused_suppression.check_unused(sups, used, texts, conf, resolve_rule, RULES)
                   if not conf.ignored_at(f.rule, f.path))
    out = [dataclasses.replace(f, severity=conf.severity[f.rule]) if f.rule in conf.severity else f for f in out]
    out = fold(out)
    out.sort(key=lambda f: f.sort_key())
    return out


def fold(findings: list[Finding]) -> list[Finding]:
    """One finding per root cause: a finding that another reported finding lists as its
    consequence (directly, or through a consequence of its own) is dropped: it lives on in
    the cause's ``related``. A consequence whose cause was suppressed, ignored or disabled is
    listed by no reported finding, so it stays a finding of its own; findings that only list
    each other (no root among them) are all kept."""
    present = {f.fingerprint for f in findings}
    edges = {f.fingerprint: {r.fingerprint for r in f.consequences} & present - {f.fingerprint}
             for f in findings}
    listed = set().union(*edges.values())
    if not listed:
        return findings
    dropped: set[str] = set()
    todo = [fp for fp in present if fp not in listed]  # the roots
    while todo:
        for child in edges[todo.pop()]:
            if child not in dropped:
                dropped.add(child)
                todo.append(child)
    return [f for f in findings if f.fingerprint not in dropped]


def suppress(findings: list[Finding], suppressions: Mapping[str, list[Suppression]]
             ) -> tuple[list[Finding], set[tuple[Suppression, str]]]:
    """The findings no inline suppression covers, and the (suppression, name) pairs used."""
    kept: list[Finding] = []
    used: set[tuple[Suppression, str]] = set()
    for f in findings:
        hit = False
        for s in suppressions.get(f.path, ()):
            if s.covers not in (0, f.line):
                continue
            for name in s.rules:
                if external_names.covers(resolve_rule(name) or "", f.rule):
                    used.add((s, name))
                    hit = True
        if not hit:
            kept.append(f)
    return kept, used
