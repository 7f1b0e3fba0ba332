"""spec-unexpected: a point says ``spec-decoding: none``, but the server speculates.

What it does:
    For every search-space point whose ``spec-decoding`` is ``none`` (or not given) and
    whose dispatched script says anything speculative, reads the server command the script
    starts (``bot.launches.specview``, as ``serve`` reads it). A server with speculative
    settings (vLLM ``--speculative-config``, SGLang ``--speculative-algorithm``, TRT-LLM
    ``speculative_config``, ATOM ``--method``) is reported at the line that sets them, with
    the method and token count. Multinode recipes count when a worker speculates. When only
    some points speculate (a switch on the concurrency or ``TP``), those are named.

Why is this bad?
    The result is published as a plain-decoding number while the server drafted tokens:
    it lands next to the other vendors' non-speculative results and beats them unfairly.

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh
    #!/usr/bin/env bash
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SPEC='{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}'
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --speculative-config "$SPEC" \\
        > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Drop the speculative settings from the base script (they belong in its ``_mtp``
    variant), or label the points ``spec-decoding: mtp``.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site
from bot.repo.facts import Facts
from bot.rules import _spec
from bot.serve.model import Command
from bot.settings import Config

ID = "spec-unexpected"
CODE = "BB202"
SEVERITY = Severity.ERROR
SUMMARY = "a point says `spec-decoding: none`, but the server its script starts speculates"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    by_where: dict[str, list[Site]] = {}  # script or recipe -> the none sites that speculate
    all_none: dict[tuple[str, str], list[Site]] = {}  # (entry, script) -> its none sites
    for site in _spec.judged(facts):
        if site.wanted != "none" or not site.servers:
            continue
        where = site.script or site.recipe or ""
        all_none.setdefault((site.entry.name, where), []).append(site)
        if any(cmd.spec is not None for _, cmd in site.servers):
            by_where.setdefault(where, []).append(site)
    for where, group in by_where.items():
        yield _finding(where, group, all_none)


def _spec_text(cmd: Command) -> str:
    spec = cmd.spec or {}
    parts = [str(spec.get("method") or spec.get("kind") or "speculative decoding")]
    if spec.get("num_speculative_tokens") is not None:
        parts.append(f"{spec['num_speculative_tokens']} tokens")
    if spec.get("draft_model"):
        parts.append(f"draft {spec['draft_model']}")
    return ", ".join(parts)


def _finding(where: str, group: list[Site], all_none: dict[tuple[str, str], list[Site]]) -> Finding:
    site = group[0]
    role, cmd = next((r, c) for r, c in site.servers if c.spec is not None)
    entries = tuple(dict.fromkeys(s.entry.name for s in group))
    names = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more entries"
    partial = [s for s in group if len(all_none[(s.entry.name, where)]) > sum(1 for x in group if x.entry is s.entry)]
    at = _spec.spec_at(cmd) or _spec.command_at(cmd, site)
    what = f"recipe {where} ({role})" if site.script is None else where
    points = f" at {_spec.sites_text(group)}" if partial or any(s.switched for s in group) else ""
    msg = (f"{names}: spec-decoding: none{points}, but the server {what} starts speculates ({_spec_text(cmd)}): the "
           "result is published as plain decoding while the server drafts tokens")
    related = [Related(*_spec.point_at(s.entry, s.point)[:2], f"{s.entry.name}: spec-decoding: none")
               for s in group[:8]]
    return Finding(ID, CODE, SEVERITY, at[0], at[1], 1, msg, tuple(related), entries, key=where)
