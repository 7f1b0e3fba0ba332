"""Policy from the base: what a pull request changes in benchbot's own configuration.

The review of a pull request runs under the configuration of its base commit (rules,
severities, ignores, the fail level, the profile): a pull request cannot switch off its
own review. What it changes there is shown in the summary instead, with the findings its
configuration would hide. Pure: configurations and findings in, Markdown out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.findings import Finding
from bot.report import markdown as md
from bot.settings import Config
from bot.suppress import Suppression


def changes(base: Config, head: Config) -> list[tuple[str, str, str]]:
    """(setting, base value, head value) for every effective setting that differs."""
    out: list[tuple[str, str, str]] = []
    for name, a, b in _fields(base, head, ""):
        if a != b:
            out.append((name, a, b))
    return out


def _fields(base: Any, head: Any, prefix: str) -> Iterable[tuple[str, str, str]]:
    for f in dataclasses.fields(base):
        if f.name == "source":
            continue
        a, b = getattr(base, f.name), getattr(head, f.name)
        name = f"{prefix}{f.name.replace('_', '-')}"
        if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b) and not isinstance(a, type):
            yield from _fields(a, b, f"{name}.")
        else:
            yield name, _show(a), _show(b)


def _show(v: Any) -> str:
    if isinstance(v, (frozenset, set)):
        return "[" + ", ".join(sorted(str(x) for x in v)) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_show(x)}" for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    label = getattr(v, "label", None)
    return str(label) if isinstance(label, str) else str(v)


def hidden(findings: Iterable[Finding], head: Config) -> list[Finding]:
    """The findings (made under the base configuration) the head's would not report."""
    out = []
    for f in findings:
        severity = head.severity.get(f.rule, f.severity)
        if not head.enabled(f.rule) or head.ignored_at(f.rule, f.path) or severity < head.fail_on:
            out.append(f)
    return out


def suppression_key(s: Suppression) -> tuple[str, tuple[str, ...], str]:
    """A suppression by what it says and where, not by its line (an edit above it moves it)."""
    return (s.path, s.rules, s.text.strip())


def suppression_keys(found: Mapping[str, list[Suppression]]) -> frozenset[tuple[str, tuple[str, ...], str]]:
    return frozenset(suppression_key(s) for sups in found.values() for s in sups)


def added_suppressions(head: Mapping[str, list[Suppression]],
                       base: frozenset[tuple[str, tuple[str, ...], str]]) -> list[Suppression]:
    """The head's inline suppressions its base does not have."""
    return sorted((s for sups in head.values() for s in sups if suppression_key(s) not in base),
                  key=lambda s: (s.path, s.line))


def notice(base: Config, head: Config | None, head_error: str | None, findings: list[Finding],
           added: list[Suppression] | None = None, tool_configs: Sequence[str] = ()) -> str | None:
    """The summary section on what the pull request changes in benchbot's own policy: its
    configuration, the inline suppressions it adds and the workflow checkers' configurations
    it changes (``tool_configs``: zizmor's, actionlint's; None when it changes none of these)."""
    lines: list[str] = []
    if head_error is not None:
        lines += [f"The pull request's configuration does not load: {md.escape(head_error)}"]
    elif head is not None and (diff := changes(base, head)):
        lines += [f"This review uses the configuration of the base (`{md.escape(base.source or 'defaults')}`); "
                  "the pull request's own takes effect once it is merged.", "",
                  "| setting | base | this pull request |", "|---|---|---|"]
        lines += [f"| {md.cell(md.code(name))} | {md.cell(md.code(a))} | {md.cell(md.code(b))} |"
                  for name, a, b in diff]
        gone = hidden(findings, head)
        if gone:
            shown = ", ".join(f"{md.code(f'{f.path}:{f.line}')} {f.rule}" for f in gone[:10])
            more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
            lines += ["", f"Under it, {len(gone)} of this head's findings would not fail the check: {shown}{more}."]
    if added:
        if lines:
            lines.append("")
        lines += [f"It adds {len(added)} inline suppression{'' if len(added) == 1 else 's'}, not applied to "
                  "its own review:", ""]
        lines += [f"- {md.code(f'{s.path}:{s.line}')} ignores {', '.join(md.code(r) for r in s.rules)}: "
                  f"{md.escape(s.reason) if s.reason else '(no reason given)'}" for s in added[:20]]
        if len(added) > 20:
            lines.append(f"- and {len(added) - 20} more")
    if tool_configs:
        if lines:
            lines.append("")
        files = ", ".join(md.code(p) for p in tool_configs)
        lines += [f"It changes {files}: the workflow checks of this review use the base's, the pull "
                  "request's take effect once it is merged."]
    if not lines:
        return None
    return "\n".join(["### This pull request changes benchbot's configuration", "", *lines])
