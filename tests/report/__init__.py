"""Tests of the output formats (bot/report), on the bundled example and on crafted findings."""

from __future__ import annotations

import re

import pytest

from bot.cli import main
from bot.findings import Finding, Fix, Related, Severity
from bot.report import Stats

# Seed runs select the two rules of the seed issue, so that new rules do not move these goldens.
SEED_RULES = ("--select", "dead-script,ignored-variant")
STATS = Stats(files=3, entries=2, launchers=1, scripts=1, seconds=0.5)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def normalize(text: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in <t>s", text)


def finding(path: str = "runners/launch.sh", line: int = 3, column: int = 5, message: str = "msg", *,
            severity: Severity = Severity.ERROR, rule: str = "ignored-variant", code: str = "BB103",
            related: tuple[Related, ...] = (), entries: tuple[str, ...] = (), fix: Fix | None = None) -> Finding:
    return Finding(rule, code, severity, path, line, column, message, related, entries, fix)
