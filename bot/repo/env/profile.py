"""How a benchmark repo is laid out and how an entry becomes a launcher's environment.

The default profile describes the common layout of such repos (see docs/configuration.md); every field
can be overridden from ``.benchbot.yml`` (``profile:``). Nothing here names a repo.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bot.repo.env.envrender import EnvSpec, additional_settings, render, seq_name
from bot.repo.load.configs import AGENTIC, Entry, Point
from bot.shell.evaluator import budget as _budget
from bot.shell.ir.values import Val, unknown

# Environment the benchmark workflow passes to the launcher. "{field}" reads the
# search-space point, then its scenario block, then the entry; "{field|default}";
# "{@name}" is derived (see ``_derived``); "?" means "set, value unknown".
ENV_COMMON: dict[str, str] = {
    "IMAGE": "{image}",
    "MODEL": "{model}",
    "MODEL_PREFIX": "{model-prefix}",
    "PRECISION": "{precision}",
    "FRAMEWORK": "{framework}",
    "SPEC_DECODING": "{spec-decoding|none}",
    "DISAGG": "{disagg|false}",
    "EXP_NAME": "{@exp-name}",
    "ISL": "{isl|}",
    "OSL": "{osl|}",
    "MAX_MODEL_LEN": "{@max-model-len}",
    "SCENARIO_TYPE": "{@scenario}",
    "SCENARIO_SUBDIR": "{@scenario-subdir}",
    "IS_AGENTIC": "{@is-agentic}",
    "CONC": "{@conc}",
    "RUN_EVAL": "?",
    "EVAL_ONLY": "?",
    "EVAL_LIMIT": "?",
    "HF_TOKEN": "?",
    "KV_OFFLOADING": "{kv-offloading|}",
    "KV_OFFLOAD_BACKEND": "{kv-offload-backend.name|}",
    "TOTAL_CPU_DRAM_GB": "?",
    "DURATION": "?",
    "RESULT_FILENAME": "?",
}
ENV_SINGLE: dict[str, str] = {
    "TP": "{tp}",
    "EP_SIZE": "{ep|1}",
    "DP_ATTENTION": "{dp-attn|false}",
    "PP_SIZE": "{pp|1}",
    "DCP_SIZE": "{dcp-size|1}",
    "PCP_SIZE": "{pcp-size|1}",
}
ENV_MULTI: dict[str, str] = {
    "IS_MULTINODE": "true",
    "CONC_LIST": "{@conc-list}",
    "PREFILL_NUM_WORKERS": "{prefill.num-worker|1}",
    "PREFILL_TP": "{prefill.tp}",
    "PREFILL_EP": "{prefill.ep|1}",
    "PREFILL_DP_ATTN": "{prefill.dp-attn|false}",
    "PREFILL_PP_SIZE": "{prefill.pp|1}",
    "DECODE_NUM_WORKERS": "{decode.num-worker|1}",
    "DECODE_TP": "{decode.tp}",
    "DECODE_EP": "{decode.ep|1}",
    "DECODE_DP_ATTN": "{decode.dp-attn|false}",
    "DECODE_PP_SIZE": "{decode.pp|1}",
}
ENV_RUNNER: dict[str, str] = {
    "RUNNER_NAME": "{@node}",
    "RUNNER_TYPE": "{@label}",
    "GITHUB_WORKSPACE": "/github/workspace",
}
# What the matrix generator puts in each field of an entry's JSON, for workflows that read
# ``${{ matrix.config.<field> }}``: a field not listed is the entry's own (point, scenario
# block, entry), null when it has none. (InferenceX: utils/matrix_logic/generate_sweep_configs.py.)
MATRIX_FIELDS: dict[str, str] = {
    "exp-name": "{@exp-name}",
    "max-model-len": "{@max-model-len}",
    "conc": "{@conc}",
    "scenario-type": "{@scenario}",
    "spec-decoding": "{spec-decoding|none}",
    "ep": "{ep|1}",
    "dp-attn": "{dp-attn|false}",
    "pp": "{pp|1}",
    "dcp-size": "{dcp-size|1}",
    "pcp-size": "{pcp-size|1}",
    "disagg": "{disagg|false}",
    "runner": "{@label}",
    "run-eval": "?",
    "eval-only": "?",
    "kv-offload-backend": "{kv-offload-backend.name|}",
    "total-cpu-dram-gb": "{@cpu-dram-gb}",
    "duration": "{@duration}",
    "prefill.num-worker": "{prefill.num-worker|1}",
    "decode.num-worker": "{decode.num-worker|1}",
    "prefill.ep": "{prefill.ep|1}",
    "decode.ep": "{decode.ep|1}",
    "prefill.dp-attn": "{prefill.dp-attn|false}",
    "decode.dp-attn": "{decode.dp-attn|false}",
}
# Set on every runner, values unknown. Anything not listed anywhere is unset.
UNKNOWN_ENV: tuple[str, ...] = (
    "HOME", "USER", "UID", "PATH", "HOSTNAME", "PWD", "SHELL", "TMPDIR", "LOGNAME",
    "GITHUB_*", "RUNNER_*", "CI", "HF_HUB_CACHE", "HF_HOME", "SLURM_*", "SLURMD_*", "XDG_*",
)


@dataclass(frozen=True)
class Variant:
    """A script variant an entry may have: ``_mtp``, a framework suffix, ``agentic/``."""

    name: str
    suffix: str = ""  # appended to the script stem; may use {field}
    when: Mapping[str, str] = field(default_factory=dict)  # field -> value it needs
    folder: tuple[str, str] | None = None  # (from, to): the script lives in another folder
    env: str = ""  # the env var a launcher must read to dispatch it
    var: str = ""  # the conventional shell variable holding the suffix
    snippet: str = ""  # a launcher line that computes ``var``


DEFAULT_VARIANTS: tuple[Variant, ...] = (
    Variant("mtp", suffix="_mtp", when={"spec-decoding": "mtp"}, env="SPEC_DECODING", var="SPEC_SUFFIX",
            snippet="SPEC_SUFFIX=$([[ \"${SPEC_DECODING:-}\" == \"mtp\" ]] && printf '_mtp' || printf '')"),
    Variant("framework", suffix="_{framework}", env="FRAMEWORK", var="FRAMEWORK_SUFFIX"),
    Variant("agentic", when={"@scenario": AGENTIC}, folder=("fixed_seq_len/", "agentic/"),
            env="SCENARIO_SUBDIR"),
)


CHANGELOG_APPEND = ("no-deletions", "tail")


@dataclass(frozen=True)
class Profile:
    configs: tuple[str, ...] = ("configs/*-master.yaml", ".github/configs/*-master.yaml")
    configs_exclude: tuple[str, ...] = ("**/deprecated/**",)
    runners: tuple[str, ...] = ("configs/runners.yaml", ".github/configs/runners.yaml")
    launcher: str = "runners/launch_{node_prefix}.sh"
    launchers: tuple[str, ...] = ("runners/launch_*.sh",)
    node_separator: str = "_"
    scripts: tuple[str, ...] = ("benchmarks/**/*.sh",)
    scripts_exclude: tuple[str, ...] = ("**/deprecated/**",)
    workflows: tuple[str, ...] = (".github/workflows/*.yml", ".github/workflows/*.yaml")
    # Other files that may run a benchmark script by name (job files, recipe YAML).
    references: tuple[str, ...] = ("benchmarks/**", "runners/**", "utils/**", ".github/**")
    workflow_single: tuple[str, ...] = (".github/workflows/benchmark-tmpl.yml",)
    workflow_multi: tuple[str, ...] = (".github/workflows/benchmark-multinode-tmpl.yml",)
    env_common: Mapping[str, str] = field(default_factory=lambda: dict(ENV_COMMON))
    env_single: Mapping[str, str] = field(default_factory=lambda: dict(ENV_SINGLE))
    env_multi: Mapping[str, str] = field(default_factory=lambda: dict(ENV_MULTI))
    env_runner: Mapping[str, str] = field(default_factory=lambda: dict(ENV_RUNNER))
    unknown_env: tuple[str, ...] = UNKNOWN_ENV
    matrix_fields: Mapping[str, str] = field(default_factory=lambda: dict(MATRIX_FIELDS))
    # Commands (or functions) whose arguments name variables that must be set and non-empty
    # (the job fails otherwise): benchmark_lib.sh's ``check_env_vars MODEL TP ...``.
    env_checks: tuple[str, ...] = ("check_env_vars",)
    workspace: str = "/github/workspace"
    workspace_aliases: tuple[str, ...] = ("/workspace/", "/github/workspace/")
    wrappers: tuple[str, ...] = ()  # extra wrapper commands, added to the built-in ones
    # Commands that take the job out of the repo's shell files: running one hands the entry
    # to that tool (with the recipe files its additional-settings name).
    external_tools: tuple[str, ...] = ("srtctl",)
    # Recipe path prefix as the tool sees it -> the repo folder that keeps such recipes (the
    # launcher copies them into the tool's checkout); a path is also looked up as written.
    recipe_roots: Mapping[str, str] = field(
        default_factory=lambda: {"recipes/": "benchmarks/multi_node/srt-slurm-recipes/"})
    variants: tuple[Variant, ...] = DEFAULT_VARIANTS
    max_paths: int = 16
    # The budget of one evaluation (bot.shell.evaluator.budget; capped by its hard maxima): steps
    # (statements and words executed), seconds of wall clock, bytes per value.
    max_steps: int = _budget.MAX_STEPS
    max_seconds: float = _budget.MAX_SECONDS
    max_value_bytes: int = _budget.MAX_VALUE
    # Search-space fields that may change which script runs; points that agree on them
    # (and on scenario and sequence lengths) are evaluated once unless all_points is set.
    point_keys: tuple[str, ...] = ("spec-decoding",)
    all_points: bool = False
    # The performance changelog (rule changelog-missing): its file ("" = not checked), the
    # entry field that names config entries (globs), and the fields of old entries a later
    # change may correct in place (InferenceX's gate allows fixing a pr-link).
    changelog: str = "perf-changelog.yaml"
    changelog_key: str = "config-keys"
    changelog_corrections: tuple[str, ...] = ("pr-link",)
    # What "append-only" forbids: ``no-deletions`` a removed or edited base line (what
    # InferenceX's CI gate rejects: utils/process_changelog.py fails on a line `git diff`
    # removes), ``tail`` also new lines anywhere but at the end (its AGENTS.md convention).
    changelog_append: str = "no-deletions"
    # Benchmark clients -> groups of arguments, one of each group required when a point runs
    # speculative decoding (rule spec-client-args; the speculator policy's ``client-args``
    # replace a client's). InferenceX's AGENTS.md: every ``*_mtp.sh`` passes
    # ``--use-chat-template`` to ``run_benchmark_serving``; its ``--dsv4`` implies it
    # (benchmarks/benchmark_lib.sh). No default for the agentic replay: see docs/speculators.md.
    spec_client_args: Mapping[str, tuple[tuple[str, ...], ...]] = field(
        default_factory=lambda: {"run_benchmark_serving": (("--use-chat-template", "--dsv4"),)})
    # Clients that run a command held in a variable besides their own words: an argument
    # assigned to it reaches them (``REPLAY_CMD+=" --apply-chat-template"``).
    spec_client_reads: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {"run_agentic_replay_and_write_outputs": ("REPLAY_CMD",)})

    @property
    def conc_var(self) -> str:
        """The env var the workflow passes a point's concurrency as (``{@conc}``)."""
        templates = {**self.env_common, **self.env_single}
        return next((n for n, t in templates.items() if t == "{@conc}"), "CONC")

    def launcher_for(self, node: str) -> str:
        prefix = node.split(self.node_separator, 1)[0] if self.node_separator else node
        return self.launcher.replace("{node_prefix}", prefix)

    def prefix_of_launcher(self, path: str) -> str | None:
        head, _, tail = self.launcher.partition("{node_prefix}")
        if path.startswith(head) and path.endswith(tail) and len(path) > len(head) + len(tail):
            return path[len(head) : len(path) - len(tail)]
        return None


_KEYS = {f.name.replace("_", "-"): f.name for f in fields(Profile)}


def profile_from_config(data: Mapping[str, Any] | None) -> Profile:
    """Apply ``profile:`` overrides (kebab-case keys) to the default profile."""
    if not data:
        return Profile()
    changes: dict[str, Any] = {}
    for key, value in data.items():
        name = _KEYS.get(str(key))
        if name is None:
            raise ValueError(f"unknown profile key {key!r}")
        if name == "variants":
            changes[name] = tuple(
                Variant(str(v["name"]), str(v.get("suffix", "")), dict(v.get("when", {})),
                        (str(v["folder"][0]), str(v["folder"][1])) if v.get("folder") else None,
                        str(v.get("env", "")), str(v.get("var", "")), str(v.get("snippet", "")))
                for v in value)
        elif name == "recipe_roots":
            changes[name] = {str(k): str(v) for k, v in value.items()}
        elif name == "matrix_fields":
            merged = dict(MATRIX_FIELDS)
            merged.update({str(k): str(v) for k, v in value.items()})
            changes[name] = merged
        elif name.startswith("env_"):
            merged = dict(getattr(Profile(), name))
            merged.update({str(k): str(v) for k, v in value.items()})
            changes[name] = {k: v for k, v in merged.items() if v not in ("", None, "unset")}
        elif name == "changelog":
            changes[name] = "" if value is None else str(value)
        elif name == "changelog_append":
            if value not in CHANGELOG_APPEND:
                raise ValueError(f"profile key 'changelog-append' must be one of {', '.join(CHANGELOG_APPEND)}")
            changes[name] = str(value)
        elif name in ("launcher", "node_separator", "workspace", "changelog_key"):
            changes[name] = str(value)
        elif name == "max_paths":
            changes[name] = int(value)
        elif name == "max_steps":
            changes[name] = max(1, min(int(value), _budget.HARD_MAX_STEPS))
        elif name == "max_seconds":
            changes[name] = max(0.001, min(float(value), _budget.HARD_MAX_SECONDS))
        elif name == "max_value_bytes":
            changes[name] = max(1, min(int(value), _budget.HARD_MAX_VALUE))
        elif name == "all_points":
            changes[name] = bool(value)
        else:
            changes[name] = tuple(str(v) for v in (value if isinstance(value, list) else [value]))
    return replace(Profile(), **changes)


def is_unknown_env(profile: Profile, name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in profile.unknown_env)


def build_env(profile: Profile, entry: Entry, point: Point, node: str, label: str,
              passed: frozenset[str] | None = None) -> dict[str, Val]:
    """Env vars for a launcher run. ``passed``: the names the workflow template mentions
    (None when there is no template to read); other template vars are left unset."""
    templates: dict[str, str] = dict(profile.env_common)
    templates.update(profile.env_multi if entry.multinode else profile.env_single)
    env: dict[str, Val] = {}
    for name, template in templates.items():
        if passed is not None and name not in passed:
            continue
        if template == "?":
            env[name] = unknown(f"${name}")
            continue
        v = render(template, entry, point, node, label)
        if v is None:
            env[name] = unknown(f"${name}")
        elif v != () or template == "" or passed is not None:
            # a field the entry lacks: the workflow still sets the variable (``${{ inputs.x }}``
            # of an input nobody passed is ''); without a template to read, it stays unset
            env[name] = v
    env.update(additional_settings(entry, point))
    for name, template in profile.env_runner.items():
        v = render(template, entry, point, node, label)
        env[name] = v if v is not None else unknown(f"${name}")
    return env


__all__ = ["EnvSpec", "Profile", "Variant", "build_env", "is_unknown_env", "profile_from_config", "render",
           "seq_name"]
