"""dispatch-bound: the launcher branches more than the analysis follows.

What it does:
    The evaluator follows every branch it cannot decide, up to a bound
    (``max-paths`` in the profile). When a launcher needs more, branches are merged
    (their differing variables become unknown) and this note says where, so that missing
    findings for that launcher are not mistaken for a clean bill.

Why is this bad?
    It is not a bug in the launcher; it means the results for it are less precise.

Example:
    ```
    for f in a b c d e f; do [[ -e $f ]] && ARGS+=" $f"; done   # 2^6 paths
    ```

Fix:
    Raise ``max-paths`` in ``.benchbot.yml`` or simplify the launcher.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Finding, Severity
from bot.repo.facts import Facts

ID = "dispatch-bound"
CODE = "BB901"
SEVERITY = Severity.INFO
SUMMARY = "the launcher has more paths than the analysis follows; results are approximate"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    hit: dict[str, list[str]] = {}
    for run in facts.runs:
        if run.bound_hit:
            names = hit.setdefault(run.real, [])
            if run.entry.name not in names:
                names.append(run.entry.name)
    for path, names in sorted(hit.items()):
        yield Finding(ID, CODE, SEVERITY, path, 1, 1,
                      f"more than {facts.profile.max_paths} paths for {len(names)} entries; branches were "
                      "merged, so findings for this launcher may be incomplete", (), tuple(names), key=path)
