"""Where a finding's inline comment goes, and what it says. Pure functions.

One comment per root cause, at most one bot comment per line: the causes that land on one line
share its comment, their consequences listed inside. A cause sits on the first of:

1. its own line, if the pull request added it;
2. a related line the pull request added (the new script, the new entry), preferring one no
   other comment of this review sits on;
3. a line the pull request deleted (the left side), when the cause is a deletion: a deleted line
   of a file the finding involves (its own file, a related file, a file it names), preferring a
   line whose text names what the finding names (a runner node, a label, a script);
4. the whole file (``subject_type: file``), when the pull request changed a file the finding
   involves but left no line to sit on (a rename, a removal, a file too large for a patch).

Only a cause the pull request touched nowhere stays summary-only, and the summary says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot import rules
from bot.external.names import help_uri, is_external
from bot.findings import Finding
from bot.github.diff import Changes, hunk_start
from bot.report import markdown as md
from bot.report import paragraph, rule_sections

Link = Callable[[str, int], str]
_TICKED = re.compile(r"`([^`\n]{1,200})`")
_PATHLIKE = re.compile(r"[A-Za-z0-9._-]+/[A-Za-z0-9._/-]+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{2,}")


@dataclass(frozen=True)
class Anchor:
    path: str
    line: int | None  # None: the whole file
    side: str = "RIGHT"  # LEFT: a deleted line, numbered as on the base

    @property
    def key(self) -> tuple[str, int | None, str]:
        return (self.path, self.line, self.side)

    def label(self) -> str:
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}" + (" (deleted)" if self.side == "LEFT" else "")


@dataclass(frozen=True)
class Suggestion:
    start: int
    end: int
    text: str  # the replacement for lines start..end


def suggestion(f: Finding, path: str, visible: frozenset[int]) -> Suggestion | None:
    """The finding's fix as a GitHub suggestion on ``path``: only a one-file, one-block
    change whose lines are all inside the diff."""
    if f.fix is None:
        return None
    diff = f.fix.diff.splitlines()
    files = [ln for ln in diff if ln.startswith("+++ ")]
    if len(files) != 1 or files[0][4:].strip() != f"b/{path}":
        return None
    hunks = [i for i, ln in enumerate(diff) if ln.startswith("@@")]
    if len(hunks) != 1:
        return None
    header = hunk_start(diff[hunks[0]])
    if header is None:
        return None
    old = header[0]
    removed: list[int] = []
    added: list[str] = []
    before: tuple[int, str] | None = None  # the context line just above the change
    block_done = False
    for ln in diff[hunks[0] + 1:]:
        if ln.startswith("\\"):
            continue
        tag, text = ln[:1], ln[1:]
        if tag in "+-" and block_done:
            return None  # two separate changes: not one suggestion
        if tag == "-":
            removed.append(old)
            old += 1
        elif tag == "+":
            added.append(text)
        else:
            if removed or added:
                block_done = True
            else:
                before = (old, text)
            old += 1
    if removed:
        start, end, replacement = removed[0], removed[-1], added
    elif before is not None:
        start = end = before[0]
        replacement = [before[1], *added]
    else:
        return None
    if not all(n in visible for n in range(start, end + 1)):
        return None
    return Suggestion(start, end, "\n".join(replacement))


def offered(sug: Suggestion) -> bool:
    """A suggestion applies its text as it is: one that would need escaping is not offered."""
    return md.inert(sug.text) == sug.text


def names(f: Finding) -> set[str]:
    """What a finding names: code spans of its message and notes, its key's parts, its paths."""
    out: set[str] = set()
    for text in [f.message, *(r.note for r in f.related)]:
        out.update(m.strip() for m in _TICKED.findall(text))
    out.update(p for p in re.split(r"[|,]", f.key) if p)
    out.update(w.rstrip(".,;:") for w in _PATHLIKE.findall(f.message))
    out.update([f.path, *(r.path for r in f.related)])
    return {n for n in out if len(n) >= 3}


def involved(f: Finding, changes: Changes) -> list[str]:
    """The changed files (head paths, as GitHub lists them) a finding involves, its own first."""
    said = names(f)
    order = [f.path, *(r.path for r in f.related)]
    out: list[str] = []
    for path in order:
        if path in changes.files and path not in out:
            out.append(path)
    for path, fl in changes.files.items():
        if path not in out and (path in said or (fl.previous is not None and fl.previous in said)):
            out.append(path)
    return out


def _deleted_line(f: Finding, changes: Changes, paths: Iterable[str], exact: bool = False) -> Anchor | None:
    """A deleted line of ``paths`` that names what the finding names, else (unless ``exact``) the first."""
    words = {w for n in names(f) for w in _WORD.findall(n)} | names(f)
    first: Anchor | None = None
    for path in paths:
        for line, text in changes.files[path].deleted:
            if first is None and not exact:
                first = Anchor(path, line, "LEFT")
            if any(re.search(rf"(?<![A-Za-z0-9_-]){re.escape(w)}(?![A-Za-z0-9_])", text) for w in words):
                return Anchor(path, line, "LEFT")
    return first


def anchor(f: Finding, changes: Changes, taken: frozenset[tuple[str, int | None, str]] = frozenset()) -> Anchor | None:
    """Where on the pull request a cause's comment sits (see the module docstring); None: nowhere."""
    if changes.added(f.path, f.line):
        return Anchor(f.path, f.line)
    lines = [Anchor(r.path, r.line) for r in f.related if changes.added(r.path, r.line)]
    if lines:
        free = [at for at in lines if at.key not in taken]
        return (free or lines)[0]
    paths = involved(f, changes)
    at = _deleted_line(f, changes, paths)
    if at is not None:
        return at
    named = _deleted_line(f, changes, [p for p in changes.files if p not in paths], exact=True)
    if named is not None:
        return named
    return Anchor(paths[0], None) if paths else None


def body(causes: list[Finding], at: Anchor, sug: tuple[Finding, Suggestion] | None, link: Link | None,
         marker: str) -> str:
    """One comment for the causes that sit at ``at``, errors first (then by rule code): each with its
    message, where it is when that is not this line, its consequences, the lines it involves and its
    own fix. ``sug``: the cause whose fix is offered as the comment's GitHub suggestion (at most one);
    another cause's fix is in the summary comment, and its note says so."""
    out = [marker]
    owner, suggested = sug if sug is not None and offered(sug[1]) else (None, None)
    causes = sorted(causes, key=lambda f: (-f.severity, f.code))
    for i, f in enumerate(causes):
        if i:
            out += ["", "---", ""]
        out += [f"{md.ICON[f.severity]} **{md.escape(f.code)} {md.code(f.rule)}** ({f.severity.label})", ""]
        if (f.path, f.line) != (at.path, at.line) or at.side == "LEFT":
            out.append(f"{md.where(f.path, f.line, link)} (not changed here): {md.escape(f.message)}")
        else:
            out.append(md.escape(f.message))
        consequences = [r for r in f.related if r.is_consequence]
        others = [r for r in f.related if not r.is_consequence and (r.path, r.line) != (at.path, at.line)]
        if others:
            out.append("")
            out += [f"- {md.where(r.path, r.line, link)}: {md.escape(r.note)}" for r in others]
        if consequences:
            out += ["", f"Because of it ({len(consequences)}):"]
            out += [f"- {md.where(r.path, r.line, link)}: {md.escape(r.note)}" for r in consequences]
        if f.fix is None:
            continue
        if f is owner and suggested is not None:
            fence = md.code_fence(suggested.text)
            out += ["", f"Suggested fix (apply the suggestion): {md.escape(f.fix.description)}", "",
                    f"{fence}suggestion", suggested.text, fence]
        else:
            out += ["", f"Proposed fix: {md.escape(f.fix.description)} (the diff is in the summary comment)"]
    for f in causes[:1] if len(causes) == 1 else []:
        module = rules.RULES.get(f.rule)
        why = rule_sections(module).get("Why is this bad?") if module else None
        if why:
            out += ["", f"<details><summary>Why is this bad?</summary>\n\n{md.escape(paragraph(why))}\n\n</details>"]
    ids = sorted({f.rule for f in causes})
    explain = " · ".join(f"[{r}]({help_uri(r)})" if is_external(r) else f"`benchbot explain {r}`" for r in ids)
    out += ["", f"<sub>{explain} · silence with `# benchbot: ignore[{ids[0]}] reason`</sub>"]
    return "\n".join(out)
