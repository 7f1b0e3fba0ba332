"""no-launcher: runner nodes whose launcher script does not exist.

What it does:
    The workflow runs ``runners/launch_${RUNNER_NAME%%_*}.sh`` on whichever node picks
    up the job. For every node in runners.yaml it computes that launcher path and reports
    the nodes (one finding per missing launcher) for which no file exists.

Why is this bad?
    Any job that lands on such a node fails with "No such file or directory", and since
    a label fans out to several nodes, only some runs of an entry fail.

Example:
    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x:
        - mi300x-amds_0
        - mi300x-amds_1
      mi325x:
        - mi325x-amds_0    # there is no runners/launch_mi325x-amds.sh
    ```

Fix:
    Add the launcher (or a symlink to the launcher of an identical cluster), or fix the
    node name.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.rules._variants import entries_text
from bot.settings import Config

ID = "no-launcher"
CODE = "BB105"
SEVERITY = Severity.ERROR
SUMMARY = "runner nodes whose launcher file does not exist"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    runners = facts.runners
    if runners.path is None:
        return
    missing: dict[str, list[tuple[str, str, int, int]]] = {}
    for label, node, pos in runners.nodes():
        launcher = facts.launcher_of_node(node)
        if not facts.tree.is_file(launcher):
            missing.setdefault(launcher, []).append((label, node, pos.line, pos.col))
    by_label: dict[str | None, list[str]] = {}
    if missing:
        for e in facts.entries:
            by_label.setdefault(e.runner, []).append(e.name)
    for launcher, nodes in missing.items():
        labels = sorted({n[0] for n in nodes})
        names = list(dict.fromkeys(n[1] for n in nodes))
        users = sorted(name for label in labels for name in by_label.get(label, []))
        message = (f"{launcher} does not exist, but nodes {entries_text(names, 3)} "
                   f"(label{'s' if len(labels) > 1 else ''} {', '.join(labels)}) would run it")
        if users:
            message += f"; entries affected: {entries_text(users, 3)}"
        else:
            message += "; no entry uses these nodes yet"
        _, _, line, col = nodes[0]
        yield Finding(ID, CODE, SEVERITY if users else Severity.WARNING, runners.path, line, col, message, (),
                      tuple(users), key=launcher)
