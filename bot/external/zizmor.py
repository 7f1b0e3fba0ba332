"""zizmor (https://docs.zizmor.sh), the security checker of GitHub Actions, as benchbot findings.

Run as ``zizmor --offline --no-ignores --format json --no-exit-codes --persona P [--config C |
--no-config] FILES`` in the workspace (``bot.external.places``): offline (no token, no network),
and blind to ``# zizmor: ignore[...]`` comments, which ``bot.workflow_checks`` honours itself as
suppressions, from the base in a pull request (a change cannot switch off its own gate).

The repository's zizmor configuration (``zizmor.yml``, ``zizmor.yaml``, ``.github/zizmor.yml``,
``.github/zizmor.yaml``, the first found, as zizmor discovers it from the repository's root) is
read from the policy tree, the base in a pull request: zizmor reads it (``--config``: disabled
audits, audit settings, severity changes), and its ``rules.<audit>.ignore`` entries
(``ci.yml``, ``ci.yml:12``, ``ci.yml:12:7``), which ``--no-ignores`` turns off in zizmor, are
applied here as zizmor applies them: a finding any of whose locations is in that file (at that
line, and column) is dropped. A configuration zizmor rejects is its error, in a note.

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

from bot.external.places import ZIZMOR_CONFIG, Places, Workspace
from bot.external.tools import Ran, json_items
from bot.findings import Finding, Related, Severity
from bot.repo.load.yamlfile import YList, YMap, load

SEVERITY = {"high": Severity.ERROR, "medium": Severity.WARNING, "low": Severity.INFO, "informational": Severity.INFO,
            "unknown": Severity.INFO}
PERSONAS = ("regular", "pedantic", "auditor")
_PARSE_FAILED = re.compile(r"failed to parse input: (.*)")


CONFIG = ZIZMOR_CONFIG
MAX_IGNORES = 10_000  # ignore entries read from a configuration
_RULE = re.compile(r"([^:]+\.ya?ml)(?::([1-9][0-9]{0,8}))?(?::([1-9][0-9]{0,8}))?\Z")  # zizmor's WorkflowRule

# audit -> (file name, line or None, column or None): zizmor's ``rules.<audit>.ignore``
Ignores = dict[str, list[tuple[str, int | None, int | None]]]


def argv(exe: str, files: Sequence[str], persona: str, min_severity: str | None, min_confidence: str | None,
         config: str | None = None) -> list[str]:
    out = [exe, "--offline", *(("--config", config) if config else ("--no-config",)), "--no-ignores",
           "--format", "json", "--no-exit-codes", "--persona", persona]
    if min_severity:
        out += ["--min-severity", min_severity]
    if min_confidence:
        out += ["--min-confidence", min_confidence]
    return out + ["--", *files]


def ignores(text: str) -> Ignores:
    """The ``rules.<audit>.ignore`` entries of a zizmor configuration (at most ``MAX_IGNORES``;
    an entry of another shape is zizmor's to reject, and nothing here)."""
    data, err = load(text)
    rules = data.get("rules") if err is None and isinstance(data, YMap) else None
    out: Ignores = {}
    if not isinstance(rules, YMap):
        return out
    left = MAX_IGNORES
    for audit, rule in rules.items():
        entries = rule.get("ignore") if isinstance(rule, YMap) else None
        for entry in entries if isinstance(entries, YList) else ():
            m = _RULE.match(entry) if isinstance(entry, str) and left > 0 else None
            if m is not None:
                left -= 1
                out.setdefault(str(audit), []).append(
                    (m.group(1), int(m.group(2)) if m.group(2) else None, int(m.group(3)) if m.group(3) else None))
    return out


def _ignored(item: Mapping[str, Any], rules: Ignores, ws: Workspace) -> bool:
    """Whether a configuration ignore entry covers the finding: any of its locations in the
    entry's file (by base name), at its line and column when it gives them (zizmor's rule)."""
    entries = rules.get(str(item.get("ident")))
    if not entries:
        return False
    for loc in item.get("locations", []):
        path = _path(loc, ws) if isinstance(loc, dict) else None
        if path is None:
            continue
        name = path.rsplit("/", 1)[-1]
        line, col = _point(loc)
        if any(f == name and (want_line is None or want_line == line) and (want_col is None or want_col == col)
               for f, want_line, want_col in entries):
            return True
    return False


def findings(ran: Ran, ws: Workspace, texts: Mapping[str, str], ignore: Ignores | None = None
             ) -> tuple[list[tuple[Finding, int]], list[str]]:
    """The findings of one run with the last line of each one's primary location (a ``# zizmor:
    ignore[...]`` comment anywhere from its first to its last line covers it, as in zizmor), and
    notes (what it could not read, or why it gave nothing). ``ignore``: the configuration's
    ignore entries (``ignores``)."""
    notes = [f"zizmor skipped a file it could not read: {m.group(1)[:200]}"
             for m in _PARSE_FAILED.finditer(ran.stderr)]
    items, failed = json_items(ran, "zizmor", (0,))  # --no-exit-codes: 0 with or without findings
    if failed is not None:
        return [], [failed]
    places: dict[str, Places] = {}
    out: list[tuple[Finding, int]] = []
    for item in items:
        if ignore and isinstance(item, dict) and _ignored(item, ignore, ws):
            continue
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
