"""dispatch-bound: the launcher branches more than the analysis follows.

What it does:
    The evaluator follows every branch it cannot decide, up to a bound
    (``max-paths`` in the profile). When a launcher needs more, branches are merged
    (their differing variables become unknown). Where that leaves the path of a
    dispatched script unknown, this note says so, so that missing findings for that
    launcher are not mistaken for a clean bill.

Why is this bad?
    It is not a bug in the launcher; it means the results for it are less precise.

Example:
    ```sh
    # file: runners/launch_mi300x-amds.sh
    #!/usr/bin/env bash
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    # five site probes, each may move the mount point: 32 paths, more than max-paths (16)
    if [ -n "$(probe nfs)" ]; then A=nfs; WS=/workspace; else A=raid; WS=/github/workspace; fi
    if [ -n "$(probe ib)" ]; then B=ib; WS=/workspace; else B=eth; fi
    if [ -n "$(probe rocm7)" ]; then C=7; WS=/github/workspace; else C=6; fi
    if [ -n "$(probe numa)" ]; then D=numa; WS=/workspace; else D=flat; fi
    if [ -n "$(probe big)" ]; then E=big; WS=/github/workspace; else E=small; fi
    export A B C D E
    bash "$WS/benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"
    ```

Fix:
    Raise ``max-paths`` in ``.benchbot.yml`` or simplify the launcher.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.shell.values import Unk

ID = "dispatch-bound"
CODE = "BB901"
SEVERITY = Severity.INFO
SUMMARY = "the launcher has more paths than the analysis follows; results are approximate"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    hit: dict[str, list[str]] = {}
    for run in facts.runs:
        # only where merging lost precision that matters: a dispatched path became unknown
        if run.bound_hit and any(isinstance(p, Unk) and "merged paths" in p.why
                                 for d in run.dispatches for p in d.target):
            names = hit.setdefault(run.real, [])
            if run.entry.name not in names:
                names.append(run.entry.name)
    for path, names in sorted(hit.items()):
        yield Finding(ID, CODE, SEVERITY, path, 1, 1,
                      f"more than {facts.profile.max_paths} paths for {len(names)} entries; merged branches left "
                      "a dispatched script path unknown, so findings for this launcher may be incomplete",
                      (), tuple(names), key=path)
