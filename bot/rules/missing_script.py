"""missing-script: an entry resolves to a benchmark script that does not exist.

What it does:
    Evaluates the launcher for each entry's search-space points and reports an entry
    whose dispatched script path names no file in the repo (a typo in the launcher, a
    renamed precision or model prefix, a script moved to another folder). The closest
    existing names are suggested. Where a script of that name (or the entry's framework
    variant of it) sits unused in another folder, it was most likely moved: that dead
    script is listed as this finding's consequence.

Why is this bad?
    The job fails on the GPU runner after waiting for hardware, or, worse, a fallback
    picks another script.

Example:
    ```yaml
    # file: configs/amd-extra-master.yaml
    # no benchmarks/single_node/fixed_seq_len/kimik2.5_fp8_mi300x.sh exists
    kimik2.5-fp8-mi300x-vllm:
      image: vllm/vllm-openai-rocm:v0.14.1
      model: moonshotai/Kimi-K2.5
      model-prefix: kimik2.5
      runner: mi300x
      precision: fp8
      framework: vllm
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-start: 4, conc-end: 64 }
    ```

Fix:
    Rename the script or fix the entry's model-prefix / precision / framework, or the
    launcher's path expression.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules import dead_script
from bot.rules._disagree import covered
from bot.rules._variants import closest
from bot.settings import Config
from bot.shell.ir.values import describe, known, leading, to_regex, trailing

ID = "missing-script"
CODE = "BB101"
SEVERITY = Severity.ERROR
SUMMARY = "an entry resolves to a script that does not exist"


def subject(entry: str, script: str) -> str:
    """The fingerprint key: the entry and the script path it resolves to."""
    return f"{entry}|{script}"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    seen: dict[tuple[str, str, str], list[tuple[str, int, str]]] = {}
    entries = {}
    matched: dict[str, bool] = {}  # pattern -> whether a file matches it (entries share patterns)
    files: list[str] | None = None
    for run in facts.runs:
        for d in run.dispatches:
            k = known(d.target)
            if k is not None:
                if k.startswith(("/", "~", "../")) or facts.tree.is_file(k) or not k:
                    continue
                shown = k
            else:
                head = leading(d.target)
                if "/" not in head or head.startswith("/") or not trailing(d.target).endswith(".sh"):
                    continue
                rx = to_regex(d.target)
                if rx.pattern not in matched:
                    files = facts.tree.files() if files is None else files
                    matched[rx.pattern] = any(rx.match(f) for f in files)
                if matched[rx.pattern]:
                    continue
                shown = describe(d.target)
            key = (run.entry.path, run.entry.name, shown)
            entries[key] = run
            where = seen.setdefault(key, [])
            item = (d.loc.path, d.loc.line, run.launcher)
            if item not in where:
                where.append(item)
    taken = covered(facts)  # entries whose node families disagree: inconsistent-dispatch's
    seen = {k: v for k, v in seen.items() if (k[1], k[2]) not in taken}
    all_scripts = facts.all_benchmark_files()
    # a dead script of the same name elsewhere: the script moved (or the launcher looks in
    # the wrong folder); that dead script is a consequence of this cause
    # (or a framework variant of it, ``x_sglang_mtp.sh`` for ``x_mtp.sh``, left in another folder)
    dead_by_name: dict[str, list[str]] = {}
    for script, dead in dead_script.dead_scripts(facts).items():
        if dead.because in ("moved", ""):
            dead_by_name.setdefault(posixpath.basename(script), []).append(script)
    for (path, name, shown), where in sorted(seen.items()):
        run = entries[(path, name, shown)]
        launchers = sorted({w[2].rsplit("/", 1)[-1] for w in where})
        near = closest(posixpath.basename(shown), [posixpath.basename(s) for s in all_scripts])
        near_paths = [s for s in all_scripts if posixpath.basename(s) in near][:3]
        message = f"{name} resolves to {shown}, which does not exist (launcher {', '.join(launchers)})"
        if near_paths:
            message += f"; closest: {', '.join(near_paths)}"
        related = [Related(p, line, "builds the path") for p, line, _ in where[:3]]
        moved = _moved(dead_by_name, shown, run.entry.fields.get("framework"))
        if moved:
            message += (f"; a matching script is at {moved[0]}, which nothing runs: was it moved? "
                        "(consequence: that script is dead)")
            related += [Related(m, 1, "consequence: the matching script that nothing runs (dead)",
                                dead_script.ID, dead_script.subject(m)) for m in moved]
        yield Finding(ID, CODE, SEVERITY, path, run.entry.pos.line, run.entry.pos.col, message, tuple(related),
                      (name,), key=subject(name, shown))


def _moved(dead_by_name: dict[str, list[str]], shown: str, framework: object) -> list[str]:
    """Dead scripts elsewhere that are the script an entry looks for: the same name, or
    the name with the entry's framework suffix (``x_sglang_mtp.sh`` for ``x_mtp.sh``)."""
    base = posixpath.basename(shown)
    out = [s for s in dead_by_name.get(base, []) if s != shown]
    if framework and base.endswith(".sh"):
        stem = base[:-3]
        for name, scripts in dead_by_name.items():
            if name == base or not name.endswith(".sh"):
                continue
            if name[:-3].replace(f"_{framework}", "", 1) == stem:
                out.extend(scripts)
    return sorted(set(out))
