"""unused-config-field: a search-space field whose env var the dispatched script never reads.

What it does:
    For every single-node search-space item that sets a field with a default (``ep``,
    ``dp-attn``, ``pp``, ``dcp-size``, ``pcp-size``, ``kv-offloading``: the profile's
    ``{field|default}`` env templates) to a value other than the default, looks at the
    benchmark script the entry really dispatches and reports the field when that script
    never mentions the env var the workflow passes it as (``EP_SIZE``,
    ``DP_ATTENTION``, ...), or when the workflows never forward the field to the launcher's
    env at all (the main workflow path's step has no variable computed from
    ``matrix.config.<field>``: an input the template accepts and drops). Only the
    dispatched script counts: a shared library that reads the variable to label results
    does not make the server use it. Multinode
    entries are skipped (their scripts hand the env to job files that run elsewhere).

Why is this bad?
    The result is published under ``ep: 8`` while the server ran with whatever the
    script hard-codes: the number is labelled with a configuration that never ran.

Example:
    ```yaml
    # file: configs/amd-extra-master.yaml
    kimik2.5-int4-mi300x-vllm-ep8:
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
          - { tp: 8, ep: 8, conc-start: 4, conc-end: 64 }
    ```

Fix:
    Pass the variable to the server in the script (``--enable-expert-parallel`` when
    ``EP_SIZE`` > 1, ``--dp-size`` when ``DP_ATTENTION`` is true), or drop the field.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from bot.config import Config
from bot.findings import Finding, Related, Severity
from bot.repo import ghexpr as gx
from bot.repo.facts import Facts
from bot.repo.points import point_key
from bot.repo.wfcalls import LauncherCall
from bot.repo.yamlfile import YMap
from bot.shell.values import known

ID = "unused-config-field"
CODE = "BB108"
SEVERITY = Severity.WARNING
SUMMARY = "a search-space field whose env var the dispatched script never reads"

_TEMPLATE = re.compile(r"^\{([a-z][a-z0-9-]*)\|([^{}|]*)\}$")


def fields_with_defaults(templates: dict[str, str]) -> dict[str, tuple[str, str]]:
    """search-space field -> (env var, default) from ``VAR: {field|default}`` templates."""
    out: dict[str, tuple[str, str]] = {}
    for var, template in templates.items():
        m = _TEMPLATE.match(template)
        if m is not None:
            out.setdefault(m.group(1), (var, m.group(2)))
    return out


def _text(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def _is_default(value: Any, default: str) -> bool:
    text = _text(value)
    return text == default or (default == "" and text in ("none", "null"))


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    prof = facts.profile
    fields = fields_with_defaults({**prof.env_common, **prof.env_single})
    passed = facts.passed_vars(multinode=False)
    if passed is not None and facts.envs.main_call(False) is None:
        fields = {k: v for k, v in fields.items() if v[0] in passed}
    # Fields that choose the script (spec-decoding picks _mtp) are ignored-variant's business.
    for key in (*prof.point_keys, *(k for v in prof.variants for k in v.when)):
        fields.pop(key, None)
    reads: dict[tuple[str, str], bool] = {}
    fwd: dict[int, set[str]] = {}
    seen: set[tuple[str, int, int, str]] = set()
    for run in facts.runs:
        if run.entry.multinode or run.bound_hit:
            continue
        scripts = [s for s in (known(d.target) for d in run.dispatches) if s is not None and facts.tree.is_file(s)]
        if not scripts or len(scripts) != len(run.dispatches):
            continue  # a dispatch we cannot name might read it
        rep = point_key(prof, run.point)
        for point in run.entry.points:
            if point_key(prof, point) != rep:
                continue
            # the path this point runs through (an agentic point goes through the agentic job)
            main = facts.envs.call_for(run.entry, point, run.node, run.label)
            if main is not None and id(main) not in fwd:
                fwd[id(main)] = _forwarded(main)
            forwarded = fwd[id(main)] if main is not None else None
            for name, (var, default) in fields.items():
                if name not in point.fields or _is_default(point.fields[name], default):
                    continue
                dropped = forwarded is not None and name not in forwarded
                if not dropped and any(_reads(facts, s, var, reads) for s in scripts):
                    continue
                f = point.fields
                mark = f.key_pos.get(name, f.pos) if isinstance(f, YMap) else point.pos
                k = (run.entry.path, mark.line, mark.col, name)
                if k in seen:
                    continue
                seen.add(k)
                value = _text(point.fields[name])
                shown = ", ".join(scripts)
                if dropped and main is not None:
                    msg = (f"{name}: {value} never reaches the launcher: {main.name} sets no env var from "
                           f"the entry's {name} (the profile expects {var}), so {shown} runs without it: "
                           f"the result is labelled {name} {value}, but the job never saw it")
                    related: tuple[Related, ...] = (Related(main.path, main.line, "the launcher step; its env has no "
                                       f"${{{{ {'.'.join((*main.matrix, name))} }}}}"),)
                else:
                    msg = (f"{name}: {value} reaches the benchmark as {var}, but {shown} (what "
                           f"{posixpath.basename(run.launcher)} runs for {run.entry.name}) never reads {var}: "
                           f"the result is labelled {name} {value}, but the script decides on its own")
                    related = tuple(Related(s, 1, f"dispatched script; no ${var} in it") for s in scripts)
                other = ",".join(f"{k2}={_text(v)}" for k2, v in sorted(point.fields.items()) if k2 != name)
                yield Finding(ID, CODE, SEVERITY, run.entry.path, mark.line, mark.col, msg, related,
                              (run.entry.name,), key=f"{run.entry.name}|{point.scenario}|{name}={value}|{other}")


def _forwarded(call: LauncherCall) -> set[str]:
    """Entry fields some env var of the launcher step is computed from (``matrix.config.ep``)."""
    m = call.matrix
    out: set[str] = set()
    for var in call.env.values():
        for ref in gx.refs(var.value):
            if m and ref[: len(m)] == m and len(ref) > len(m):
                out.add(".".join(ref[len(m):]))
    return out


def _reads(facts: Facts, script: str, var: str, memo: dict[tuple[str, str], bool]) -> bool:
    """Whether the script's code mentions ``var``."""
    key = (script, var)
    if key not in memo:
        text = facts.tree.text(script) or ""
        # Whole-line comments aside; a trailing comment still counts (cheap and on the safe side).
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        memo[key] = re.search(rf"(?<![A-Za-z0-9_]){re.escape(var)}(?![A-Za-z0-9_])", code) is not None
    return memo[key]
