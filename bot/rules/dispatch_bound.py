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
    ```
    if [ -n "$(probe 1)" ]; then A=1; else A=2; fi   # 8 of these: 2^8 paths
    bash "benchmarks/${A}.sh"
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
