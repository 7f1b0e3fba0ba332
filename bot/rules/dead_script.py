"""dead-script: a benchmark script that nothing runs.

What it does:
    Collects every script that some (config entry, search-space point, launcher)
    dispatches, every script sourced or run by another script, and every script named in
    a workflow. A benchmark script in none of these sets is reported, with the reason when
    it is known (e.g. the launcher ignores the variant it was written for). Scripts in
    ``deprecated/`` folders are not considered (``scripts-exclude`` in the profile).
    A script that is dead because of another finding is listed with that cause instead of
    on its own: a launcher line that ignores its variant (ignored-variant), an entry that
    looks for it in another folder (missing-script). A script whose name is made of the
    name parts of an entry that could not be read (its config did not load whole:
    config-syntax) is not reported: that entry may run it.

Why is this bad?
    A new script that no job runs usually means the pull request did not do what its
    author thinks: the results published for its entry come from another script.

Example:
    ```sh
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_eagle.sh
    #!/usr/bin/env bash
    # added by a PR, but no entry has a variant that ends in _eagle
    vllm serve "$MODEL" --tensor-parallel-size "$TP"
    ```

Fix:
    Make the launcher dispatch it (see ignored-variant), add the config entry that
    should run it, or delete it (or move it to ``deprecated/``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules._variants import entries_text, misses
from bot.settings import Config
from bot.shell.ir.values import known, leading, to_regex

ID = "dead-script"
CODE = "BB102"
SEVERITY = Severity.WARNING
SUMMARY = "a benchmark script that no entry, script or workflow runs"


def subject(script: str) -> str:
    """The fingerprint key of a dead script (its path): shared with the rules whose
    findings carry it as a consequence."""
    return script


@dataclass(frozen=True)
class Dead:
    """A benchmark script nothing runs, and what is known of why."""

    script: str
    because: str = ""  # "variant": a launcher ignores its variant; "moved": an entry looks for it elsewhere
    entries: tuple[str, ...] = ()  # entries that would run it
    launcher: str = ""
    variant: str = ""
    line: int = 0  # the launcher line that builds the path without the variant
    wanted_by: str = ""  # the entry that looks for a script of this name at ...
    wanted_at: str = ""  # ... this path


_PARTS = re.compile(r"[-_.]+")


def dead_scripts(facts: Facts) -> dict[str, Dead]:
    """Every benchmark script no entry, script or workflow runs (memoized on the facts)."""
    memo = facts.memo
    if "dead-scripts" in memo:
        return memo["dead-scripts"]  # type: ignore[no-any-return]
    out: dict[str, Dead] = {}
    memo["dead-scripts"] = out
    if not facts.runs:
        return out  # no entry could be resolved (no configs, or another layout): nothing to compare with
    reached: set[str] = set()
    patterns = []
    for run in facts.runs:
        for d in run.dispatches:
            k = known(d.target)
            if k is not None:
                reached.add(k)
            elif "/" in leading(d.target):
                patterns.append(to_regex(d.target))
    why: dict[str, tuple[list[str], str, str, int]] = {}
    for miss in misses(facts):
        for name, (_, should) in miss.pairs.items():
            entry = why.setdefault(should, ([], miss.launcher, miss.names, miss.built_at.line))
            if name not in entry[0]:
                entry[0].append(name)
    unresolved = _unresolved_prefixes(facts)
    # scripts an entry looks for in another folder (moved or misplaced): name -> (entry, path)
    wanted: dict[str, tuple[str, str]] = {}
    for run in facts.runs:
        for d in run.dispatches:
            k = known(d.target)
            if k and k.endswith(".sh") and not facts.tree.is_file(k):
                wanted.setdefault(posixpath.basename(k), (run.entry.name, k))
    broken_tokens = []
    # a launcher whose evaluation a budget stopped for some entry is as unknowable as a broken one
    stopped = sorted({run.launcher for run in facts.runs if any(h.fatal for h in run.budget_hits)})
    for launcher in [*facts.broken_launchers, *stopped]:
        prefix = facts.profile.prefix_of_launcher(launcher)
        if prefix:
            broken_tokens.append(prefix.split("-", 1)[0])
    # entries of a master config that did not load whole and were not read (bot.repo.load.recover):
    # a script whose name is made of an unread entry's name parts may be that entry's
    unread = [set(_PARTS.split(b.key.lower())) for cfg in facts.configs for b in cfg.broken if b.key]
    for script in facts.scripts:
        if script in reached or script in facts.referenced:
            continue
        stem = posixpath.basename(script).rsplit(".", 1)[0].lower()
        if any(set(_PARTS.split(stem)) <= parts for parts in unread):
            continue  # it may be the script of an entry that was not read: unknowable
        if any(p.match(script) for p in patterns) or any(p.match(script) for p, _, _ in facts.referenced_patterns):
            continue
        base = posixpath.basename(script)
        if script in facts.workflow_text or base in facts.workflow_text:
            continue
        if any(tok and tok in base for tok in broken_tokens):
            continue  # a launcher that could run it does not parse, or was stopped: unknowable
        if any(base.startswith(head) and gpu in base for head, gpu in unresolved):
            continue  # its entry's runner label or launcher is missing: reported there
        if script in why:
            names, launcher, variant, line = why[script]
            out[script] = Dead(script, "variant", tuple(sorted(names)), launcher, variant, line)
        elif base in wanted:
            name, path = wanted[base]
            out[script] = Dead(script, "moved", wanted_by=name, wanted_at=path)
        else:
            out[script] = Dead(script)
    return out


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for script, dead in dead_scripts(facts).items():
        related: list[Related] = []
        if dead.because == "variant":
            message = (f"no entry runs this script: it would run for {entries_text(list(dead.entries))} if "
                       f"{dead.launcher.rsplit('/', 1)[-1]} dispatched {dead.variant} scripts")
            related.append(Related(dead.launcher, dead.line, "the launcher line that builds the script path "
                                                             f"without the {dead.variant} variant"))
        elif dead.because == "moved":
            message = (f"no entry runs this script, but {dead.wanted_by} looks for a script of this name at "
                       f"{dead.wanted_at} (see missing-script): is it in the wrong folder?")
            related.append(Related(dead.wanted_at, 1, f"where {dead.wanted_by} looks for it"))
        else:
            message = "no config entry, script or workflow runs this script"
        yield Finding(ID, CODE, SEVERITY, script, 1, 1, message, tuple(related), dead.entries, key=subject(script))


def _unresolved_prefixes(facts: Facts) -> list[tuple[str, str]]:
    """(``<model-prefix>_<precision>_``, gpu) of entries no launcher could run a script for
    (unknown label, no launcher, or a launcher that rejects them): reported by those rules."""
    resolved = {run.entry.name for run in facts.runs if not run.exits_early}
    out = []
    for e in facts.entries:
        if e.name in resolved:
            continue
        prefix, precision, label = e.fields.get("model-prefix"), e.fields.get("precision"), e.runner
        if prefix is None or precision is None or not label:
            continue
        gpu = label.split(":", 1)[-1].split("-", 1)[0]
        out.append((f"{prefix}_{precision}_", gpu))
    return out
