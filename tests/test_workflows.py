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
ALL_FILES = [ACTION, *WORKFLOWS]

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
USES_LINE_RE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?:#\s*(?P<comment>.*))?$")
VERSION_COMMENT_RE = re.compile(r"^v\d+(\.\d+){0,2}\b")
PR_NUMBER = "github.event.pull_request.number"


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


def zizmor_findings(path: Path, persona: str = "pedantic") -> list[dict[str, Any]]:
    """zizmor's findings for ``path``, offline, ignoring any zizmor configuration and ignore comments."""
    proc = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-config", "--no-ignores", "--no-exit-codes", "--no-progress",
         f"--persona={persona}", "--format", "json", str(path)],
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
    if "pull_request_target" in on:
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
    if (workflow.get("concurrency") or {}).get("cancel-in-progress") is not True:
        problems.append("concurrency: cancel-in-progress is not true")
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
    upload_steps = dict((str(s.get("uses", "")).split("@")[0], s) for s in upload.get("steps") or [])
    if "actions/download-artifact" not in upload_steps:
        problems.append("upload-sarif: no download-artifact step")
    sarif = (upload_steps.get("github/codeql-action/upload-sarif") or {}).get("with") or {}
    if sarif.get("category") != "benchbot":
        problems.append("upload-sarif: no github/codeql-action/upload-sarif step with category: benchbot")
    return problems


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
    findings = zizmor_findings(path)
    assert findings == [], f"zizmor findings for {path.relative_to(ROOT)}:\n{_describe(findings)}"


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
    assert "args=(python -m bot" in run and '"${args[@]}"' in run


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
