"""unknown-runner-label: an entry's runner label is not in runners.yaml.

What it does:
    Checks every entry's ``runner:`` against the labels of ``configs/runners.yaml``
    (both the flat and the ``labels:`` format) and suggests the closest label.

Why is this bad?
    The sweep cannot schedule the job: no self-hosted runner carries the label, so the
    entry never runs (or the workflow waits for a runner forever).

Example:
    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x-amds:         # renamed; the configs still say runner: mi300x
        - mi300x-amds_0
        - mi300x-amds_1
    ```

Fix:
    Use an existing label, or add the label and its nodes to runners.yaml.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules._variants import closest

ID = "unknown-runner-label"
CODE = "BB104"
SEVERITY = Severity.ERROR
SUMMARY = "an entry's runner label is not declared in runners.yaml"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    runners = facts.runners
    if runners.path is None or runners.error is not None:
        return
    labels = list(runners.labels)
    for entry in facts.entries:
        label = entry.runner
        if label is None or label in runners.labels:
            continue
        pos = entry.field_pos("runner")
        near = closest(label, labels)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        yield Finding(ID, CODE, SEVERITY, entry.path, pos.line, pos.col,
                      f"{entry.name}: runner label {label!r} is not in {runners.path}{hint}",
                      (Related(runners.path, 1, "declared labels"),), (entry.name,), key=f"{entry.name}|{label}")
