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
    The ``_mtp`` script that no entry reaches any more is this finding's consequence
    (listed with it, not reported again by dead-script), and so is an entry sent to a
    base script that does not exist either.

Fix:
    Build the variant into the path, as the sibling launcher that already handles it
    does: ``SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')``
    and ``..._mi300x${SPEC_SUFFIX}.sh``. The proposed patch is checked by re-evaluating
    the patched launcher for every affected entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules import dead_script, missing_script
from bot.rules._disagree import disagreements
from bot.rules._fixes import propose_fix
from bot.rules._variants import Miss, entries_text, misses
from bot.settings import Config

ID = "ignored-variant"
CODE = "BB103"
SEVERITY = Severity.ERROR
SUMMARY = "an entry's variant script exists but the launcher dispatches another script"


def subject(facts: Facts, miss: Miss) -> str:
    """launcher | variant | the expansions of the path expression that ignores the variant."""
    text = facts.tree.text(miss.launcher) or ""
    lines = text.splitlines()
    construct = ""
    if 0 < miss.built_at.line <= len(lines):
        line = lines[miss.built_at.line - 1]
        word = line[max(miss.built_at.col - 1, 0):]
        m = re.search(r"\.sh\b", word)
        # the expansions that build the path, not its literal folders: a folder move that
        # rewrites the launcher line keeps the cause
        construct = " ".join(_EXPANSION.findall(word[: m.end()] if m else word))
    return f"{miss.launcher}|{miss.names}|{construct.replace('|', ' ').replace(',', ' ')}"


_EXPANSION = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    dead = dead_script.dead_scripts(facts)
    # entries whose label's node families disagree are inconsistent-dispatch's (one cause)
    taken = {d.key: set(d.entries) for d in disagreements(facts)}
    for miss in misses(facts):
        theirs = taken.get((miss.launcher, miss.built_at.line), set())
        if theirs:
            miss = replace(miss, pairs={k: v for k, v in miss.pairs.items() if k not in theirs},
                           runs=[(r, c) for r, c in miss.runs if r.entry.name not in theirs],
                           missing=miss.missing - theirs)
            if not miss.pairs:
                continue
        names = sorted(miss.pairs)
        runs_script, should = miss.pairs[names[0]]
        variant = miss.names
        fix, sibling = propose_fix(facts, miss)
        env = ", ".join(sorted({v.env for v in miss.variants if v.env}))
        launcher = miss.launcher.rsplit("/", 1)[-1]
        why = f"this line builds the path without {env or 'the variant'}"
        gone = " (which does not exist)" if names[0] in miss.missing else ""
        if len(names) == 1:
            message = (f"{launcher} dispatches {names[0]} to {runs_script}{gone}, not to the {variant} script "
                       f"{should}: {why}")
        else:
            message = (f"{launcher} dispatches {len(names)} {variant} entries to their base scripts "
                       f"({entries_text(names)}), e.g. {runs_script}{gone} instead of {should}: {why}")
        if sibling:
            message += f" ({sibling.path.rsplit('/', 1)[-1]} handles it)"
        scripts = sorted({s for _, s in miss.pairs.values()})
        dead_here = [s for s in scripts if s in dead]
        related = [Related(s, 1, f"consequence: the {variant} script is dead (this launcher never runs it)",
                           dead_script.ID, dead_script.subject(s)) for s in dead_here]
        related += [Related(s, 1, f"the {variant} script, never run by this launcher") for s in scripts
                    if s not in dead]
        stranded = sorted(miss.missing)
        for name in names:
            run = next(r for r, _ in miss.runs if r.entry.name == name)
            base = miss.pairs[name][0]
            if name in miss.missing:
                related.append(Related(run.entry.path, run.entry.pos.line,
                                       f"{name} ({variant}): runs {base}, which does not exist",
                                       missing_script.ID, missing_script.subject(name, base)))
            else:
                related.append(Related(run.entry.path, run.entry.pos.line, f"{name} ({variant})"))
        if sibling:
            copies = "the line the fix copies" if sibling.line == sibling.end else "the lines the fix copies"
            related.append(Related(sibling.path, sibling.line, copies))
        effects = []
        if dead_here:
            effects.append(f"{len(dead_here)} script{'s' if len(dead_here) > 1 else ''} left dead")
        if stranded:
            effects.append(f"{len(stranded)} {'entries' if len(stranded) > 1 else 'entry'} sent to a script "
                           "that does not exist")
        if effects:
            message += f"; consequences: {', '.join(effects)}"
        yield Finding(ID, CODE, SEVERITY, miss.launcher, miss.built_at.line, miss.built_at.col, message,
                      tuple(related), tuple(names), fix, key=subject(facts, miss))
