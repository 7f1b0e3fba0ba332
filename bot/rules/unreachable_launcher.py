"""unreachable-launcher: a launcher that no runner node would run.

What it does:
    Reports ``runners/launch_*.sh`` files whose name (``launch_<node prefix>.sh``) matches
    no node in runners.yaml.

Why is this bad?
    Fixes made to it never run; often the cluster was renamed in runners.yaml and the
    launcher was not, so the nodes now fail with no-launcher.

Example:
    ```sh
    # file: runners/launch_h20-xyz.sh
    #!/usr/bin/env bash
    # runners.yaml has no h20-xyz_* node, so no job ever runs this launcher
    bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h20.sh"
    ```

Fix:
    Rename the launcher to match its nodes, add the nodes, or delete it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.settings import Config

ID = "unreachable-launcher"
CODE = "BB106"
SEVERITY = Severity.WARNING
SUMMARY = "a launcher that no runner node in runners.yaml would run"


def subject(path: str) -> str:
    return path


def unreachable(facts: Facts) -> list[str]:
    """Launchers no runner node in runners.yaml runs (memoized)."""
    if "unreachable" in facts.memo:
        return facts.memo["unreachable"]  # type: ignore[no-any-return]
    out: list[str] = []
    facts.memo["unreachable"] = out
    runners = facts.runners
    if runners.path is None or runners.error is not None:
        return out
    used = {facts.launcher_of_node(node) for _, node, _ in runners.nodes()}
    used_real = {facts.tree.resolve(p) for p in used}
    for run in facts.runs:
        for d in run.dispatches:
            used_real.add(d.loc.path)
    out.extend(p for p in facts.launcher_files if p not in used and p not in used_real)
    return out


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    runners = facts.runners
    for path in unreachable(facts):
        prefix = facts.profile.prefix_of_launcher(path) or path
        yield Finding(ID, CODE, SEVERITY, path, 1, 1,
                      f"no node in {runners.path} is named {prefix}{facts.profile.node_separator}*, "
                      "so no job runs this launcher", key=subject(path))
