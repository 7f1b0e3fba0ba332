"""ignored-variant: an entry has its own variant script, but the launcher runs another.

What it does:
    For every config entry with a variant (``spec-decoding: mtp``, a framework, an
    ``agentic-coding`` scenario) it resolves the script the entry's launcher really
    dispatches. When a script made for that variant exists (``X_mtp.sh`` next to
    ``X.sh``, ``X_vllm.sh``, ``agentic/X.sh``) but the launcher builds the path of the
    base script, it reports the launcher line that builds the path.

Why is this bad?
    The benchmark runs and publishes a number, but for the wrong configuration: an MTP
    entry silently measures plain decoding, with the base script's flags and image. The
    variant script is dead code. Nothing fails, so nobody notices.

Example:
    ```sh
    # file: runners/launch_mi300x-amds.sh
    #!/usr/bin/env bash
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    if [[ "$FRAMEWORK" == "sglang" ]]; then
        bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x${SPEC_SUFFIX}.sh"
    else
        # the vllm branch forgot the suffix: kimik2.5-int4-mi300x-vllm-mtp runs the plain script
        bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh"
    fi
    ```
    The ``_mtp`` script that no entry reaches any more is reported as well, by
    dead-script.

Fix:
    Build the variant into the path, as the sibling launcher that already handles it
    does: ``SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')``
    and ``..._mi300x${SPEC_SUFFIX}.sh``. The proposed patch is checked by re-evaluating
    the patched launcher for every affected entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules._variants import entries_text, misses, propose_fix

ID = "ignored-variant"
CODE = "BB103"
SEVERITY = Severity.ERROR
SUMMARY = "an entry's variant script exists but the launcher dispatches another script"
# The documented example also leaves the _mtp script unused (see the docstring).
EXAMPLE_ALSO = ("dead-script",)


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for miss in misses(facts):
        names = sorted(miss.pairs)
        runs_script, should = miss.pairs[names[0]]
        variant = miss.names
        fix, sibling = propose_fix(facts, miss)
        env = ", ".join(sorted({v.env for v in miss.variants if v.env}))
        launcher = miss.launcher.rsplit("/", 1)[-1]
        why = f"this line builds the path without {env or 'the variant'}"
        if len(names) == 1:
            message = (f"{launcher} dispatches {names[0]} to {runs_script}, not to the {variant} script {should}: "
                       f"{why}")
        else:
            message = (f"{launcher} dispatches {len(names)} {variant} entries to their base scripts "
                       f"({entries_text(names)}), e.g. {runs_script} instead of {should}: {why}")
        if sibling:
            message += f" ({sibling.rsplit('/', 1)[-1]} handles it)"
        scripts = sorted({s for _, s in miss.pairs.values()})
        related = [Related(s, 1, f"the {variant} script, never run by this launcher") for s in scripts]
        for name in names:
            run = next(r for r, _ in miss.runs if r.entry.name == name)
            related.append(Related(run.entry.path, run.entry.pos.line, f"{name} ({variant})"))
        if sibling:
            related.append(Related(sibling, 1, f"a launcher that dispatches {variant} scripts"))
        yield Finding(ID, CODE, SEVERITY, miss.launcher, miss.built_at.line, miss.built_at.col, message,
                      tuple(related), tuple(names), fix,
                      key=f"{variant}|{','.join(sorted({should for _, should in miss.pairs.values()}))}")
