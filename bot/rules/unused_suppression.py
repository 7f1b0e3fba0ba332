"""unused-suppression: a ``# benchbot: ignore[...]`` comment that suppresses nothing.

What it does:
    Reports every rule named in an inline suppression that matched no finding on the
    line it covers, and names that are not rules at all. Rules turned off by the
    configuration are not judged. The fix removes the stale rule ids (or the comment).

Why is this bad?
    A stale suppression hides the next real problem on that line: once the launcher
    changes, a new finding of the same rule goes unseen. Misspelt rule ids never
    suppressed anything in the first place.

Example:
    ```sh
    # file: runners/launch_mi300x-amds.sh
    #!/usr/bin/env bash
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    # benchbot: ignore[ignored-variant] the launcher was fixed long ago
    bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"
    ```

Fix:
    Delete the suppression, or the rule ids in it that no longer match.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterator, Mapping

from bot.external.names import is_external
from bot.findings import Edit, Finding, Fix, Severity
from bot.settings import Config
from bot.suppress import Suppression, without_rules

ID = "unused-suppression"
CODE = "BB004"
SEVERITY = Severity.WARNING
SUMMARY = "a suppression comment that suppresses nothing"


def check_unused(suppressions: Mapping[str, list[Suppression]], used: set[tuple[Suppression, str]],
                 texts: Mapping[str, str], conf: Config, resolve_rule: Callable[[str], str | None],
                 known: Collection[str]) -> Iterator[Finding]:
    """Findings for the (suppression, rule) pairs that were never used. The registry comes as
    data: ``resolve_rule`` (an id or code to a rule id) and the ``known`` rule ids."""

    for path, items in suppressions.items():
        for s in items:
            stale: list[tuple[str, str]] = []  # (as written, why)
            for name in s.rules:
                rid = resolve_rule(name)
                if rid is None:
                    hint = difflib.get_close_matches(name, list(known), n=1)
                    stale.append((name, f"{name!r} is not a benchbot rule"
                                  + (f" (did you mean {hint[0]!r}?)" if hint else "")))
                elif not conf.enabled(rid) or conf.ignored_at(rid, path) or rid == ID or is_external(rid):
                    continue  # an external checker's rule: the checkers run on some lints only
                elif (s, name) not in used:
                    where = "this file" if s.covers == 0 else f"line {s.covers}"
                    stale.append((name, f"no {rid} finding on {where}"))
            if not s.rules:
                stale.append(("", "it names no rule"))
            if not stale:
                continue
            fix = _fix(path, s, {n for n, _ in stale}, texts.get(path))
            message = "unused suppression: " + "; ".join(why for _, why in stale)
            yield Finding(ID, CODE, SEVERITY, path, s.line, s.column, message, fix=fix,
                          key=f"{path}|{s.text.strip().replace('|', ' ').replace(',', ' ')}|"
                              f"{','.join(sorted(n for n, _ in stale))}")


def _fix(path: str, s: Suppression, drop: set[str], text: str | None) -> Fix | None:
    if text is None:
        return None
    lines = text.splitlines(keepends=True)
    if not 0 < s.line <= len(lines):
        return None
    new_line = without_rules(s, drop) if s.rules else (None if s.standalone else without_rules(s, set(s.rules)))
    old = lines[s.line - 1]
    ending = old[len(old.rstrip("\r\n")):]
    lines[s.line - 1] = "" if new_line is None else new_line + ending
    what = "Delete the suppression comment" if new_line is None or not (set(s.rules) - drop) \
        else f"Remove {', '.join(sorted(drop))} from the suppression"
    return Fix.of(what, [Edit(path, text, "".join(lines))], safe=True)
