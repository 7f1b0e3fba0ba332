"""SARIF 2.1.0: valid against the official schema, GitHub code-scanning ready."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bot import rules
from bot.findings import Fix, Related, Severity
from bot.report import sarif
from tests.conftest import EXAMPLE, ROOT, copy_repo, git
from tests.report import SEED_RULES, STATS, finding, run

# ../shared/data beside the checkout (as in CI); a clone elsewhere finds it through
# BENCHBOT_SHARED or the workplace's /work/shared.
_CANDIDATES = [Path(p) / "data" / "sarif-schema-2.1.0.json"
               for p in (os.environ.get("BENCHBOT_SHARED", ""), ROOT.parent / "shared", "/work/shared") if p]
SCHEMA = next((c for c in _CANDIDATES if c.is_file()), _CANDIDATES[0])


def validate(doc: dict[str, Any]) -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"the official SARIF schema is not at {SCHEMA} (see /work/shared/data/README.md)")
    import jsonschema

    validator = jsonschema.Draft4Validator(json.loads(SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def seed_sarif(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "sarif", *extra)
    assert code == 1
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_seed_sarif_is_valid_and_complete(capsys: pytest.CaptureFixture[str]) -> None:
    doc = seed_sarif(capsys)
    validate(doc)
    assert doc["version"] == "2.1.0"
    assert len(doc["runs"]) == 1
    run_ = doc["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "benchbot"
    import importlib.metadata

    assert driver["version"] == importlib.metadata.version("benchbot")
    # every registered rule, in registry order, so that ruleIndex is stable
    assert [r["id"] for r in driver["rules"]] == list(rules.RULES)
    got = sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                  r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"]) for r in run_["results"])
    assert got == [
        ("ignored-variant", "runners/launch_mi300x-amds.sh", 32, "error"),
        ("ignored-variant", "runners/launch_mi325x-amds.sh", 26, "error"),
    ]
    for r in run_["results"]:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert r["message"]["text"]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == EXAMPLE.as_uri() + "/"


def test_fingerprints_and_fixes_match_the_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    doc = seed_sarif(capsys)
    _, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "json")
    by_print = {f["fingerprint"]: f for f in json.loads(out)["findings"]}
    results = doc["runs"][0]["results"]
    assert len(results) == len(by_print) == 2
    for r in results:
        f = by_print[r["partialFingerprints"]["benchbotFingerprint/v1"]]
        assert (r["ruleId"], r["message"]["text"]) == (f["rule"], f["message"])
        region = r["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (f["line"], f["column"])
        assert [(x["physicalLocation"]["artifactLocation"]["uri"], x["physicalLocation"]["region"]["startLine"],
                 x["message"]["text"]) for x in r.get("relatedLocations", [])] == \
            [(x["path"], x["line"], x["note"]) for x in f["related"]]
        assert r["properties"].get("entries", []) == f["entries"]
        if f["fix"]:
            assert r["properties"]["fix"] == f["fix"]
            assert "fixes" not in r  # the diff is in properties, not as (unchecked) SARIF replacements


def test_rule_descriptors() -> None:
    doc = sarif.document([], STATS)
    validate(doc)
    descriptors = {d["id"]: d for d in doc["runs"][0]["tool"]["driver"]["rules"]}
    iv = descriptors["ignored-variant"]
    assert iv["name"] == "IgnoredVariant"
    assert iv["shortDescription"]["text"] == rules.RULES["ignored-variant"].SUMMARY
    assert iv["fullDescription"]["text"].startswith("For every config entry with a variant")
    assert "Why is this bad" not in iv["fullDescription"]["text"]
    assert iv["help"]["text"].startswith("ignored-variant: ")
    for heading in ("### What it does", "### Why is this bad?", "### Example", "### Fix"):
        assert heading in iv["help"]["markdown"]
    assert iv["defaultConfiguration"]["level"] == "error"
    assert descriptors["dead-script"]["defaultConfiguration"]["level"] == "warning"
    assert descriptors["dispatch-bound"]["defaultConfiguration"]["level"] == "note"
    assert "BB103" in iv["properties"]["tags"]
    assert sarif.camel_case("launcher-rejects-entry") == "LauncherRejectsEntry"


def test_help_uri_is_the_rule_page(capsys: pytest.CaptureFixture[str]) -> None:
    doc = seed_sarif(capsys)
    validate(doc)  # helpUri is a URI the official schema accepts
    for d in doc["runs"][0]["tool"]["driver"]["rules"]:
        assert d["helpUri"] == f"{sarif.HELP_URI_BASE}{d['id']}.md"
        assert d["helpUri"].startswith("https://github.com/benchbot/benchbot/blob/main/docs/rules/")
        # the page the URL names is in the repo (committed, generated from the docstring)
        assert (ROOT / "docs" / "rules" / f"{d['id']}.md").is_file()


def test_crafted_findings_stay_valid() -> None:
    fs = [
        finding("odd dir/50% [x].sh", 0, 0, "whole file", severity=Severity.INFO, rule="dispatch-bound",
                code="BB901"),
        finding("a.sh", 2, 1, "m", rule="not-registered", code="BB999",
                related=(Related("b.yaml", 0, "file-level note"),), fix=Fix("d", "--- a/a.sh\n+++ b/a.sh\n", True)),
    ]
    doc = sarif.document(fs, STATS, root_uri="file:///tmp/repo")
    validate(doc)
    first, second = doc["runs"][0]["results"]
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "odd%20dir/50%25%20%5Bx%5D.sh"
    assert "region" not in loc  # line 0: the whole file
    assert first["level"] == "note"
    assert "ruleIndex" not in second  # not in the registry: no index rather than a wrong one
    assert second["properties"]["fix"]["safe"] is True
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///tmp/repo/"


def test_git_revision_has_no_root_uri(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    code, out, _ = run(capsys, "lint", str(repo), "--rev", "HEAD", *SEED_RULES, "--format", "sarif")
    assert code == 1
    doc = json.loads(out)
    validate(doc)
    assert "uri" not in doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]
    assert len(doc["runs"][0]["results"]) == 2


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "benchbot.sarif"
    code, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "sarif", "--output", str(target))
    assert code == 1
    assert out.startswith(f"benchbot: wrote the sarif report to {target}: 2 findings")
    assert len(out.splitlines()) == 1
    validate(json.loads(target.read_text()))
    nowhere = str(tmp_path / "no" / "x")
    code, _, err = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "sarif", "--output", nowhere)
    assert code == 2 and "cannot write" in err


def test_the_schema_check_is_not_vacuous() -> None:
    doc = sarif.document([finding()], STATS)
    result = doc["runs"][0]["results"][0]
    result["level"] = "info"  # not a SARIF level
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(AssertionError, match="startLine|level"):
        validate(doc)
