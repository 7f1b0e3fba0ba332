"""config-syntax: a master config, runners.yaml or workflow that is not valid YAML, or a file that cannot be read.

What it does:
    Loads every master config and runners.yaml and reports YAML errors at their line and
    column (a full-width comma ``，`` in a flow mapping is named as such). Every workflow
    the profile reads (``.github/workflows/*.yml``) is loaded too: a YAML error, a
    malformed ``${{ }}`` expression or a workflow too large to read is reported at its
    line, since GitHub refuses such a workflow and the launcher calls and envs it would
    hand the launchers are then not checked. A document
    that would expand past a million values through its aliases (a "billion laughs"),
    nests deeper than 200 levels or uses an anchor inside itself is an error at the line
    where that happens. Any file the analysis needs (a master config, runners.yaml, a
    launcher, a benchmark script, a workflow) that is not a regular file (a FIFO, a
    device, a socket), is over the file-size budget (8 MB by default, ``max-file-mb``)
    or cannot be read is reported too, and is never opened or parsed. The other files
    are still linted.

Why is this bad?
    The sweep generator fails on the whole file, so none of its entries run. GitHub does
    not run a workflow that does not parse: no benchmark it dispatches runs. A launcher
    that cannot be read runs nothing anybody can check: what its entries dispatch is
    unknown.

Example:
    ```yaml
    # file: configs/amd-extra-master.yaml
    kimik2.5-int4-mi300x-vllm-long:
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
          - { tp: 8， conc-start: 4, conc-end: 64 }
    ```

Fix:
    Fix the YAML at the reported position.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.rules._entries import entries_of

ID = "config-syntax"
CODE = "BB002"
SEVERITY = Severity.ERROR
SUMMARY = "a config file or workflow that is not valid YAML, or a file that cannot be read"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    yaml_files: set[str] = set()
    for cfg in facts.configs:
        yaml_files.add(cfg.path)
        if cfg.error is not None:
            yield Finding(ID, CODE, SEVERITY, cfg.path, cfg.error.line, cfg.error.col,
                          f"{_what(facts, cfg.path, cfg.error.message)}; no entry of this file was checked",
                          key=cfg.path)
    r = facts.runners
    if r.path is not None:
        yaml_files.add(r.path)
        if r.error is not None:
            yield Finding(ID, CODE, SEVERITY, r.path, r.error.line, r.error.col,
                          f"{_what(facts, r.path, r.error.message)}; runner labels were not checked", key=r.path)
    for path, line, message in facts.workflows.errors:
        if path in facts.unreadable:
            continue  # reported below, as a file that was not read
        yield Finding(ID, CODE, SEVERITY, path, line, 1,
                      f"this workflow does not load ({message}); GitHub would not run it, and the launcher calls "
                      "and envs it hands the launchers were not checked", key=f"workflow|{path}|{line}|{message}")
    launchers = set(facts.launcher_files)
    for path, why in sorted(facts.unreadable.items()):
        if path in yaml_files:
            continue
        if path in launchers:
            entries = entries_of(facts, path)
            consequence = (f"; what {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} on it dispatch is unknown"
                           if entries else "")
            yield Finding(ID, CODE, SEVERITY, path, 1, 1, f"this launcher is {why}; it was not read{consequence}",
                          entries=tuple(entries), key=f"unreadable|{path}")
        else:
            yield Finding(ID, CODE, SEVERITY, path, 1, 1, f"this file is {why}; it was not read",
                          key=f"unreadable|{path}")


def _what(facts: Facts, path: str, message: str) -> str:
    why = facts.unreadable.get(path)
    return f"this file is {why}; it was not read" if why is not None else f"invalid YAML: {message}"
