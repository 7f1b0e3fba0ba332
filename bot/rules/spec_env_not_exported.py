"""spec-env-not-exported: a variable the server reads for speculation is set without export.

What it does:
    For every point that asks for speculative decoding or whose server speculates, looks at
    the variables the benchmark script assigns without ``export`` before it starts the
    server (``SGLANG_ENABLE_SPEC_V2=1`` on a line of its own), as ``serve`` reads the
    script. A variable the server's engine reads for speculation (the shipped table
    ``bot/serve/tables/spec_env.json``, with the engine source of each: SGLang
    ``SGLANG_ENABLE_SPEC_V2``, ``SGLANG_SIMULATE_ACC_LEN`` / ``_METHOD`` / ``_TOKEN_MODE``,
    TRT-LLM ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``...) that reaches the server no
    other way (not exported before the server starts, not an inline ``X=1 cmd`` prefix, not
    handed on by ``docker run -e`` / ``env X=...`` / ``mpirun -x`` on the server command)
    is reported at the assignment, once per script and variable, naming the entries and
    points that run it. ``SGLANG_ENABLE_SPEC_V2`` has no effect from SGLang 0.5.14 on: the
    message says so, and which of the entries' images are that recent.

Why is this bad?
    A plain assignment is a shell variable, not part of the environment of the processes
    the script starts: the server never sees it. The script reads as if it turned on the
    overlap speculative worker or pinned a synthetic acceptance length, and the published
    number was measured without either.

Example:
    ```yaml
    # file: configs/amd-master.yaml
    kimik2.5-int4-mi300x-vllm:
      image: vllm/vllm-openai-rocm:v0.14.1
      model: moonshotai/Kimi-K2.5
      model-prefix: kimik2.5
      runner: mi300x
      precision: int4
      framework: vllm
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64 }

    kimik2.5-int4-mi300x-vllm-mtp:
      image: vllm/vllm-openai-rocm:v0.14.1
      model: moonshotai/Kimi-K2.5
      model-prefix: kimik2.5
      runner: mi300x
      precision: int4
      framework: vllm
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64, spec-decoding: mtp }

    dsr1-fp8-mi300x-sglang:
      image: lmsysorg/sglang:v0.5.9-rocm700-mi30x
      model: deepseek-ai/DeepSeek-R1-0528
      model-prefix: dsr1
      runner: mi300x
      precision: fp8
      framework: sglang
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64 }

    dsr1-fp8-mi300x-sglang-mtp:
      image: lmsysorg/sglang:v0.5.9-rocm700-mi30x
      model: deepseek-ai/DeepSeek-R1-0528
      model-prefix: dsr1
      runner: mi300x
      precision: fp8
      framework: sglang
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64, spec-decoding: mtp }
    ```

    ```bash
    # file: benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh
    #!/usr/bin/env bash
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port 8888 > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

    ```bash
    # file: benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x_mtp.sh
    #!/usr/bin/env bash
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SGLANG_ENABLE_SPEC_V2=1
    python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port 8888 \\
        --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 \\
        --speculative-num-draft-tokens 2 > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    ``export`` the variable (``export SGLANG_ENABLE_SPEC_V2=1``) or put it in front of the
    server command (``SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server ...``). Drop
    ``SGLANG_ENABLE_SPEC_V2`` for images with SGLang 0.5.14 or later, where it does nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site
from bot.repo.facts import Facts
from bot.rules import _spec
from bot.serve.model import Command
from bot.serve.specenv import SpecVar, spec_var, text_of, version_of
from bot.settings import Config

ID = "spec-env-not-exported"
CODE = "BB205"
SEVERITY = Severity.WARNING
SUMMARY = "a variable the server reads for speculation is set without export, so the server never sees it"

_ENGINES = {"sglang": "SGLang", "vllm": "vLLM", "trtllm": "TRT-LLM", "atom": "ATOM"}
# Wrapper options that hand a variable to the command they run (``docker run -e X``,
# ``--env X=1``, ``mpirun -x X``, ``srun --export=ALL,X``, ``env X=1 cmd``): {} is the name.
_HANDED = (r"(?:^|\s)(?:-e|--env|-x)[\s=]+[\"']?{}\b", r"--export=\S*\b{}\b",
           r"(?:^|\s)env\s[^|;&]*?(?<![\w-])[\"']?{}=")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    # (assignment "path:line", name) -> the sites whose server it never reaches
    groups: dict[tuple[str, str], list[tuple[Site, SpecVar, str]]] = {}
    server_at: dict[tuple[str, str], tuple[str, int]] = {}
    for site in _spec.judged(facts):
        cmd = site.server
        if cmd is None or not site.unexported or (site.wanted == "none" and cmd.spec is None):
            continue
        lines: tuple[str, int, str] | None = None
        for name, (value, loc) in site.unexported.items():
            var = spec_var(cmd.engine, name)
            if var is None or name in cmd.env:
                continue
            lines = lines or _command_lines(facts, cmd, site)
            if _handed(lines[2], name):
                continue
            groups.setdefault((loc, name), []).append((site, var, value))
            server_at.setdefault((loc, name), lines[:2])
    for (loc, name), found in groups.items():
        at = _spec.split_src(loc)
        if at is not None:
            yield _finding(at, name, found, server_at[(loc, name)])


def _command_lines(facts: Facts, cmd: Command, site: Site) -> tuple[str, int, str]:
    """(path, first line, text) of the server command: the line of its model argument (a
    TRT-LLM YAML key may come from an earlier here-document) and the lines it continues over
    with a trailing backslash."""
    path, line = _spec.split_src(cmd.sources.get("model")) or _spec.command_at(cmd, site)
    parsed = facts.script(path)
    lines = parsed.source.decode("utf-8", "replace").splitlines() if parsed is not None else []
    if not 0 < line <= len(lines):
        return path, line, ""
    start = end = line - 1
    while start > 0 and lines[start - 1].rstrip().endswith("\\"):
        start -= 1
    while end + 1 < len(lines) and lines[end].rstrip().endswith("\\"):
        end += 1
    return path, start + 1, " ".join(lines[start:end + 1])


def _handed(text: str, name: str) -> bool:
    """Whether a command line hands ``name`` on through a wrapper (``docker run -e NAME``)."""
    return any(re.search(p.format(re.escape(name)), text) for p in _HANDED)


def _finding(at: tuple[str, int], name: str, found: list[tuple[Site, SpecVar, str]],
             server_at: tuple[str, int]) -> Finding:
    site, var, value = found[0]
    cmd = site.server
    assert cmd is not None
    sites = [s for s, _, _ in found]
    entries = tuple(dict.fromkeys(s.entry.name for s in sites))
    who = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more entries"
    who += f" ({_spec.sites_text(sites, 3)})"
    engine = _ENGINES.get(cmd.engine, cmd.engine)
    where = f"line {server_at[1]}" if server_at[0] == at[0] else f"{server_at[0]}:{server_at[1]}"
    msg = (f"{name}={value} is set without export: the {engine} server started at {where} never sees it"
           f"{_consequence(var, sites, who)}")
    related = [Related(server_at[0], server_at[1], f"the {engine} server {name} never reaches")]
    related += [Related(*_spec.point_at(s.entry, s.point)[:2], f"{s.entry.name}: runs this script")
                for s in _first_per_entry(sites)[:6]]
    return Finding(ID, CODE, SEVERITY, at[0], at[1], 1, msg, tuple(related), entries, key=f"{at[0]}|{name}")


def _consequence(var: SpecVar, sites: list[Site], who: str) -> str:
    """What the run does without it; for a variable that became a no-op, whether the images are that recent."""
    engine = _ENGINES.get(var.engine, var.engine)
    if var.noop_from is None:
        return f", so {who} {var.missing}"
    since = text_of(var.noop_from)
    versions = {version_of(str(s.entry.fields.get("image") or ""), var.engine) for s in sites}
    known = {v for v in versions if v is not None}
    if known and None not in versions and all(v >= var.noop_from for v in known):
        shown = ", ".join(sorted(text_of(v) for v in known))
        return (f", and with the image of {who} ({engine} {shown}) it does nothing anyway (a no-op from {since} "
                "on): remove the line")
    older = sorted(text_of(v) for v in known if v < var.noop_from)
    which = f"{engine} {', '.join(older)} predates {since}, from which it is a no-op" if older else \
        f"it is a no-op from {engine} {since} on"
    return f", so {who} {var.missing} ({which})"


def _first_per_entry(sites: list[Site]) -> list[Site]:
    seen: dict[str, Site] = {}
    for s in sites:
        seen.setdefault(s.entry.name, s)
    return list(seen.values())
