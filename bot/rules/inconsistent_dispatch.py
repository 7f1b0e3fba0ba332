"""inconsistent-dispatch: nodes of one runner label dispatch an entry to different scripts.

What it does:
    A runner label (``h200``) can list nodes of several families (``h200-cw_0``,
    ``h200-nb_1``), and each family has its own launcher. For every entry and point it
    compares what the launchers of the label's node families dispatch. When they
    disagree, it reports the launcher line that differs (the one that sends the entry to a
    missing script, else the one that ignores a variant, else the one that sets a path
    variable and never uses it, else the family with fewer nodes), listing which nodes
    run what. Entries it reports are not reported again by ``ignored-variant`` or
    ``missing-script``: the disagreement is the cause.

Why is this bad?
    The job runs on whichever node of the label picks it up. The same entry measures one
    script on ``h200-cw_0`` and another on ``h200-nb_1``: the published number depends on
    the machine, and reruns do not reproduce it.

Example:
    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x:
        - mi300x-amds_0
        - mi300x-amds_1
        - mi300x-cr_0
    ```
    ```sh
    # file: runners/launch_mi300x-cr.sh
    #!/usr/bin/env bash
    set -euo pipefail
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    # the suffix is computed, then forgotten: on mi300x-cr_0 the MTP entry runs the plain script,
    # on the mi300x-amds nodes (launch_mi300x-amds.sh appends it) the _mtp one
    docker run --rm --network=host -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
        -e MODEL -e TP -e CONC -e ISL -e OSL -e MAX_MODEL_LEN -e RESULT_FILENAME "$IMAGE" \
        bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh"
    ```

Fix:
    Make the launcher that differs build the same path as the others (here: append
    ``${SPEC_SUFFIX}``). Where the difference is an ignored variant, the fix is
    proposed and checked as for ``ignored-variant``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules import missing_script
from bot.rules._disagree import Disagreement, disagreements, nodes_of
from bot.rules._fixes import propose_fix
from bot.rules._variants import entries_text
from bot.settings import Config

ID = "inconsistent-dispatch"
CODE = "BB113"
SEVERITY = Severity.ERROR
SUMMARY = "nodes of one runner label dispatch the same entry to different scripts"


def subject(facts: Facts, dis: Disagreement) -> str:
    """label | differing launcher | the expansions of the path expression."""
    text = facts.tree.text(dis.real) or ""
    lines = text.splitlines()
    construct = ""
    if 0 < dis.built_at.line <= len(lines):
        word = lines[dis.built_at.line - 1][max(dis.built_at.col - 1, 0):]
        construct = " ".join(_EXPANSION.findall(word))
    return f"{dis.label}|{dis.launcher}|{construct.replace('|', ' ').replace(',', ' ')}"


_EXPANSION = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def _nodes_text(nodes: list[str]) -> str:
    return ", ".join(nodes[:3]) + (f" (+{len(nodes) - 3})" if len(nodes) > 3 else "")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for dis in disagreements(facts):
        names = sorted(dis.entries)
        mine, theirs = dis.entries[names[0]]
        me = posixpath.basename(dis.launcher)
        my_nodes = nodes_of(facts, dis.label, dis.launcher)
        other_parts = []
        for launcher in sorted(dis.others):
            other_parts.append(f"{_nodes_text(nodes_of(facts, dis.label, launcher))} "
                               f"({posixpath.basename(launcher)})")
        gone = " (which does not exist)" if names[0] in dis.missing else ""
        who = names[0] if len(names) == 1 else f"{len(names)} entries ({entries_text(names)}), e.g. {names[0]},"
        outcome = (f"the job fails on {_nodes_text(my_nodes)} and runs on the others" if names[0] in dis.missing
                   else "the result depends on which node picks up the job")
        message = (f"runner label {dis.label} spans node families that disagree: {who} runs {theirs} on "
                   f"{', '.join(other_parts)} but {mine}{gone} on {_nodes_text(my_nodes)} ({me}); {outcome}")
        fix = None
        if dis.miss is not None:
            fix, _ = propose_fix(facts, dis.miss)
        if dis.unused is not None:
            var, line = dis.unused
            message += f": {me} sets {var} (line {line}) but this line never appends it"
        elif dis.miss is not None:
            message += f": this line builds the path without the {dis.miss.names} variant"
        related: list[Related] = []
        if dis.unused is not None:
            related.append(Related(dis.real, dis.unused[1], f"{dis.unused[0]} is set here and never used"))
        for launcher, run in sorted(dis.others.items()):
            d = next((x for x in run.dispatches), None)
            if d is not None:
                related.append(Related(d.built_at.path, d.built_at.line,
                                       f"{posixpath.basename(launcher)} builds the path here"))
        for name in names:
            run = next(r for r in dis.runs if r.entry.name == name)
            script = dis.entries[name][0]
            if name in dis.missing:
                related.append(Related(run.entry.path, run.entry.pos.line,
                                       f"{name}: runs {script} on {me}, which does not exist",
                                       missing_script.ID, missing_script.subject(name, script)))
            else:
                related.append(Related(run.entry.path, run.entry.pos.line, f"{name}"))
        yield Finding(ID, CODE, SEVERITY, dis.real, dis.built_at.line, dis.built_at.col, message,
                      tuple(related), tuple(names), fix, key=subject(facts, dis))
