"""SARIF 2.1.0 for code scanning (GitHub's upload-sarif, IDE viewers).

One run; the driver lists every registered rule (not only those with results), so that
``ruleIndex`` is stable and a viewer can show the documentation of any rule (``help``, and
``helpUri``: its page under docs/rules/). Paths are repo-relative URIs against ``%SRCROOT%``;
``partialFingerprints`` carries the finding's line-independent fingerprint, so alerts follow
code as it moves.

Fixes are not written as SARIF ``fixes``: a benchbot fix is a unified diff, GitHub ignores
``fixes``, and turning hunks into exact SARIF regions is easy to get subtly wrong. The diff
goes into ``result.properties.fix`` instead, next to the entries the finding is about.
"""

from __future__ import annotations

import importlib.metadata
import json
import urllib.parse
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from bot.external.names import help_uri as external_help_uri
from bot.external.names import is_external
from bot.findings import Finding, Severity
from bot.report import Stats, paragraph, rule_doc, rule_markdown, rule_sections
from bot.rules import RULES

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL = "benchbot"
FINGERPRINT = "benchbotFingerprint/v1"
SRCROOT = "%SRCROOT%"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Each rule's page (docs/rules/<id>.md, generated from its docstring): the rule's helpUri.
HELP_URI_BASE = "https://github.com/benchbot/benchbot/blob/main/docs/rules/"


def render(findings: list[Finding], stats: Stats, *, root_uri: str | None = None,
           rules: Mapping[str, ModuleType] | None = None) -> str:
    """The SARIF log as JSON text.

    ``root_uri``: the ``file://`` URI of the linted directory when it is known (a work
    tree), ending in ``/``; ``rules``: the rule registry (default: all registered rules).
    """
    return json.dumps(document(findings, stats, root_uri=root_uri, rules=rules), indent=2) + "\n"


def document(findings: list[Finding], stats: Stats, *, root_uri: str | None = None,
             rules: Mapping[str, ModuleType] | None = None) -> dict[str, Any]:
    if rules is None:
        rules = RULES
    index = {rid: i for i, rid in enumerate(rules)}
    version, homepage = _tool_info()
    driver: dict[str, Any] = {"name": TOOL, "version": version, "semanticVersion": version}
    if homepage:
        driver["informationUri"] = homepage
    driver["rules"] = [rule_descriptor(module) for module in rules.values()]
    for rid in sorted({f.rule for f in findings if f.rule not in index and is_external(f.rule)}):
        index[rid] = len(driver["rules"])  # zizmor's and actionlint's rules: those with results
        driver["rules"].append(external_descriptor(rid))
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "results": [_result(f, index) for f in findings],
        "columnKind": "unicodeCodePoints",
        "properties": {"stats": {"files": stats.files, "entries": stats.entries, "launchers": stats.launchers,
                                 "scripts": stats.scripts, "seconds": round(stats.seconds, 4)}},
    }
    srcroot: dict[str, Any] = {"description": {"text": "The root of the linted benchmark repository."}}
    if root_uri is not None:
        srcroot["uri"] = root_uri if root_uri.endswith("/") else root_uri + "/"
    run["originalUriBaseIds"] = {SRCROOT: srcroot}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def rule_descriptor(module: ModuleType) -> dict[str, Any]:
    sections = rule_sections(module)
    what = paragraph(sections.get("What it does:", "")) or module.SUMMARY
    severity: Severity = module.SEVERITY
    return {
        "id": module.ID,
        "name": camel_case(module.ID),
        "shortDescription": {"text": module.SUMMARY},
        "fullDescription": {"text": what},
        "helpUri": help_uri(module.ID),
        "help": {"text": rule_doc(module), "markdown": rule_markdown(module)},
        "defaultConfiguration": {"level": LEVEL[severity]},
        "properties": {"tags": _tags(module.CODE), "code": module.CODE},
    }


def external_descriptor(rule_id: str) -> dict[str, Any]:
    """An external checker's rule (``zizmor/artipacked``): its documentation is the tool's own."""
    tool, _, sub = rule_id.partition("/")
    what = f"{tool}: {sub}" + (" (zizmor audit)" if tool == "zizmor" else " (actionlint check)")
    return {
        "id": rule_id,
        "name": camel_case(rule_id.replace("/", "-")),
        "shortDescription": {"text": what},
        "helpUri": external_help_uri(rule_id),
        "properties": {"tags": [TOOL, tool, "workflows"], "code": tool},
    }


def help_uri(rule_id: str) -> str:
    """The URL of a rule's documentation page."""
    return f"{HELP_URI_BASE}{rule_id}.md"


def _tags(code: str) -> list[str]:
    family = {"BB0": "syntax", "BB1": "dispatch", "BB9": "analysis"}.get(code[:3])
    return [TOOL, code] + ([family] if family else [])


def camel_case(rule_id: str) -> str:
    """``ignored-variant`` -> ``IgnoredVariant``."""
    return "".join(part[:1].upper() + part[1:] for part in rule_id.replace("_", "-").split("-") if part)


def _result(f: Finding, index: Mapping[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": f.rule}
    if f.rule in index:
        out["ruleIndex"] = index[f.rule]
    out["level"] = LEVEL[f.severity]
    out["message"] = {"text": f.message}
    out["locations"] = [_location(f.path, f.line, f.column)]
    if f.related:
        out["relatedLocations"] = [{**_location(r.path, r.line), "id": i, "message": {"text": r.note}}
                                   for i, r in enumerate(f.related)]
    out["partialFingerprints"] = {FINGERPRINT: f.fingerprint}
    props: dict[str, Any] = {"code": f.code}
    if f.entries:
        props["entries"] = list(f.entries)
    if f.fix is not None:
        props["fix"] = {"description": f.fix.description, "diff": f.fix.diff, "safe": f.fix.safe}
    out["properties"] = props
    return out


def _location(path: str, line: int, column: int = 0) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": urllib.parse.quote(path, safe="/"), "uriBaseId": SRCROOT}}
    if line >= 1:
        region: dict[str, Any] = {"startLine": line}
        if column >= 1:
            region["startColumn"] = column
        physical["region"] = region
    return {"physicalLocation": physical}


def _tool_info() -> tuple[str, str | None]:
    """The installed distribution's version and home page (``[project.urls]``), if any."""
    try:
        meta = importlib.metadata.metadata(TOOL)
        version = importlib.metadata.version(TOOL)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown", None
    homepage = next(iter(meta.get_all("Home-page") or []), None)
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source", "documentation"):
            homepage = homepage or url.strip()
    return version, homepage
