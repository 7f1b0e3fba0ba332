"""spec-not-enabled: a point asks for speculative decoding, but the server does not speculate.

What it does:
    For every search-space point whose ``spec-decoding`` is not ``none`` (InferenceX's
    ``mtp`` covers native MTP heads and EAGLE drafts alike), reads the server command the
    dispatched script starts, as ``serve`` reads it (``bot.launches.specview``): vLLM
    ``--speculative-config`` (any spelling), SGLang ``--speculative-algorithm`` and its
    companions, TRT-LLM ``speculative_config`` in the ``--extra_llm_api_options`` file, ATOM
    ``--method``. A server with none of them is reported: at the line where the settings
    sit unused when the script has them (a variable assigned and never expanded, an array
    that is not the one run, a commented-out flag), else at the server command. When only
    some points lose speculation (the script switches it off by concurrency, ``TP``,
    ``DP_ATTENTION``...), the finding names those points and the switch; a script that
    turns it off in eval-only runs (``EVAL_ONLY=true``) is reported too (the accuracy eval
    then measures plain decoding). Multinode recipes
    count when no worker speculates. An entry whose launcher runs its base script instead of
    the ``_mtp`` one is ignored-variant's finding, not this one.

Why is this bad?
    The result is published as a speculative-decoding number while the server ran plain
    decoding: the MTP row of the dashboard compares a configuration that never ran.

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SPEC_CONFIG='{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}'
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Pass the settings to the server (``--speculative-config "$SPEC_CONFIG"``). Where the
    script turns speculation off on purpose for some points, split the search space: those
    points belong in rows labelled ``spec-decoding: none`` that run a script without
    speculation (an ``_mtp`` script that refuses ``SPEC_DECODING`` other than ``mtp`` cannot
    take them).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site, eval_site
from bot.repo.facts import Facts
from bot.rules import _spec
from bot.serve import specswitch
from bot.settings import Config

ID = "spec-not-enabled"
CODE = "BB201"
SEVERITY = Severity.ERROR
SUMMARY = ("a point asks for speculative decoding (`spec-decoding: mtp`), but the server its script starts has no "
           "speculative settings")

# A speculative flag or config key in a line of shell (commented out or not)
_FLAG = re.compile(r"--speculative[-_]|--spec-(?:method|model|tokens)\b|\bspeculative_config\b|(?<!\S)-sc(?!\S)"
                   r"|--method\s+\S*mtp|--num-speculative-tokens")
_ASSIGN = re.compile(r"^\s*(?:export\s+|local\s+|declare\s+\S*\s*)?([A-Za-z_][A-Za-z0-9_]*)\+?=")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    by_entry: dict[tuple[str, str, str], list[Site]] = {}  # (entry, script or recipe, launcher) -> sites
    for site in _spec.judged(facts):
        if site.wanted == "none" or not site.servers:
            continue
        by_entry.setdefault((site.entry.name, site.script or site.recipe or "", site.launcher), []).append(site)
    # an entry with several launchers running the same script: one finding (the script is the cause)
    seen: set[tuple[str, str]] = set()
    off_everywhere: dict[str, list[list[Site]]] = {}  # script -> per-entry site lists, all without spec
    for (name, where, _), group in by_entry.items():
        off = [s for s in group if not any(cmd.spec is not None for _, cmd in s.servers)]
        if not off or (name, where) in seen:
            continue
        seen.add((name, where))
        if len(off) == len(group) and not any(s.switched for s in group):
            off_everywhere.setdefault(where, []).append(off)
        else:
            yield _per_point(facts, off, group)
    for where, groups in off_everywhere.items():
        yield _whole(facts, where, groups)
    yield from _eval_only(facts, by_entry)


def _eval_only(facts: Facts, by_entry: dict[tuple[str, str, str], list[Site]]) -> Iterator[Finding]:
    """Scripts that turn speculation off in eval-only runs (``EVAL_ONLY=true``): the accuracy
    eval of the entry measures plain decoding. One finding per script."""
    seen: set[str] = set()
    for group in by_entry.values():
        for site in group:
            if site.script is None or site.script in seen or site.server is None or site.server.spec is None:
                continue
            seen.add(site.script)  # one eval-only run per script: the switch is the script's
            ev = eval_site(facts, site)
            if ev is None or ev.server is None or ev.server.spec is not None:
                continue
            lines = _switch_lines(facts, site, ("EVAL_ONLY",))
            entries = tuple(dict.fromkeys(s.entry.name for g in by_entry.values() for s in g
                                          if s.script == site.script))
            msg = (f"{site.entry.name}: spec-decoding: {site.wanted}, but in eval-only runs (EVAL_ONLY=true) "
                   f"{site.script} starts the server without speculative settings: the accuracy eval measures "
                   "plain decoding, not the configuration whose throughput is published")
            yield Finding(ID, CODE, SEVERITY, site.script, lines[0] if lines else 1, 1, msg,
                          (Related(*_spec.point_at(site.entry, site.point)[:2], f"{site.entry.name}: "
                                   f"spec-decoding: {site.wanted}"),), entries, key=f"{site.script}|eval-only")


def _whole(facts: Facts, where: str, groups: list[list[Site]]) -> Finding:
    """Every point of these entries runs ``where`` without speculation: the script is the cause."""
    site = groups[0][0]
    entries = tuple(dict.fromkeys(g[0].entry.name for g in groups))
    names = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more entries"
    cmd = site.servers[0][1]
    path, line, unused = _unused_settings(facts, site)
    label = f"spec-decoding: {site.wanted}"
    if site.script is None:
        roles = ", ".join(r for r, _ in site.servers)
        msg = (f"{names}: {label}, but no worker of recipe {where} ({roles}) has speculative settings: the "
               "result is published as speculative decoding while the servers decode plainly")
    elif unused:
        msg = (f"{names}: {label}, but the speculative settings at {posixpath.basename(path)}:{line} never reach "
               f"the server ({unused}): {site.script} starts {cmd.engine} without them, so the result is published "
               "as speculative decoding while the server decodes plainly")
    else:
        msg = (f"{names}: {label}, but {where} starts {cmd.engine} with no speculative settings: the result is "
               "published as speculative decoding while the server decodes plainly")
    related = [Related(*_spec.point_at(g[0].entry, g[0].point)[:2], f"{g[0].entry.name}: {label}") for g in groups]
    if unused:
        start = _spec.command_at(cmd, site)
        related.insert(0, Related(start[0], start[1], "the server command, without them"))
    return Finding(ID, CODE, SEVERITY, path, line, 1, msg, tuple(related), entries, key=f"{where}")


def _per_point(facts: Facts, off: list[Site], group: list[Site]) -> Finding:
    """Some points of an entry run without speculation (the script switches it off)."""
    site = off[0]
    entry = site.entry
    switched = tuple(dict.fromkeys(v for s in off for v in s.switched))
    lines = _switch_lines(facts, site, switched)
    shown = _spec.sites_text(off)
    on = [s for s in group if s not in off]
    label = f"spec-decoding: {site.wanted}"
    how = f"; the script switches speculation on {', '.join('$' + v for v in switched)}" if switched else ""
    msg = (f"{entry.name}: {label}, but the server {site.script or site.recipe} starts does not speculate at "
           f"[{shown}]{how}: those points are published as speculative decoding while the server decodes plainly")
    if on:
        msg += f" (it speculates at [{_spec.sites_text(on, 2)}])"
    if lines and site.script:
        path, line = site.script, lines[0]
    else:
        path, line, _ = _spec.point_at(entry, site.point)
    related = [Related(*_spec.point_at(entry, p)[:2], f"{label} ({_spec.point_text(p, s.concs)})")
               for s in off for p in s.points]
    return Finding(ID, CODE, SEVERITY, path, line, 1, msg, tuple(related[:8]), (entry.name,),
                   key=f"{entry.name}|{site.script or site.recipe}|points")


def _switch_lines(facts: Facts, site: Site, switched: tuple[str, ...]) -> list[int]:
    parsed = facts.script(site.script) if site.script else None
    if parsed is None:
        return []
    found = specswitch.switches(parsed)
    return sorted({line for v in switched for line in found.get(v, ())})


def _unused_settings(facts: Facts, site: Site) -> tuple[str, int, str]:
    """Where speculative settings sit in the script without reaching the server: (path, line,
    how), ``how`` empty when the script has none (then the server command's line)."""
    cmd = site.servers[0][1]
    if site.script is None:
        path, line, _ = _spec.point_at(site.entry, site.point)
        return path, line, ""
    text = facts.tree.text(site.script) or ""
    lines = text.splitlines()
    for i, raw in enumerate(lines, 1):
        stripped = raw.lstrip()
        if stripped.startswith("#") and _FLAG.search(stripped):
            return site.script, i, "commented out"
    for i, raw in enumerate(lines, 1):
        if raw.lstrip().startswith("#"):
            continue
        m = _ASSIGN.match(raw)
        if m and (_FLAG.search(raw) or specswitch.SPEC_TEXT.search(raw)):
            name = m.group(1)
            return site.script, i, f"{name} is set here and never expanded in the server command"
    start = _spec.command_at(cmd, site)
    return start[0], start[1], ""
