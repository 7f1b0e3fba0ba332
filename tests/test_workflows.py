"""The GitHub Action (action.yml) and the workflow templates (workflows/*.yml).

Three independent checks, each of which must pass for every file:

- zizmor (static security analysis of GitHub Actions), offline, with no configuration and no
  ``# zizmor: ignore`` comments honoured, under the ``pedantic`` persona (regular findings plus code
  smells): the parsed JSON list of findings must be empty. The ``auditor`` persona is clean for these
  files today too, but it is not enforced: it reports findings that are expected to be false positives.
- check-jsonschema against the schemas it vendors (SchemaStore's github-workflow and github-action),
  so it works offline.
- structural checks written here (``workflow_problems``, ``review_workflow_problems``,
  ``action_problems``): functions over a parsed file that return what is wrong, so the negative tests
  can run them on a deliberately bad workflow.

zizmor and check-jsonschema are test extras (``pip install -e '.[test]'``); a missing one fails the
tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / "workflows").glob("*.yml"))
REVIEW = ROOT / "workflows" / "benchbot-review.yml"
COMMANDS = ROOT / "workflows" / "benchbot-commands.yml"
BENCH = ROOT / "workflows" / "benchbot-bench.yml"
CACHE = ROOT / "workflows" / "benchbot-cache.yml"
ALL_FILES = [ACTION, *WORKFLOWS]

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
USES_LINE_RE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?:#\s*(?P<comment>.*))?$")
VERSION_COMMENT_RE = re.compile(r"^v\d+(\.\d+){0,2}\b")
PR_NUMBER = "github.event.pull_request.number"

# zizmor findings accepted, exactly: (file, audit, the annotation naming the cause). zizmor's dangerous-triggers
# reports EVERY issue_comment workflow (zizmor 1.32 puts no condition on it, and these tests honour no ignore
# comments), but comment commands need issue_comment. The commands template is safe for the reasons
# commands_workflow_problems checks: it checks out the default branch only, fetches the PR head as data, lets no
# comment text into a step, and asks for job-level permissions only. test_accepted_zizmor_findings_still_occur
# fails when zizmor stops reporting one, so the list cannot outlive its reason.
# The same holds for the results template's workflow_run (it reports a finished /bench run back): it checks out
# the default branch only, reads the run and its artifacts as data, and asks for job-level permissions only.
ACCEPTED_ZIZMOR = {
    ("workflows/benchbot-commands.yml", "dangerous-triggers", "issue_comment is almost always used insecurely"),
    ("workflows/benchbot-results.yml", "dangerous-triggers", "workflow_run is almost always used insecurely"),
    ("workflows/benchbot-labels.yml", "dangerous-triggers", "pull_request_target is almost always used insecurely"),
}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def _tool(name: str) -> str:
    """The console script ``name``: next to this interpreter (the venv) first, then on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: install the test extras with `pip install -e '.[test]'`",
                    pytrace=False)
    return found


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN"}}
    env["ZIZMOR_OFFLINE"] = "1"
    env["NO_COLOR"] = "1"
    return env


def zizmor_findings(path: Path, persona: str = "pedantic", ignores: bool = False) -> list[dict[str, Any]]:
    """zizmor's findings for ``path``, offline, ignoring any zizmor configuration and (unless
    ``ignores``) the file's own ``# zizmor: ignore[...]`` comments."""
    proc = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-config", *([] if ignores else ["--no-ignores"]), "--no-exit-codes",
         "--no-progress", f"--persona={persona}", "--format", "json", str(path)],
        capture_output=True, text=True, env=_offline_env(), timeout=60, check=False,
    )
    assert proc.returncode == 0, f"zizmor failed on {path} (exit {proc.returncode}):\n{proc.stderr}"
    findings = json.loads(proc.stdout)
    assert isinstance(findings, list), proc.stdout
    return findings


def _describe(findings: list[dict[str, Any]]) -> str:
    lines = []
    for f in findings:
        where = []
        for loc in f.get("locations", []):
            concrete = loc.get("concrete", {}).get("location", {}).get("start_point", {})
            note = loc.get("symbolic", {}).get("annotation", "")
            where.append(f"line {concrete.get('row', -1) + 1}: {note}")
        lines.append(f"{f.get('ident')} ({f.get('determinations', {}).get('severity')}): {f.get('desc')}; "
                     + "; ".join(where))
    return "\n".join(lines)


def _annotations(finding: dict[str, Any]) -> set[str]:
    return {str(loc.get("symbolic", {}).get("annotation", "")) for loc in finding.get("locations", [])}


def accepted(path: Path, finding: dict[str, Any]) -> bool:
    """Whether ``finding`` (for ``path``) is one of ACCEPTED_ZIZMOR."""
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return any(rel == file and finding.get("ident") == ident and annotation in _annotations(finding)
               for file, ident, annotation in ACCEPTED_ZIZMOR)


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", schema, str(path)],
        capture_output=True, text=True, env=_offline_env(), timeout=60, check=False,
    )


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path}: not a mapping"
    return data


# --- structural checks: plain functions over parsed YAML, returning the problems found -----------------

def triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    """The workflow's ``on:``, as a mapping event -> configuration. PyYAML (YAML 1.1) reads the key ``on``
    as the boolean True."""
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {str(event): None for event in on}
    if isinstance(on, dict):
        return {str(k): v for k, v in on.items()}
    return {}


def _steps(doc: dict[Any, Any]) -> list[tuple[str, dict[Any, Any]]]:
    """(where, step) for every step of every job of a workflow, or of a composite action."""
    out: list[tuple[str, dict[Any, Any]]] = []
    jobs = doc.get("jobs")
    if isinstance(jobs, dict):
        for job_id, job in jobs.items():
            for i, step in enumerate((job or {}).get("steps") or []):
                if isinstance(step, dict):
                    out.append((f"jobs.{job_id}.steps[{i}]", step))
    runs = doc.get("runs")
    if isinstance(runs, dict):
        for i, step in enumerate(runs.get("steps") or []):
            if isinstance(step, dict):
                out.append((f"runs.steps[{i}]", step))
    return out


def _uses(doc: dict[Any, Any]) -> list[tuple[str, str]]:
    found = [(f"{where}.uses", str(step["uses"])) for where, step in _steps(doc) if "uses" in step]
    for job_id, job in (doc.get("jobs") or {}).items():
        if isinstance(job, dict) and "uses" in job:  # a reusable-workflow call
            found.append((f"jobs.{job_id}.uses", str(job["uses"])))
    return found


def pinning_problems(doc: dict[Any, Any]) -> list[str]:
    """Every ``uses:`` is a local action or pinned to a full commit SHA (docker images to a digest)."""
    problems = []
    for where, uses in _uses(doc):
        if uses.startswith("./"):
            continue
        if uses.startswith("docker://"):
            if "@sha256:" not in uses:
                problems.append(f"{where}: docker image {uses!r} is not pinned to a digest")
            continue
        _, _, ref = uses.partition("@")
        if not SHA_RE.match(ref):
            problems.append(f"{where}: {uses!r} is not pinned to a full 40-hex commit SHA")
    return problems


def run_expression_problems(doc: dict[Any, Any]) -> list[str]:
    """No ``${{`` inside any ``run:``: expressions reach the shell only through ``env:``."""
    return [f"{where}.run: contains a ${{{{ }}}} expression; pass it through env: instead"
            for where, step in _steps(doc) if "${{" in str(step.get("run", ""))]


def checkout_problems(doc: dict[Any, Any]) -> list[str]:
    problems = []
    for where, step in _steps(doc):
        if str(step.get("uses", "")).split("@")[0] == "actions/checkout":
            if (step.get("with") or {}).get("persist-credentials") is not False:
                problems.append(f"{where}: actions/checkout without persist-credentials: false")
    return problems


def workflow_problems(workflow: dict[Any, Any]) -> list[str]:
    """The requirements every workflow template meets."""
    problems = []
    on = triggers(workflow)
    if not on:
        problems.append("no triggers (on:)")
    target = on.get("pull_request_target")
    labeled_only = isinstance(target, dict) and target.get("types") == ["labeled"]
    if "pull_request_target" in on and not labeled_only:  # the label trigger only: it checks out the base
        problems.append("triggers on pull_request_target (runs untrusted PR code with the base repo's secrets)")
    if "permissions" in workflow and workflow["permissions"] != {}:
        problems.append(f"top-level permissions grant something: {workflow['permissions']!r} (want {{}})")
    jobs = workflow.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        problems.append("no jobs")
        jobs = {}
    for job_id, job in jobs.items():
        if not isinstance(job, dict) or not isinstance(job.get("permissions"), dict):
            problems.append(f"jobs.{job_id}: no permissions block (a mapping)")
    if "pull_request" in on:
        group = str((workflow.get("concurrency") or {}).get("group", ""))
        if PR_NUMBER not in group:
            problems.append(f"concurrency group {group!r} does not contain {PR_NUMBER}")
    problems += pinning_problems(workflow)
    problems += run_expression_problems(workflow)
    problems += checkout_problems(workflow)
    return problems


def review_workflow_problems(workflow: dict[Any, Any]) -> list[str]:
    """What the review template in particular must do (on top of ``workflow_problems``)."""
    problems = []
    on = triggers(workflow)
    if set(on) != {"pull_request"}:
        problems.append(f"triggers {sorted(on)}, want only pull_request")
    types = set((on.get("pull_request") or {}).get("types") or [])
    if types != {"opened", "synchronize", "reopened", "ready_for_review"}:
        problems.append(f"pull_request types {sorted(types)}")
    concurrency = workflow.get("concurrency") or {}
    if concurrency.get("group") != "benchbot-review-${{ github.event.pull_request.number }}":
        problems.append(f"concurrency group {concurrency.get('group')!r}, want the one the /lint job shares")
    if concurrency.get("cancel-in-progress") is not False:
        problems.append("concurrency: cancel-in-progress is not false (a review must not be cut between writes)")
    jobs = workflow.get("jobs") or {}
    review, upload = jobs.get("review") or {}, jobs.get("upload-sarif") or {}
    if review.get("permissions") != {"contents": "read", "pull-requests": "write"}:
        problems.append(f"review permissions {review.get('permissions')!r}")
    if upload.get("permissions") != {"contents": "read", "security-events": "write", "actions": "read"}:
        problems.append(f"upload-sarif permissions {upload.get('permissions')!r}")
    if upload.get("needs") not in ("review", ["review"]):
        problems.append("upload-sarif does not need review")
    if "always()" not in str(upload.get("if", "")) or "needs.review.outputs" not in str(upload.get("if", "")):
        problems.append("upload-sarif must run if: always() and the review job produced the SARIF")
    draft_if = str(review.get("if", ""))
    if "github.event.pull_request.draft" not in draft_if or "ready_for_review" not in draft_if:
        problems.append("review job does not skip drafts (except on ready_for_review)")
    steps = dict((str(s.get("uses", "")).split("@")[0], s) for s in review.get("steps") or [])
    checkout = (steps.get("actions/checkout") or {}).get("with") or {}
    if checkout.get("fetch-depth") != 0:
        problems.append("checkout: fetch-depth is not 0 (the base commit must be in history)")
    if checkout.get("ref") != "${{ github.event.pull_request.head.sha }}":
        problems.append("checkout: ref is not the PR head SHA")
    bot = (steps.get("benchbot/benchbot") or {}).get("with") or {}
    if bot.get("command") != "event" or not bot.get("sarif-file"):
        problems.append("benchbot step: want command: event and a sarif-file")
    if not any(s.get("uses", "").startswith("actions/upload-artifact@") and "always()" in str(s.get("if", ""))
               for s in review.get("steps") or []):
        problems.append("review: no upload-artifact step with if: always()")
    problems += cache_use_problems(review.get("steps") or [], save=False)
    upload_steps = dict((str(s.get("uses", "")).split("@")[0], s) for s in upload.get("steps") or [])
    if "actions/download-artifact" not in upload_steps:
        problems.append("upload-sarif: no download-artifact step")
    sarif = (upload_steps.get("github/codeql-action/upload-sarif") or {}).get("with") or {}
    if sarif.get("category") != "benchbot":
        problems.append("upload-sarif: no github/codeql-action/upload-sarif step with category: benchbot")
    return problems


CACHE_DIR = "${{ runner.temp }}/benchbot-cache"
CACHE_KEY = "${{ secrets.BENCHBOT_CACHE_KEY }}"
KEY_PRESENT = "${{ steps.key.outputs.present == 'true' }}"


def cache_use_problems(steps: list[dict[str, Any]], save: bool) -> list[str]:
    """benchbot's persistent cache in a job. The review (``save`` false) restores it with
    ``actions/cache/restore`` (by its exact key: no ``restore-keys``, which would take the newest
    cache of a prefix, whoever saved it) before the benchbot step, which reads it through
    BENCHBOT_CACHE_DIR, and never saves one. The default branch's push workflow (``save``) starts
    from an empty folder (it never unpacks a cache someone else may have saved in the job that
    holds the key) and saves after benchbot. Never the combined ``actions/cache`` (which saves at
    the end of any run, a pull request's included). Both hand benchbot the secret
    BENCHBOT_CACHE_KEY, and restore or save only when a step found it (a fork's pull request has
    no secrets)."""
    problems = []
    uses = [str(s.get("uses", "")).split("@")[0] for s in steps]
    if "actions/cache" in uses:
        problems.append("actions/cache saves at the end of the job: use actions/cache/restore (and /save)")
    if "benchbot/benchbot" not in uses:
        return problems + ["no benchbot step"]
    bot = uses.index("benchbot/benchbot")
    env = steps[bot].get("env") or {}
    if env.get("BENCHBOT_CACHE_DIR") != CACHE_DIR:
        problems.append("the benchbot step does not use the cache folder (env BENCHBOT_CACHE_DIR)")
    if env.get("BENCHBOT_CACHE_KEY") != CACHE_KEY:
        problems.append(f"the benchbot step does not get BENCHBOT_CACHE_KEY: {CACHE_KEY}")
    restores = [i for i, u in enumerate(uses) if u == "actions/cache/restore"]
    saves = [i for i, u in enumerate(uses) if u == "actions/cache/save"]
    if save:
        if restores:
            problems.append("the job that saves the cache restores one (it must start empty)")
        if not saves or saves[0] < bot or (steps[saves[0]].get("with") or {}).get("path") != CACHE_DIR:
            problems.append(f"no actions/cache/save of {CACHE_DIR} after benchbot")
    else:
        if saves:
            problems.append("a pull request run saves the cache (only the default branch's push may)")
        if not restores:
            return problems + ["no actions/cache/restore step before benchbot"]
        if restores[0] > bot:
            problems.append("the cache is restored after benchbot ran")
        options = steps[restores[0]].get("with") or {}
        if options.get("path") != CACHE_DIR:
            problems.append(f"restore path is not {CACHE_DIR}")
        if "restore-keys" in options:
            problems.append("restore-keys: a prefix match takes the newest cache of the prefix, whoever saved it")
        if options.get("key") != "benchbot-cache-${{ runner.os }}-${{ github.event.pull_request.base.sha }}":
            problems.append(f"restore key {options.get('key')!r}, want the base commit's")
    for i in restores + saves:
        if steps[i].get("if") != KEY_PRESENT:
            problems.append(f"{uses[i]} does not depend on the key's presence (if: {KEY_PRESENT})")
    check = next((s for s in steps if s.get("id") == "key"), {})
    if (check.get("env") or {}).get("BENCHBOT_CACHE_KEY") != CACHE_KEY or "present=true" not in str(check.get("run")):
        problems.append("no step `key` telling whether BENCHBOT_CACHE_KEY is there (output present)")
    return problems


def secret_problems(workflow: dict[Any, Any], allowed: set[str]) -> list[str]:
    """Which jobs may see the cache secret: ``allowed`` only; no job sees any other secret."""
    problems = []
    for job_id, job in (workflow.get("jobs") or {}).items():
        text = json.dumps(job)
        names = set(re.findall(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)", text))
        if names - {"BENCHBOT_CACHE_KEY"}:
            problems.append(f"jobs.{job_id} reads secrets {sorted(names - {'BENCHBOT_CACHE_KEY'})}")
        if "BENCHBOT_CACHE_KEY" in text and job_id not in allowed:
            problems.append(f"jobs.{job_id} gets BENCHBOT_CACHE_KEY (only the cache and review jobs may)")
    if "secrets: inherit" in json.dumps(workflow) or "${{ secrets }}" in json.dumps(workflow):
        problems.append("all secrets handed on")
    return problems


def no_cache_problems(workflow: dict[Any, Any]) -> list[str]:
    """A workflow that runs pull-request code: no step touches benchbot's cache or any Actions cache."""
    problems = []
    for where, step in _steps(workflow):
        action = str(step.get("uses", "")).split("@")[0]
        if action.startswith("actions/cache"):
            problems.append(f"{where}: {action} (the job runs the pull request's code)")
        if "BENCHBOT_CACHE" in json.dumps(step):
            problems.append(f"{where}: names benchbot's cache")
    return problems


def cache_workflow_problems(workflow: dict[Any, Any]) -> list[str]:
    """The cache template: runs on pushes to the default branch only, reads the repo, saves."""
    problems = []
    on = triggers(workflow)
    if set(on) != {"push"} or set((on.get("push") or {}).get("branches") or []) != {"main"}:
        problems.append(f"triggers {on!r}, want only push to main")
    jobs = workflow.get("jobs") or {}
    if list(jobs) != ["warm"]:
        return problems + [f"jobs {list(jobs)}, want warm"]
    warm = jobs["warm"]
    if warm.get("permissions") != {"contents": "read"}:
        problems.append(f"warm permissions {warm.get('permissions')!r}")
    return problems + cache_use_problems(warm.get("steps") or [], save=True)


def action_problems(action: dict[Any, Any]) -> list[str]:
    """What action.yml must be: a composite action whose inputs reach bash only through env:."""
    problems = []
    runs = action.get("runs") or {}
    if runs.get("using") != "composite":
        problems.append("not a composite action")
    inputs = action.get("inputs") or {}
    want = {"command": "event", "path": ".", "config": "", "format": "", "sarif-file": "", "fail-on": "",
            "github-token": "${{ github.token }}", "python-version": "3.11"}
    for name, default in want.items():
        if name not in inputs:
            problems.append(f"missing input {name}")
        elif str(inputs[name].get("default")) != default:
            problems.append(f"input {name}: default {inputs[name].get('default')!r}, want {default!r}")
    if "sarif-file" not in (action.get("outputs") or {}):
        problems.append("missing output sarif-file")
    for where, step in _steps(action):
        if "run" in step and step.get("shell") != "bash":
            problems.append(f"{where}: run step without shell: bash")
    steps = [s for _, s in _steps(action)]
    if not any(str(s.get("uses", "")).startswith("actions/setup-python@") for s in steps):
        problems.append("no actions/setup-python step")
    install = [s for s in steps if "pip install" in str(s.get("run", ""))]
    if not install or (install[0].get("env") or {}).get("ACTION_PATH") != "${{ github.action_path }}":
        problems.append("no pip install step with ACTION_PATH: ${{ github.action_path }} in env")
    problems += pinning_problems(action)
    problems += run_expression_problems(action)
    problems += checkout_problems(action)
    return problems


def _step_using(steps: list[Any], action: str) -> list[dict[Any, Any]]:
    return [s for s in steps if isinstance(s, dict) and str(s.get("uses", "")).split("@")[0] == action]


def commands_workflow_problems(workflow: dict[Any, Any]) -> list[str]:
    """What the comment-commands template must do (on top of ``workflow_problems``): it runs with the base
    repository's token, so it must never check out or run the PR's code, nor let comment text into a step."""
    problems = []
    on = triggers(workflow)
    if set(on) != {"issue_comment"}:
        problems.append(f"triggers {sorted(on)}, want only issue_comment")
    types = set((on.get("issue_comment") or {}).get("types") or [])
    if types != {"created"}:
        problems.append(f"issue_comment types {sorted(types)}, want [created]")
    if "concurrency" in workflow:
        problems.append("workflow-level concurrency: a new comment would cancel a pending /bench (one pending per "
                        "group); put a concurrency group on each job")
    jobs = workflow.get("jobs") or {}
    if set(jobs) != {"commands", "lint"}:
        problems.append(f"jobs {sorted(jobs)}, want commands and lint")
    groups = {"commands": "benchbot-commands-${{ github.event.comment.id }}",
              "lint": "benchbot-review-${{ github.event.issue.number }}"}
    for name, group in groups.items():
        concurrency = (jobs.get(name) or {}).get("concurrency") or {}
        if concurrency.get("group") != group:
            problems.append(f"{name}: concurrency group {concurrency.get('group')!r}, want {group!r}")
        if concurrency.get("cancel-in-progress") is not False:
            problems.append(f"{name}: concurrency: cancel-in-progress is not false (a dispatch must not be cut "
                            "halfway)")
    for name in ("lint", "commands"):
        problems += _commands_job_problems(name, jobs.get(name) or {})
    for where, step in _steps(workflow):
        text = json.dumps(step)
        if "github.event.comment" in text or "github.event.issue.title" in text or "github.event.issue.body" in text:
            problems.append(f"{where}: comment or issue text reaches a step (benchbot reads the event file)")
        if re.search(r"\bgit\s+(?:-\S+\s+)*(?:checkout|switch|worktree|reset|merge|pull)\b", str(step.get("run", ""))):
            problems.append(f"{where}: puts the PR's files in the work tree (they must stay git objects)")
    return problems


def _commands_job_problems(name: str, job: dict[Any, Any]) -> list[str]:
    problems = []
    want = {"contents": "read", "pull-requests": "write", **({"actions": "write"} if name == "commands" else {})}
    if job.get("permissions") != want:
        problems.append(f"{name} permissions {job.get('permissions')!r}")
    condition = str(job.get("if", ""))
    for needle in ("github.event.issue.pull_request", "github.event.comment.user.type != 'Bot'"):
        if needle not in condition:
            problems.append(f"{name}: if: does not check {needle}")
    steps = job.get("steps") or []
    checkouts = _step_using(steps, "actions/checkout")
    if len(checkouts) != 1:
        problems.append(f"{len(checkouts)} actions/checkout steps, want 1 (the default branch)")
    for step in checkouts:
        options = step.get("with") or {}
        if "ref" in options or "repository" in options:
            problems.append("checkout names a ref or repository: it must check out the default branch only")
        if options.get("fetch-depth") != 0:
            problems.append("checkout: fetch-depth is not 0 (the PR's base commit must be in history)")
    fetches = [s for s in steps if isinstance(s, dict) and "refs/pull/${PR_NUMBER}/head" in str(s.get("run", ""))]
    if len(fetches) != 1 or (fetches[0].get("env") or {}).get("PR_NUMBER") != "${{ github.event.issue.number }}":
        problems.append("no step fetching refs/pull/${PR_NUMBER}/head with PR_NUMBER: ${{ github.event.issue.number }}")
    bots = _step_using(steps, "benchbot/benchbot")
    if len(bots) != 1 or (bots[0].get("with") or {}).get("command") != "event":
        problems.append("no benchbot/benchbot step with command: event")
    order = [steps.index(s) for s in (*checkouts[:1], *fetches[:1], *bots[:1])]
    if order != sorted(order):
        problems.append("steps out of order: checkout, fetch the PR head, then benchbot")
    return problems


BENCH_INPUTS = {"entry": True, "runner": True, "ref": True, "config-file": False, "test-name": False}
VALIDATED = "${{ needs.validate.outputs.%s }}"


def bench_workflow_problems(workflow: dict[Any, Any]) -> list[str]:
    """What the benchmark dispatch target must do (on top of ``workflow_problems``): no raw input reaches the
    self-hosted job, whose runner label is the validated one."""
    problems = []
    on = triggers(workflow)
    if set(on) != {"workflow_dispatch"}:
        problems.append(f"triggers {sorted(on)}, want only workflow_dispatch")
    inputs = (on.get("workflow_dispatch") or {}).get("inputs") or {}
    if set(inputs) != set(BENCH_INPUTS):
        problems.append(f"inputs {sorted(inputs)}, want {sorted(BENCH_INPUTS)}")
    for name, required in BENCH_INPUTS.items():
        spec = inputs.get(name) or {}
        if spec.get("type") != "string" or bool(spec.get("required", False)) is not required:
            problems.append(f"input {name}: want type: string, required: {str(required).lower()}")
    if workflow.get("run-name") != "bench ${{ inputs.test-name || inputs.entry }}":
        problems.append(f"run-name {workflow.get('run-name')!r} (benchbot finds the run by it)")
    concurrency = workflow.get("concurrency") or {}
    group = str(concurrency.get("group", ""))
    if "inputs.runner" not in group or "inputs.entry" not in group:
        problems.append(f"concurrency group {group!r} is not per runner label and entry")
    if concurrency.get("cancel-in-progress") is not False:
        problems.append("concurrency: cancel-in-progress is not false")
    jobs = workflow.get("jobs") or {}
    if set(jobs) != {"validate", "bench"}:
        problems.append(f"jobs {sorted(jobs)}, want validate and bench")
    validate, bench = jobs.get("validate") or {}, jobs.get("bench") or {}
    if validate.get("runs-on") != "ubuntu-latest":
        problems.append("validate must run on a GitHub-hosted runner (ubuntu-latest)")
    if "write" in (validate.get("permissions") or {}).values():
        problems.append("validate asks for a write permission")
    check = next((s for s in validate.get("steps") or [] if "ALLOWED_RUNNERS" in (s.get("env") or {})), None)
    if check is None:
        problems.append("validate: no step with ALLOWED_RUNNERS in env")
    for output in ("runner", "entries", "ref", "config-file"):
        if output not in (validate.get("outputs") or {}):
            problems.append(f"validate: no output {output}")
    if bench.get("needs") not in ("validate", ["validate"]):
        problems.append("bench does not need validate")
    if bench.get("runs-on") != VALIDATED % "runner":
        problems.append(f"bench runs-on {bench.get('runs-on')!r}, want the validated label {VALIDATED % 'runner'}")
    if bench.get("timeout-minutes") != 360:
        problems.append("bench: timeout-minutes is not 360")
    if bench.get("permissions") != {"contents": "read"}:
        problems.append(f"bench permissions {bench.get('permissions')!r}")
    if (bench.get("strategy") or {}).get("matrix") != {"entry": "${{ fromJSON(needs.validate.outputs.entries) }}"}:
        problems.append("bench: no matrix over the validated entries")
    if "inputs." in json.dumps(bench):
        problems.append("bench uses a raw input: only needs.validate.outputs may reach it")
    steps = bench.get("steps") or []
    checkout = (_step_using(steps, "actions/checkout") or [{}])[0].get("with") or {}
    if checkout.get("ref") != VALIDATED % "ref":
        problems.append(f"bench checkout ref {checkout.get('ref')!r}, want {VALIDATED % 'ref'}")
    runs = [s for s in steps if str(s.get("run", "")).strip() == "bash runners/entrypoint.sh"]
    want_env = {"ENTRY": "${{ matrix.entry }}", "CONFIG_FILE": VALIDATED % "config-file",
                "RUNNER_LABEL": VALIDATED % "runner"}
    if len(runs) != 1 or {k: (runs[0].get("env") or {}).get(k) for k in want_env} != want_env:
        problems.append(f"no `bash runners/entrypoint.sh` step with env {want_env}")
    return problems + no_cache_problems(workflow) + secret_problems(workflow, set())


def version_comment_problems(path: Path) -> list[str]:
    """Every SHA-pinned ``uses:`` line says which release it is (``# vX.Y.Z``)."""
    problems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = USES_LINE_RE.match(line)
        if not m or "@" not in m["ref"]:
            continue
        if SHA_RE.match(m["ref"].rpartition("@")[2]) and not VERSION_COMMENT_RE.match(m["comment"] or ""):
            problems.append(f"line {n}: {m['ref']} has no '# vX.Y.Z' comment")
    return problems


# --- the tests ------------------------------------------------------------------------------------------

def test_files_exist() -> None:
    assert ACTION.is_file()
    assert REVIEW in WORKFLOWS


@pytest.mark.parametrize("path", ALL_FILES, ids=_ids(ALL_FILES))
def test_zizmor_reports_nothing(path: Path) -> None:
    findings = [f for f in zizmor_findings(path) if not accepted(path, f)]
    assert findings == [], f"zizmor findings for {path.relative_to(ROOT)}:\n{_describe(findings)}"
    # as a user runs it (`zizmor --offline FILE`, the template's own ignore comments honoured): nothing
    assert zizmor_findings(path, ignores=True) == []


def test_ignore_comments_are_only_the_accepted_ones() -> None:
    """A `# zizmor: ignore[...]` comment in a template must be one of ACCEPTED_ZIZMOR."""
    allowed = {(file, ident) for file, ident, _ in ACCEPTED_ZIZMOR}
    for path in [*WORKFLOWS, ACTION]:
        rel = str(path.relative_to(ROOT))
        for ident in re.findall(r"#\s*zizmor:\s*ignore\[([^\]]*)\]", path.read_text()):
            for one in ident.split(","):
                assert (rel, one.strip()) in allowed, f"{rel}: unexpected zizmor ignore {one.strip()!r}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_workflow_matches_schema(path: Path) -> None:
    proc = check_jsonschema("vendor.github-workflows", path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_matches_schema() -> None:
    proc = check_jsonschema("vendor.github-actions", ACTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_workflow_structure(path: Path) -> None:
    assert workflow_problems(load(path)) == []


def test_review_workflow_structure() -> None:
    workflow = load(REVIEW)
    on = triggers(workflow)
    assert "pull_request" in on and "pull_request_target" not in on
    assert workflow.get("permissions", {}) == {}
    assert review_workflow_problems(workflow) == []


def test_cache_workflow_structure() -> None:
    assert cache_workflow_problems(load(CACHE)) == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_only_the_cache_and_review_jobs_get_the_cache_key(path: Path) -> None:
    allowed = {CACHE: {"warm"}, REVIEW: {"review"}}.get(path, set())
    assert secret_problems(load(path), allowed) == []


def test_the_bench_workflow_has_no_cache_and_no_secret() -> None:
    """The bench workflow runs the pull request's code: it neither restores nor saves any cache
    and sees no secret, and its header says why."""
    workflow = load(BENCH)
    assert no_cache_problems(workflow) == [] and secret_problems(workflow, set()) == []
    text = BENCH.read_text(encoding="utf-8")
    assert "no job here restores or saves it, and none gets the BENCHBOT_CACHE_KEY secret" in text


def test_cache_checks_catch_a_poisonable_restore_and_a_leaked_key() -> None:
    review = load(REVIEW)
    steps = review["jobs"]["review"]["steps"]
    restore = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache/restore@"))
    restore["with"]["restore-keys"] = "benchbot-cache-${{ runner.os }}-\n"
    del restore["if"]
    bot = next(s for s in steps if str(s.get("uses", "")).startswith("benchbot/"))
    del bot["env"]["BENCHBOT_CACHE_KEY"]
    problems = "\n".join(review_workflow_problems(review))
    for expected in ("restore-keys: a prefix match", "does not depend on the key's presence",
                     "does not get BENCHBOT_CACHE_KEY"):
        assert expected in problems, problems
    cache = load(CACHE)
    cache["jobs"]["warm"]["steps"].insert(1, dict(restore))
    assert "restores one (it must start empty)" in "\n".join(cache_workflow_problems(cache))
    bench = load(BENCH)
    job = bench["jobs"]["bench"]
    job["steps"].insert(0, {"uses": "actions/cache/restore@" + "0" * 40, "with": {"path": CACHE_DIR, "key": "k"}})
    job["steps"][-1]["env"]["BENCHBOT_CACHE_KEY"] = CACHE_KEY
    job["steps"][-1]["env"]["HF_TOKEN"] = "${{ secrets.HF_TOKEN }}"
    problems = "\n".join(no_cache_problems(bench) + secret_problems(bench, set()))
    for expected in ("actions/cache/restore (the job runs", "names benchbot's cache", "gets BENCHBOT_CACHE_KEY",
                     "reads secrets ['HF_TOKEN']"):
        assert expected in problems, problems


def test_cache_checks_catch_a_pull_request_that_saves() -> None:
    review = load(REVIEW)
    steps = review["jobs"]["review"]["steps"]
    bot = next(i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("benchbot/"))
    steps.insert(bot + 1, {"uses": "actions/cache/save@" + "0" * 40, "with": {"path": CACHE_DIR, "key": "k"}})
    assert "a pull request run saves the cache" in "\n".join(review_workflow_problems(review))
    steps[bot - 1]["uses"] = "actions/cache@" + "0" * 40
    assert "actions/cache saves at the end" in "\n".join(review_workflow_problems(review))
    cache = load(CACHE)
    cache["on"] = {"pull_request": None}
    del cache["jobs"]["warm"]["steps"][-1]
    problems = "\n".join(cache_workflow_problems(cache))
    assert "want only push to main" in problems and "no actions/cache/save" in problems


def test_review_workflow_queues_with_the_lint_command() -> None:
    workflow = load(REVIEW)
    workflow["concurrency"]["cancel-in-progress"] = True
    workflow["concurrency"]["group"] = "benchbot-${{ github.event.pull_request.number }}"
    problems = "\n".join(review_workflow_problems(workflow))
    assert "cancel-in-progress is not false" in problems and "the /lint job shares" in problems


def test_action_structure() -> None:
    assert action_problems(load(ACTION)) == []


@pytest.mark.parametrize("path", ALL_FILES, ids=_ids(ALL_FILES))
def test_pins_name_their_release(path: Path) -> None:
    assert version_comment_problems(path) == []


def test_action_validates_command_and_fail_on() -> None:
    run = next(s["run"] for _, s in _steps(load(ACTION)) if s.get("id") == "benchbot")
    assert re.search(r'case "\$BENCHBOT_COMMAND" in\s+lint\|event\)', run)
    assert re.search(r'case "\$BENCHBOT_FAIL_ON" in\s+""\|error\|warning\|info\)', run)
    assert run.count("::error") >= 2
    assert "args=(python -P -m bot" in run and '"${args[@]}"' in run


# --- the checks can fail --------------------------------------------------------------------------------

BAD_WORKFLOW = """\
name: bad
on:
  pull_request_target:
    types: [opened]
permissions: write-all
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo ${{ github.event.pull_request.title }}
"""


def test_checks_flag_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(BAD_WORKFLOW, encoding="utf-8")

    idents = {f["ident"] for f in zizmor_findings(bad)}
    assert {"dangerous-triggers", "template-injection", "unpinned-uses", "artipacked"} <= idents, idents

    problems = "\n".join(workflow_problems(load(bad)))
    for expected in ("pull_request_target", "top-level permissions", "jobs.greet: no permissions",
                     "not pinned", "${{ }} expression", "persist-credentials"):
        assert expected in problems, problems
    assert review_workflow_problems(load(bad))
    assert version_comment_problems(bad) == []  # @v4 is not a SHA pin; pinning_problems reports it


def test_checks_flag_a_bad_action(tmp_path: Path) -> None:
    bad = tmp_path / "action.yml"
    bad.write_text(
        "name: bad\ndescription: bad\ninputs:\n  who:\n    description: who\n"
        "runs:\n  using: composite\n  steps:\n"
        "    - uses: actions/setup-python@0000000000000000000000000000000000000000\n"
        "    - run: echo ${{ inputs.who }}\n      shell: bash\n",
        encoding="utf-8",
    )
    assert "template-injection" in {f["ident"] for f in zizmor_findings(bad)}
    problems = "\n".join(action_problems(load(bad)))
    assert "${{ }} expression" in problems and "missing input command" in problems, problems
    assert version_comment_problems(bad) == ["line 9: actions/setup-python@" + "0" * 40 + " has no '# vX.Y.Z' comment"]


def test_schema_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: pull_request\njobs:\n  j:\n    runs-on: ubuntu-latest\n    stepz: []\n", encoding="utf-8")
    assert check_jsonschema("vendor.github-workflows", bad).returncode != 0


# --- the comment-commands and bench templates ---------------------------------------------------------------

@pytest.mark.parametrize("rel, ident, annotation", sorted(ACCEPTED_ZIZMOR),
                         ids=[f"{Path(rel).name}-{ident}" for rel, ident, _ in sorted(ACCEPTED_ZIZMOR)])
def test_accepted_zizmor_findings_still_occur(rel: str, ident: str, annotation: str) -> None:
    """Each accepted finding is still reported, once: otherwise drop it from ACCEPTED_ZIZMOR."""
    found = [f for f in zizmor_findings(ROOT / rel) if f.get("ident") == ident and annotation in _annotations(f)]
    assert len(found) == 1, f"{rel}: {ident} ({annotation}) reported {len(found)} times; update ACCEPTED_ZIZMOR"


def test_commands_workflow_structure() -> None:
    assert COMMANDS in WORKFLOWS
    assert commands_workflow_problems(load(COMMANDS)) == []


def test_bench_workflow_structure() -> None:
    assert BENCH in WORKFLOWS
    assert bench_workflow_problems(load(BENCH)) == []
    assert (ROOT / "runners" / "entrypoint.sh").is_file()


def _validate_step() -> dict[Any, Any]:
    steps = load(BENCH)["jobs"]["validate"]["steps"]
    return next(s for s in steps if s.get("id") == "check")


GOOD_BENCH_INPUTS = {"IN_RUNNER": "mi325x", "IN_ENTRY": "kimik2.5-int4-mi325x-vllm-mtp", "IN_REF": "a" * 40,
                     "IN_CONFIG_FILE": "configs/amd-master.yaml"}


@pytest.mark.parametrize("changes, ok", [
    ({}, True),
    ({"IN_CONFIG_FILE": ""}, True),
    ({"IN_RUNNER": "self-hosted"}, False),
    ({"IN_RUNNER": "mi325x mi355x"}, False),
    ({"IN_RUNNER": "mi325x\nmi355x"}, False),
    ({"IN_RUNNER": ""}, False),
    ({"IN_REF": "main"}, False),
    ({"IN_REF": "A" * 40}, False),
    ({"IN_REF": "a" * 39}, False),
    ({"IN_ENTRY": "x;touch pwned"}, False),
    ({"IN_ENTRY": "$(touch pwned)"}, False),
    ({"IN_ENTRY": "a b"}, True),
    ({"IN_ENTRY": "a  b"}, False),
    ({"IN_ENTRY": " ".join(["e"] * 33)}, False),
    ({"IN_ENTRY": 'a"b'}, False),
    ({"IN_ENTRY": "a" * 129}, False),
    ({"IN_CONFIG_FILE": "../secrets.yaml"}, False),
    ({"IN_CONFIG_FILE": "/etc/x.yaml"}, False),
    ({"IN_CONFIG_FILE": "configs/amd-master.json"}, False),
])
def test_bench_validate_step_runs(tmp_path: Path, changes: dict[str, str], ok: bool) -> None:
    """The validate job's script, run in bash with the step's env: bad inputs fail it, good ones become outputs."""
    step = _validate_step()
    output = tmp_path / "output"
    output.touch()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GITHUB_OUTPUT": str(output),
           "ALLOWED_RUNNERS": step["env"]["ALLOWED_RUNNERS"], **GOOD_BENCH_INPUTS, **changes}
    proc = subprocess.run([shutil.which("bash") or "/bin/bash", "-c", step["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=30, check=False)
    assert not (tmp_path / "pwned").exists()
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        values = dict(line.split("=", 1) for line in output.read_text().splitlines())
        entries = json.dumps(env["IN_ENTRY"].split(), separators=(",", ":"))
        assert values == {"runner": env["IN_RUNNER"], "entries": entries, "ref": env["IN_REF"],
                          "config-file": env["IN_CONFIG_FILE"]}
    else:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert output.read_text() == ""
        assert "::error" in proc.stdout
        assert all(line.startswith(("::error", "benchbot bench:")) for line in proc.stdout.splitlines())


BAD_COMMANDS = """\
name: bad commands
on:
  issue_comment:
    types: [created, edited]
permissions: {}
concurrency:
  group: commands
  cancel-in-progress: true
jobs:
  commands:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          ref: refs/pull/${{ github.event.issue.number }}/head
          persist-credentials: false
      - env:
          BODY: ${{ github.event.comment.body }}
        run: bash runners/launch.sh
"""


def test_checks_flag_a_bad_commands_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(BAD_COMMANDS, encoding="utf-8")
    problems = "\n".join(commands_workflow_problems(load(bad)))
    for expected in ("types ['created', 'edited']", "workflow-level concurrency", "cancel-in-progress is not false",
                     "commands permissions", "commands: if: does not check github.event.issue.pull_request",
                     "must check out the default branch only", "fetch-depth is not 0",
                     "no step fetching refs/pull", "comment or issue text reaches a step", "no benchbot/benchbot"):
        assert expected in problems, problems
    workflow = load(COMMANDS)
    fetch = next(s for s in workflow["jobs"]["commands"]["steps"] if "refs/pull" in str(s.get("run", "")))
    fetch["run"] += "git checkout refs/remotes/pr/head\n"
    assert any("work tree" in p for p in commands_workflow_problems(workflow))
    # Only the exact accepted finding is let through: the same trigger in another file is still reported.
    assert [f["ident"] for f in zizmor_findings(bad) if not accepted(bad, f)].count("dangerous-triggers") == 1


def test_checks_flag_a_bad_bench_workflow() -> None:
    workflow = load(BENCH)
    bench = workflow["jobs"]["bench"]
    bench["runs-on"] = "${{ inputs.runner }}"
    bench["steps"][0]["with"]["ref"] = "${{ inputs.ref }}"
    bench["permissions"]["actions"] = "write"
    del workflow["jobs"]["validate"]["steps"][0]["env"]["ALLOWED_RUNNERS"]
    workflow["concurrency"]["cancel-in-progress"] = True
    workflow["run-name"] = "bench"
    problems = "\n".join(bench_workflow_problems(workflow))
    for expected in ("bench runs-on '${{ inputs.runner }}'", "bench checkout ref", "bench permissions",
                     "no step with ALLOWED_RUNNERS", "cancel-in-progress is not false", "run-name",
                     "bench uses a raw input"):
        assert expected in problems, problems
