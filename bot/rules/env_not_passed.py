"""env-not-passed: a variable the launcher or its script needs that a workflow path never passes.

What it does:
    Reads the workflows (:mod:`bot.repo.workflows.workflows`): every step that runs a launcher, through
    every caller of a reusable workflow, with the env that step really gets. The main path
    (the one most callers of the benchmark template share) gives the env every rule judges;
    every other path is evaluated where it differs. It reports, at the workflow line:

    - a path that never sets a variable the launcher reads with no default, under
      ``set -u``, or in a guard (``: "${X:?}"``, ``check_env_vars X``), when that changes
      what the job does (it fails, or runs another script than the main path does);
    - a path that passes a literal that makes a variant unreachable
      (``spec-decoding: 'none'`` for a sweep with ``mtp`` entries);
    - a variable a dispatched benchmark script requires (``check_env_vars``, ``${X:?}``)
      that no path sets, or that does not cross into the container: a ``docker run -e``
      allow-list or ``srun --export=X`` without ``ALL`` that leaves it out (reported at that
      launcher line).

    Errors where the job fails or runs the wrong script; warnings otherwise. A path that
    stops many launchers is one finding: its message says which variable, which path and how
    many launchers and entries; each launcher, with what happens to its first entry there,
    is a related line, and the entries are the finding's entries.

Why is this bad?
    The env is where a job silently goes wrong: a profiling workflow that never sets
    ``SCENARIO_SUBDIR`` runs a script path that does not exist; a second caller passing
    ``spec-decoding: 'none'`` measures MTP entries without MTP; a ``docker -e`` list that drops
    ``DP_ATTENTION`` makes the benchmark script fail its own check inside the container.

Example:
    ```yaml
    # file: .github/workflows/run-sweep.yml
    name: Run sweep
    on: workflow_dispatch
    jobs:
      setup:
        runs-on: ubuntu-latest
        outputs:
          configs: ${{ steps.gen.outputs.configs }}
        steps:
          - id: gen
            run: python3 utils/generate.py >> "$GITHUB_OUTPUT"
      sweep:
        needs: setup
        strategy:
          matrix:
            config: ${{ fromJson(needs.setup.outputs.configs) }}
        uses: ./.github/workflows/benchmark-tmpl.yml
        with:
          runner: ${{ matrix.config.runner }}
          image: ${{ matrix.config.image }}
          model: ${{ matrix.config.model }}
          model-prefix: ${{ matrix.config.model-prefix }}
          precision: ${{ matrix.config.precision }}
          framework: ${{ matrix.config.framework }}
          exp-name: ${{ matrix.config.exp-name }}
          tp: ${{ matrix.config.tp }}
          ep: ${{ matrix.config.ep }}
          dp-attn: ${{ matrix.config.dp-attn }}
          conc: ${{ matrix.config.conc }}
          isl: ${{ matrix.config.isl }}
          osl: ${{ matrix.config.osl }}
          max-model-len: ${{ matrix.config.max-model-len }}
          spec-decoding: ${{ matrix.config.spec-decoding }}
          scenario-subdir: fixed_seq_len/
      smoke:
        needs: setup
        strategy:
          matrix:
            config: ${{ fromJson(needs.setup.outputs.configs) }}
        uses: ./.github/workflows/benchmark-tmpl.yml
        with:
          runner: ${{ matrix.config.runner }}
          image: ${{ matrix.config.image }}
          model: ${{ matrix.config.model }}
          model-prefix: ${{ matrix.config.model-prefix }}
          precision: ${{ matrix.config.precision }}
          framework: ${{ matrix.config.framework }}
          exp-name: ${{ matrix.config.exp-name }}
          tp: ${{ matrix.config.tp }}
          ep: ${{ matrix.config.ep }}
          dp-attn: ${{ matrix.config.dp-attn }}
          conc: ${{ matrix.config.conc }}
          isl: ${{ matrix.config.isl }}
          osl: ${{ matrix.config.osl }}
          max-model-len: ${{ matrix.config.max-model-len }}
          # the smoke test never runs MTP: the dsr1 mtp entry measures the plain script here
          spec-decoding: 'none'
          scenario-subdir: fixed_seq_len/
    ```
    with an entry ``spec-decoding: mtp`` in the config and a launcher that builds
    ``..._mtp.sh`` from ``SPEC_DECODING``.

Fix:
    Pass the variable in the path that lacks it (``SCENARIO_SUBDIR`` in the job's ``env:``),
    forward the input instead of a literal
    (``spec-decoding: ${{ matrix.config.spec-decoding }}``), add the variable to the
    container's allow-list (``-e DP_ATTENTION``, ``--export=ALL,...``), or give the
    launcher a default (``${X:-}``).
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.rules import _envpaths
from bot.settings import Config

ID = "env-not-passed"
CODE = "BB112"
SEVERITY = Severity.ERROR
SUMMARY = "a variable a launcher or its script needs that a workflow path never passes"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for cause in _envpaths.causes(facts):
        yield Finding(ID, CODE, SEVERITY if cause.fails else Severity.WARNING, cause.path, cause.line, 1, cause.message,
                      tuple(Related(p, line, note) for p, line, note in cause.related),
                      tuple(sorted(cause.entries)), key=cause.key)
