"""profile-overridden: the workflows compute a launcher's env differently from the profile.

What it does:
    When the repo's workflows run the launchers for the config entries (a step reached from
    a job whose matrix is a generator's output), the env comes from the workflows, not from
    the profile's built-in table (``env-common``, ``env-single``...). This rule says once per
    workflow path where the two disagree: a variable the workflow computes to another value
    than the table would (shown for the first entry where they differ). It is information:
    the workflow's env is the one used. (A variable the workflow never sets, or sets to an
    empty value because the entry lacks the field or the path does not pass the input, is
    env-not-passed's business where it matters, and nobody's where it does not.)

Why is this bad?
    It is not, by itself: the profile is a guess for repos whose workflows cannot be read.
    But a difference is worth a look: a ``.benchbot.yml`` profile override that no longer
    matches the workflow, or a workflow that stopped passing a variable.

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
          # the template's default would be the profile's 'max-model-len' (isl + osl + 256)
          max-model-len: '4096'
          spec-decoding: ${{ matrix.config.spec-decoding }}
          scenario-subdir: fixed_seq_len/
    ```

Fix:
    Nothing to fix when the workflow is right. When a profile override in ``.benchbot.yml``
    is stale, drop it; the workflows are read.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Related, Severity
from bot.repo.env.wfenv import RUNNER_SET
from bot.repo.facts import Facts
from bot.repo.workflows.wfcalls import LauncherCall
from bot.settings import Config
from bot.shell.ir.values import known

ID = "profile-overridden"
CODE = "BB114"
SEVERITY = Severity.INFO
SUMMARY = "the workflows compute a launcher's env differently from the profile's table"
MAX_SHOWN = 6


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    # per workflow path (the one each point runs with): name -> (entry, workflow value, profile value)
    by_call: dict[str, tuple[LauncherCall, dict[str, tuple[str, str, str]]]] = {}
    for run in facts.runs:
        call = facts.envs.call_for(run.entry, run.point, run.node, run.label)
        if call is None:
            continue
        differ = by_call.setdefault(call.name, (call, {}))[1]
        wf = facts.env_for(run.entry, run.point, run.node, run.label)
        table = facts.envs.profile_env(run.entry, run.point, run.node, run.label)
        for name, value in table.items():
            if name in RUNNER_SET or name.startswith(("RUNNER_", "GITHUB_")) or name not in wf:
                continue
            a, b = known(wf[name]), known(value)
            # '' on either side: a field the entry lacks or an input the path does not pass;
            # what that breaks is env-not-passed's and unused-config-field's business
            if a and b and a != b and name not in differ:
                differ[name] = (run.entry.name, a, b)
    for name_of_call, (call, differ) in sorted(by_call.items()):
        if not differ:
            continue
        shown = [f"{n} = {a!r} where the profile says {b!r} (e.g. {e})" for n, (e, a, b) in sorted(differ.items())]
        message = (f"{call.name} computes " + "; ".join(shown[:MAX_SHOWN])
                   + (f" and {len(shown) - MAX_SHOWN} more" if len(shown) > MAX_SHOWN else "")
                   + ": the workflow's env is used")
        related = tuple(Related(call.env[n].path, call.env[n].line, f"{n} set here") for n in sorted(differ)
                        if n in call.env)[:MAX_SHOWN]
        yield Finding(ID, CODE, SEVERITY, call.path, call.line, 1, message, related, (), key=name_of_call)
