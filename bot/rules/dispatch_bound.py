"""dispatch-bound: the launcher branches more than the analysis follows.

What it does:
    The evaluator follows every branch it cannot decide, up to a bound
    (``max-paths`` in the profile). When a launcher needs more, branches are merged
    (their differing variables become unknown). Where that leaves the path of a
    dispatched script unknown, this note says so, so that missing findings for that
    launcher are not mistaken for a clean bill.

    Every evaluation also has a budget: steps (statements and words executed,
    ``max-steps``), a wall-clock deadline (``max-seconds``), bytes per value
    (``max-value-bytes``), a depth for functions, ``source``, ``eval`` and ``bash -c``,
    64-bit arithmetic and bounded ``printf`` widths. A script that runs one out (a
    function calling itself six times, ``X=$X$X`` doubling, ``$((9**9**9))``) is
    reported here with the file, line and construct; where the steps or the time ran
    out, what its entries run is unknown (and ``/bench`` treats them as unknown).

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
    Raise ``max-paths`` (or ``max-steps``, ``max-seconds``, ``max-value-bytes``, within
    their hard maxima) in ``.benchbot.yml``, or simplify the launcher.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.settings import Config
from bot.shell.evaluator.budget import BudgetHit
from bot.shell.ir.values import Unk

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
    yield from _budget_findings(facts)


def _kind(h: BudgetHit) -> str:
    """The budget without its figure: "step budget", "deadline", "value over 64 KB"."""
    return h.what.split(" (")[0]


def _budget_findings(facts: Facts) -> Iterator[Finding]:
    found: dict[tuple[str, str], tuple[BudgetHit, list[str], str]] = {}
    for run in facts.runs:
        for h in run.budget_hits:
            _, names, _ = found.setdefault((h.path, _kind(h)), (h, [], run.real))
            if run.entry.name not in names:
                names.append(run.entry.name)
    for script, hits in sorted(facts.scan_budget_hits.items()):
        for h in hits:
            found.setdefault((h.path, _kind(h)), (h, [], script))
    for (path, kind), (h, names, top) in sorted(found.items()):
        where = h.text()
        via = "" if top == h.path else f" (evaluating {top})"
        if h.fatal:
            tail = (f"; what {len(names)} entr{'y runs' if len(names) == 1 else 'ies run'} is unknown" if names
                    else "; the scripts it references are unknown")
            msg = f"evaluation stopped: {where}{via}{tail}"
        else:
            msg = f"{where}{via}: that value or call is unknown, so findings here may be incomplete"
        yield Finding(ID, CODE, SEVERITY, path, max(h.line, 1), 1, msg, (), tuple(names), key=f"{path}:{kind}")
