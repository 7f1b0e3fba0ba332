"""Only what a change introduces: findings compared with a base revision or a baseline file.

Pure: no git, no files. Findings are matched by fingerprint (rule + stable subject, no line
numbers), so a finding that moved lines, or whose message gained one more entry, is the same
finding. The base is mapped through the change's renames first (``git mv`` of a script or a
folder keeps its findings). Consequences count on both sides: a base cause that the head
reports as the consequence of another cause is not "fixed", and a head cause that was a base
consequence is not "new" (the problem was there, attributed to another cause).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from bot.findings import Finding, plural

BASELINE_VERSION = 1


@dataclass(frozen=True)
class Comparison:
    new: list[Finding]  # head causes the base did not have: what is reported
    old: list[Finding]  # head causes already on the base: counted, not reported
    fixed: tuple[str, ...] = ()  # fingerprints of base causes the head no longer has (sorted)
    rev: str | None = None  # what was compared with: a git revision...
    baseline: str | None = None  # ... or a baseline file

    @property
    def where(self) -> str:
        """``on HEAD``, ``in .benchbot-baseline.json``: where the old findings are."""
        if self.rev is not None:
            return f"on {self.rev}"
        return f"in {self.baseline}" if self.baseline is not None else "before"

    def summary(self) -> str:
        """``18 findings already on HEAD not shown; fixes 5`` (empty when there is nothing to say)."""
        parts = []
        if self.old:
            parts.append(f"{plural(len(self.old), 'finding')} already {self.where} not shown")
        if self.fixed:
            parts.append(f"fixes {len(self.fixed)}")
        return "; ".join(parts)

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"rev": self.rev}
        if self.baseline is not None:
            out["file"] = self.baseline
        out.update({"new": len(self.new), "existing": len(self.old), "fixed": list(self.fixed)})
        return out


def _split(head: list[Finding], causes: set[str], consequences: set[str]) -> tuple[list[Finding], list[Finding]]:
    known = causes | consequences
    return [f for f in head if f.fingerprint not in known], [f for f in head if f.fingerprint in known]


def _fixed(before: Iterable[str], head: list[Finding]) -> tuple[str, ...]:
    now = {f.fingerprint for f in head} | {c.fingerprint for f in head for c in f.consequences}
    return tuple(sorted(set(before) - now))


def compare(head: list[Finding], base: list[Finding], renames: Mapping[str, str] | None = None) -> Comparison:
    """Head findings split into new and old against the base; base causes the head fixed.

    ``renames`` maps base paths to head paths (old -> new), as ``git diff -M`` reports them."""
    moved = [f.moved(renames or {}) for f in base]
    causes = {f.fingerprint for f in moved}
    consequences = {c.fingerprint for f in moved for c in f.consequences}
    new, old = _split(head, causes, consequences)
    return Comparison(new, old, _fixed(causes, head))


def with_change(compared: Comparison, findings: list[Finding]) -> Comparison:
    """The comparison plus findings of change-level rules (``changelog-missing``): they judge
    the change itself, so they are new by definition (a base has none to match)."""
    if not findings:
        return compared
    new = sorted(compared.new + [f for f in findings if f.fingerprint not in {g.fingerprint for g in compared.new}],
                 key=lambda f: f.sort_key())
    return replace(compared, new=new)


def against_baseline(head: list[Finding], known: set[str], file: str | None = None) -> Comparison:
    """Head findings whose fingerprint is not in the baseline are new; baseline entries no
    longer found (stale) are reported as fixed."""
    new, old = _split(head, known, set())
    return Comparison(new, old, _fixed(known, head), baseline=file)


# ------------------------------------------------------------------ baseline files

def write_baseline(findings: Iterable[Finding]) -> str:
    """The baseline file of these findings: stable bytes (sorted, one entry per fingerprint)."""
    entries: dict[str, dict[str, str]] = {}
    for f in findings:
        entries.setdefault(f.fingerprint, {"fingerprint": f.fingerprint, "rule": f.rule, "path": f.path,
                                           "message": f.message})
    rows = sorted(entries.values(), key=lambda e: (e["path"], e["rule"], e["fingerprint"]))
    doc = {"version": BASELINE_VERSION, "tool": "benchbot", "fingerprints": rows}
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def read_baseline(text: str, path: str) -> set[str]:
    """The fingerprints of a baseline file; ValueError naming the file and what is wrong."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: not a benchbot baseline: invalid JSON ({exc.msg})") \
            from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a benchbot baseline: expected a JSON object")
    if doc.get("tool") != "benchbot":
        raise ValueError(f"{path}: not a benchbot baseline: \"tool\" is {doc.get('tool')!r}, not 'benchbot'")
    if doc.get("version") != BASELINE_VERSION:
        raise ValueError(f"{path}: unsupported baseline version {doc.get('version')!r} (this benchbot reads "
                         f"version {BASELINE_VERSION}; write it again with --write-baseline)")
    rows = doc.get("fingerprints")
    if not isinstance(rows, list):
        raise ValueError(f"{path}: not a benchbot baseline: \"fingerprints\" must be a list")
    out: set[str] = set()
    for i, row in enumerate(rows):
        fp = row.get("fingerprint") if isinstance(row, dict) else None
        if not isinstance(fp, str) or not fp:
            raise ValueError(f"{path}: fingerprints[{i}] has no \"fingerprint\" string")
        out.add(fp)
    return out
