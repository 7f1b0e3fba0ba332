"""The stable JSON contract of DESIGN.md (``version: 1``)."""

from __future__ import annotations

import json
from typing import Any

from bot.findings import Finding
from bot.report import Stats


def as_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "code": f.code,
        "severity": f.severity.label,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "message": f.message,
        "related": [{"path": r.path, "line": r.line, "note": r.note} for r in f.related],
        "entries": list(f.entries),
        "fix": {"description": f.fix.description, "diff": f.fix.diff, "safe": f.fix.safe} if f.fix else None,
        "fingerprint": f.fingerprint,
    }


def render(findings: list[Finding], stats: Stats, root: str) -> str:
    doc = {
        "version": 1,
        "root": root,
        "findings": [as_dict(f) for f in findings],
        "stats": {"files": stats.files, "entries": stats.entries, "launchers": stats.launchers,
                  "scripts": stats.scripts, "seconds": round(stats.seconds, 4)},
    }
    return json.dumps(doc, indent=2) + "\n"
