"""unused-config-field: a search-space label the server does not run with.

What it does:
    For every single-node search-space item that sets a field with a default (``ep``,
    ``dp-attn``, ``pp``, ``dcp-size``, ``pcp-size``, ``kv-offloading``: the profile's
    ``{field|default}`` env templates) to a value other than the default, looks at the
    benchmark script the entry really dispatches. When that script never mentions the env
    var the workflow passes the field as (``EP_SIZE``, ``DP_ATTENTION``, ...), the script
    may still set it its own way (``--enable-expert-parallel --data-parallel-size $TP`` at
    TP 8 is expert parallelism 8): for the parallelism fields (``ep``, ``dp-attn``, ``pp``,
    ``dcp-size``) the value the server really runs with, as ``serve`` reads its command
    (``bot.launches.parallel``), is held against the label, and only a difference is reported;
    where the command cannot tell, nothing is. Other fields are reported when the script
    never reads their variable. Also reported: the workflows never forward the field to the
    launcher's env at all (an input the template accepts and drops). One finding per entry
    and field, its other rows in ``related``. Only the dispatched script counts: a shared
    library that reads the variable to label results does not make the server use it.
    Multinode entries are skipped (their scripts hand the env to job files that run elsewhere).

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
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from bot.findings import Finding, Related, Severity
from bot.launches import parallel
from bot.repo.env.points import point_key
from bot.repo.facts import Facts, Run
from bot.repo.load.configs import Point
from bot.repo.load.yamlfile import YMap
from bot.repo.workflows import ghexpr as gx
from bot.repo.workflows.wfcalls import LauncherCall
from bot.settings import Config
from bot.shell.ir.values import known

ID = "unused-config-field"
CODE = "BB108"
SEVERITY = Severity.WARNING
SUMMARY = "a search-space label the server does not run with (its env var unread, its value not served)"

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


@dataclass
class _Rows:
    """The search-space rows of one entry that label ``field`` with a value the job does not run."""

    run: Run
    scripts: list[str]
    dropped: LauncherCall | None  # the main path's step never forwards the field
    points: list[Point] = dataclass_field(default_factory=list)


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
    groups: dict[tuple[str, str, str], _Rows] = {}  # (entry, field, how) -> rows, in file order
    seen: set[tuple[str, int]] = set()
    for run in facts.runs:
        if run.entry.multinode or run.bound_hit:
            continue
        scripts = [s for s in (known(d.target) for d in run.dispatches) if s is not None and facts.tree.is_file(s)]
        if not scripts or len(scripts) != len(run.dispatches):
            continue  # a dispatch we cannot name might read it
        rep = point_key(prof, run.point)
        for point in run.entry.points:
            if point_key(prof, point) != rep or (run.entry.path, point.pos.line) in seen:
                continue
            seen.add((run.entry.path, point.pos.line))
            # the path this point runs through (an agentic point goes through the agentic job)
            main = facts.envs.call_for(run.entry, point, run.node, run.label)
            if main is not None and id(main) not in fwd:
                fwd[id(main)] = _forwarded(main)
            forwarded = fwd[id(main)] if main is not None else None
            for name, (var, default) in fields.items():
                if name not in point.fields or _is_default(point.fields[name], default):
                    continue
                dropped = main if forwarded is not None and main is not None and name not in forwarded else None
                if dropped is None and any(_reads(facts, s, var, reads) for s in scripts):
                    continue
                how = "dropped" if dropped is not None else "served" if name in parallel.FIELDS else "unread"
                rows = groups.setdefault((run.entry.name, name, how), _Rows(run, scripts, dropped))
                rows.points.append(point)
    for (_, name, how), rows in groups.items():
        var = fields[name][0]
        if how == "served":
            yield from _served(facts, rows, name)
        else:
            yield _finding(rows, name, var, [(p, _text(p.fields[name])) for p in rows.points], None)


def _served(facts: Facts, rows: _Rows, name: str) -> Iterator[Finding]:
    """The rows whose label differs from what the server really runs with (serve's view): one
    finding per entry and field. Rows the server runs as labelled, or where it cannot be told,
    are left alone (the script may set it its own way: ``--enable-expert-parallel --dp $TP``)."""
    wrong: list[tuple[Point, str]] = []
    for point, cmd in parallel.servers_at(facts, rows.run.entry, rows.points):
        got = parallel.effective(cmd, name)
        if got is not None and got != _text(point.fields[name]):
            wrong.append((point, got))
    if wrong:
        yield _finding(rows, name, "", [(p, _text(p.fields[name])) for p, _ in wrong], [got for _, got in wrong])


def _finding(rows: _Rows, name: str, var: str, labelled: list[tuple[Point, str]],
             served: list[str] | None) -> Finding:
    run, entry = rows.run, rows.run.entry
    first = labelled[0][0]
    f = first.fields
    mark = f.key_pos.get(name, f.pos) if isinstance(f, YMap) else first.pos
    values = sorted({v for _, v in labelled})
    value = values[0] if len(values) == 1 else "/".join(values)
    count = "" if len(labelled) == 1 else f" ({len(labelled)} search-space rows)"
    shown = ", ".join(rows.scripts)
    main = rows.dropped
    if main is not None:
        msg = (f"{entry.name}: {name}: {value}{count} never reaches the launcher: {main.name} sets no env var from "
               f"the entry's {name} (the profile expects {var}); the result is labelled {name} {value}, but the "
               "job never saw it")
        related = [Related(main.path, main.line, "the launcher step; its env has no "
                           f"${{{{ {'.'.join((*main.matrix, name))} }}}}")]
    elif served is not None:
        ran = sorted(set(served))
        msg = (f"{entry.name}: {name}: {value}{count}, but the server {shown} starts runs with {name} "
               f"{'/'.join(ran)}: the result is labelled with a configuration that never ran")
        related = [Related(s, 1, f"what {posixpath.basename(run.launcher)} runs; the server's flags")
                   for s in rows.scripts]
    else:
        msg = (f"{entry.name}: {name}: {value}{count} reaches the benchmark as {var}, but {shown} never reads "
               f"{var}: the result is labelled {name} {value}, but the script decides on its own")
        related = [Related(s, 1, f"dispatched script; no ${var} in it") for s in rows.scripts]
    related += [Related(entry.path, p.pos.line, f"also labelled {name}: {v}") for p, v in labelled[1:]]
    return Finding(ID, CODE, SEVERITY, entry.path, mark.line, mark.col, msg, tuple(related), (entry.name,),
                   key=f"{entry.name}|{name}")


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
