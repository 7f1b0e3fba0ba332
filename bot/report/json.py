"""The stable JSON contract of DESIGN.md (``version: 1``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bot.findings import Finding, Related
from bot.report import Stats, coverage_dict

if TYPE_CHECKING:
    from bot.newonly import Comparison


def related_dict(r: Related) -> dict[str, Any]:
    """A related location; a consequence also names its rule and its own fingerprint."""
    out: dict[str, Any] = {"path": r.path, "line": r.line, "note": r.note}
    if r.is_consequence:
        out["rule"] = r.rule
        out["fingerprint"] = r.fingerprint
    return out


def as_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "code": f.code,
        "severity": f.severity.label,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "message": f.message,
        "related": [related_dict(r) for r in f.related],
        "entries": list(f.entries),
        "fix": {"description": f.fix.description, "diff": f.fix.diff, "safe": f.fix.safe} if f.fix else None,
        "fingerprint": f.fingerprint,
    }


def render(findings: list[Finding], stats: Stats, root: str, *, compared: Comparison | None = None) -> str:
    """With ``compared`` (``--new-from-rev``, ``--baseline``), ``findings`` are the new ones and a
    ``baseline`` object says what they were compared with: ``{"rev", "new", "existing", "fixed"}``."""
    doc: dict[str, Any] = {
        "version": 1,
        "root": root,
        "findings": [as_dict(f) for f in findings],
        "stats": {"files": stats.files, "entries": stats.entries, "launchers": stats.launchers,
                  "scripts": stats.scripts, "seconds": round(stats.seconds, 4)},
    }
    coverage = coverage_dict(stats)
    if coverage is not None:
        doc["stats"]["coverage"] = coverage
    if compared is not None:
        doc["baseline"] = compared.as_json()
    return json.dumps(doc, indent=2) + "\n"
