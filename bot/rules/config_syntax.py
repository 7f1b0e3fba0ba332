"""config-syntax: a master config or runners.yaml that is not valid YAML.

What it does:
    Loads every master config and runners.yaml and reports YAML errors at their line and
    column (a full-width comma ``，`` in a flow mapping is named as such). The other
    files are still linted.

Why is this bad?
    The sweep generator fails on the whole file, so none of its entries run.

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

ID = "config-syntax"
CODE = "BB002"
SEVERITY = Severity.ERROR
SUMMARY = "a config file that is not valid YAML"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for cfg in facts.configs:
        if cfg.error is not None:
            yield Finding(ID, CODE, SEVERITY, cfg.path, cfg.error.line, cfg.error.col,
                          f"invalid YAML: {cfg.error.message}; no entry of this file was checked", key=cfg.path)
    r = facts.runners
    if r.path is not None and r.error is not None:
        yield Finding(ID, CODE, SEVERITY, r.path, r.error.line, r.error.col,
                      f"invalid YAML: {r.error.message}; runner labels were not checked", key=r.path)
