"""launcher-rejects-entry: the launcher exits before running any script for an entry.

What it does:
    Evaluates each entry's launcher under the entry's environment. When every path
    through the launcher ends in ``exit`` before any benchmark script is dispatched
    (typically the ``else`` of an if-chain over MODEL_PREFIX / PRECISION / FRAMEWORK:
    ``echo "Unsupported model"; exit 1``), the entry is reported at that ``exit``.
    Paths that depend on something unknown (the output of ``salloc``) do not count:
    only entries the launcher refuses whatever the cluster does.

Why is this bad?
    The sweep schedules the job, the runner waits for GPUs, and the job fails at once,
    or the entry was meant for another cluster of the same runner label.

Example:
    ```sh
    # file: runners/launch_mi300x-amds.sh
    #!/usr/bin/env bash
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    if [[ "$MODEL_PREFIX" == "dsr1" ]]; then
        MODEL_PATH=/models/dsr1
    else
        echo "Unsupported model prefix $MODEL_PREFIX" >&2
        exit 1
    fi
    bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"
    ```

Fix:
    Teach the launcher the entry's model/precision/framework, or move the entry to a
    runner label whose launcher supports it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules import _envpaths
from bot.rules._variants import entries_text
from bot.settings import Config

ID = "launcher-rejects-entry"
CODE = "BB107"
SEVERITY = Severity.ERROR
SUMMARY = "the launcher exits before running any script for an entry"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    groups: dict[tuple[str, tuple[tuple[str, int], ...]], list[str]] = {}
    explained = _envpaths.explained_exits(facts)  # a variable the workflow never sets: env-not-passed
    for run in facts.runs:
        if not run.exits_early or not run.exits:
            continue
        if all((loc.path, loc.line) in explained for loc in run.exits):
            continue
        key = (run.real, tuple((loc.path, loc.line) for loc in run.exits))
        names = groups.setdefault(key, [])
        if run.entry.name not in names:
            names.append(run.entry.name)
    for (launcher, exits), names in sorted(groups.items()):
        path, line = exits[0]
        entries = {e.name: e for e in facts.entries}
        fields = sorted({f"{entries[n].fields.get('model-prefix')}/{entries[n].fields.get('precision')}/"
                         f"{entries[n].fields.get('framework')}" for n in names if n in entries})
        message = (f"{launcher.rsplit('/', 1)[-1]} exits here for {entries_text(names)} before running any "
                   f"benchmark script (model-prefix/precision/framework {', '.join(fields)})")
        related = tuple(Related(entries[n].path, entries[n].pos.line, n) for n in names[:5] if n in entries)
        yield Finding(ID, CODE, SEVERITY, path, line, 1, message, related, tuple(names),
                      key=f"{launcher}|{','.join(sorted(names))}")
