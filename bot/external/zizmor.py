"""zizmor (https://docs.zizmor.sh), the security checker of GitHub Actions, as benchbot findings.

Run as ``zizmor --offline --no-config --no-ignores --format json --no-exit-codes --persona P
FILES`` in the workspace (``bot.external.places``): offline (no token, no network), and blind to
the repository's own zizmor configuration and ``# zizmor: ignore[...]`` comments, which
``bot.workflow_checks`` honours itself as suppressions, from the base in a pull request (a
change cannot switch off its own gate).

One zizmor finding is one benchbot finding ``zizmor/<audit>``:
- severity: High -> error, Medium -> warning, Low and Informational -> info; the confidence is
  in the message when it is not high;
- the place: the primary location's first line and column (zizmor counts from 0);
- the message: the audit's description, then the primary annotation;
- related: the other shown locations with their annotations;
- the key (fingerprint): file, the route of the primary location with steps named (not
  numbered), and what the location points at (the expression or action reference of a
  sub-feature, else the annotation); never a line number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.external.places import Places, Workspace
from bot.external.tools import Ran, json_items
from bot.findings import Finding, Related, Severity

SEVERITY = {"high": Severity.ERROR, "medium": Severity.WARNING, "low": Severity.INFO, "informational": Severity.INFO,
            "unknown": Severity.INFO}
PERSONAS = ("regular", "pedantic", "auditor")
_PARSE_FAILED = re.compile(r"failed to parse input: (.*)")


def argv(exe: str, files: Sequence[str], persona: str, min_severity: str | None, min_confidence: str | None
         ) -> list[str]:
    out = [exe, "--offline", "--no-config", "--no-ignores", "--format", "json", "--no-exit-codes",
           "--persona", persona]
    if min_severity:
        out += ["--min-severity", min_severity]
    if min_confidence:
        out += ["--min-confidence", min_confidence]
    return out + ["--", *files]


def findings(ran: Ran, ws: Workspace, texts: Mapping[str, str]) -> tuple[list[tuple[Finding, int]], list[str]]:
    """The findings of one run with the last line of each one's primary location (a ``# zizmor:
    ignore[...]`` comment anywhere from its first to its last line covers it, as in zizmor), and
    notes (what it could not read, or why it gave nothing)."""
    notes = [f"zizmor skipped a file it could not read: {m.group(1)[:200]}"
             for m in _PARSE_FAILED.finditer(ran.stderr)]
    items, failed = json_items(ran, "zizmor", (0,))  # --no-exit-codes: 0 with or without findings
    if failed is not None:
        return [], [failed]
    places: dict[str, Places] = {}
    out: list[tuple[Finding, int]] = []
    for item in items:
        f = _finding(item, ws, texts, places)
        if f is not None:
            out.append(f)
    return out, notes


def _finding(item: Any, ws: Workspace, texts: Mapping[str, str], places: dict[str, Places]
             ) -> tuple[Finding, int] | None:
    if not isinstance(item, dict) or not isinstance(item.get("ident"), str):
        return None
    ident = item["ident"]
    locations = [loc for loc in item.get("locations", []) if isinstance(loc, dict)]
    primary = next((loc for loc in locations if _sym(loc).get("kind") == "Primary"), None)
    if primary is None:
        return None
    path = _path(primary, ws)
    if path is None or path not in texts:
        return None
    got = item.get("determinations")
    det: dict[str, Any] = got if isinstance(got, dict) else {}
    severity = SEVERITY.get(str(det.get("severity", "unknown")).lower(), Severity.INFO)
    confidence = str(det.get("confidence", "")).lower()
    line, col = _point(primary)
    end, _ = _point(primary, "end_point")
    sym = _sym(primary)
    annotation = str(sym.get("annotation", "")).strip()
    desc = str(item.get("desc", ident)).strip()
    message = f"{desc}: {annotation}" if annotation else desc
    if confidence and confidence != "high":
        message += f" (zizmor's confidence: {confidence})"
    where = places.setdefault(path, Places(texts[path]))
    route = sym.get("route", {}).get("route", []) if isinstance(sym.get("route"), dict) else []
    subject = _fragment(sym) or annotation
    key = f"{path}|{where.route(route) if isinstance(route, list) else ''}|{subject}"
    related = []
    for loc in locations:
        if loc is primary or _sym(loc).get("kind") != "Related":
            continue
        rpath = _path(loc, ws) or path
        rline, _ = _point(loc)
        related.append(Related(rpath, rline, str(_sym(loc).get("annotation", "")).strip()[:300]))
    return Finding(f"zizmor/{ident}", "zizmor", severity, path, line, col, message[:2000], tuple(related),
                   key=key), max(end, line)


def _sym(loc: Mapping[str, Any]) -> Mapping[str, Any]:
    sym = loc.get("symbolic")
    return sym if isinstance(sym, dict) else {}


def _path(loc: Mapping[str, Any], ws: Workspace) -> str | None:
    key = _sym(loc).get("key")
    local = key.get("Local") if isinstance(key, dict) else None
    verbatim = local.get("verbatim_path") if isinstance(local, dict) else None
    return ws.relative(verbatim) if isinstance(verbatim, str) else None


def _point(loc: Mapping[str, Any], which: str = "start_point") -> tuple[int, int]:
    """1-based (line, column) of a location's start (or ``end_point``)."""
    concrete = loc.get("concrete")
    where = concrete.get("location") if isinstance(concrete, dict) else None
    start = where.get(which) if isinstance(where, dict) else None
    if not isinstance(start, dict):
        return 1, 1
    row, col = start.get("row"), start.get("column")
    return (row + 1 if isinstance(row, int) else 1), (col + 1 if isinstance(col, int) else 1)


def _fragment(sym: Mapping[str, Any]) -> str:
    """What a sub-feature location points at (``github.event.issue.title``, ``owner/action@v1``)."""
    kind = sym.get("feature_kind")
    sub = kind.get("Subfeature") if isinstance(kind, dict) else None
    frag = sub.get("fragment") if isinstance(sub, dict) else None
    if isinstance(frag, dict):
        for value in frag.values():
            if isinstance(value, str):
                return " ".join(value.split())[:200]
    return ""
