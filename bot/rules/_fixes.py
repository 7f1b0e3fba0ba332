"""Fixes shared by rules: the variant-suffix patch for a launcher (copied from a sibling
launcher that already dispatches the variant) and one-value edits of YAML files.

Every fix is computed here as whole-file edits (``Fix.of``); nothing is written. A fix is
*safe* only when re-evaluating the patched file proves it: the affected entries now run the
script they should, and every other entry through that launcher runs what it ran before.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass

from bot.findings import Edit, Fix
from bot.repo.env.profile import Variant
from bot.repo.facts import Facts
from bot.rules._variants import Miss, suffix_for, when_matches
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import known


@dataclass(frozen=True)
class Sibling:
    """The lines of another launcher that a fix copies."""

    path: str
    line: int
    end: int
    var: str
    snippet: str

    @property
    def lines_text(self) -> str:
        where = f"line {self.line}" if self.line == self.end else f"lines {self.line}-{self.end}"
        return f"{where} of {self.path}"


def _statement_lines(script: ir.Script, line: int) -> tuple[int, int] | None:
    """First and last line of the top-level statement that contains ``line``."""
    for stmt in script.body:
        pos = stmt.pos
        if pos.line <= line <= max(pos.end_line, pos.line):
            return pos.line, max(pos.end_line, pos.line)
    return None


def assignment(script: ir.Script, var: str, source: str) -> tuple[int, int, str] | None:
    """(first line, last line, text) of the first top-level assignment to ``var``."""
    lines = source.splitlines()
    for stmt in script.body:
        assigns: tuple[ir.Assign, ...] = ()
        if isinstance(stmt, ir.Command) and not stmt.words:
            assigns = stmt.assigns
        elif isinstance(stmt, ir.Decl):
            assigns = stmt.assigns
        if any(a.name == var and a.value is not None for a in assigns):
            first, last = stmt.pos.line, max(stmt.pos.end_line, stmt.pos.line)
            return first, last, "\n".join(lines[first - 1 : last])
    return None


def _family(launcher: str) -> str:
    """``runners/launch_mi300x-amds.sh`` -> ``amds`` (the cluster a launcher is for)."""
    stem = posixpath.basename(launcher).rsplit(".", 1)[0]
    return stem.rsplit("-", 1)[-1] if "-" in stem else ""


def _sibling(facts: Facts, miss: Miss, variant: Variant) -> Sibling | None:
    """The launcher whose assignment of the suffix variable the fix copies: one that
    dispatches the variant script for some entry, preferring the same cluster family
    (``-amds``) and then the most similar name; guarded (``${X:-}``) snippets first."""
    best: list[tuple[tuple[int, int, float, str], Sibling]] = []
    seen: set[str] = set()
    for run in facts.runs:
        if run.real == miss.launcher or not when_matches(variant, run.entry, run.point):
            continue
        suffix = suffix_for(variant, run.entry, run.point)
        for d in run.dispatches:
            script = known(d.target) or ""
            if not suffix or not script.endswith(suffix + ".sh") or d.built_at.path in seen:
                continue
            for var, value in d.var_parts:
                if value != suffix:
                    continue
                sib = facts.script(d.built_at.path)
                text = facts.tree.text(d.built_at.path)
                if sib is None or text is None:
                    continue
                found = assignment(sib, var, text)
                if found is None:
                    continue
                seen.add(d.built_at.path)
                first, last, snippet = found
                same_family = int(_family(d.built_at.path) == _family(miss.launcher) != "")
                guarded = int(nounset_safe(snippet) == snippet)
                ratio = difflib.SequenceMatcher(None, posixpath.basename(d.built_at.path),
                                                posixpath.basename(miss.launcher)).ratio()
                best.append(((-same_family, -guarded, -ratio, d.built_at.path),
                             Sibling(d.built_at.path, first, last, var, snippet)))
    if not best:
        return None
    best.sort(key=lambda t: t[0])
    return best[0][1]


# $NAME or ${NAME} (no operator): the references ``set -u`` aborts on when NAME is unset.
_PLAIN_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def nounset_safe(snippet: str) -> str:
    """The snippet with plain ``$X`` / ``${X}`` written ``${X:-}``: safe under ``set -u``."""
    return _PLAIN_REF.sub(lambda m: "${" + (m.group(1) or m.group(2)) + ":-}", snippet)


_SH_END = re.compile(r"\.sh(?=[\"'\s\\);|&]|$)")


def _eol(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def propose_fix(facts: Facts, miss: Miss) -> tuple[Fix | None, Sibling | None]:
    """A patch to the launcher line that builds the path without the variant: append the
    suffix variable, computed as the sibling launcher computes it (or the profile's
    template). Returns (fix, the sibling whose lines it copies)."""
    suffixed = [v for v in miss.variants if v.suffix and v.var]
    if len(suffixed) != 1 or len(miss.variants) != 1:
        return None, None
    variant = suffixed[0]
    sibling = _sibling(facts, miss, variant)
    if sibling is not None:
        var, snippet = sibling.var, sibling.snippet
    elif variant.snippet:
        var, snippet = variant.var, variant.snippet
    else:
        return None, None
    path = miss.launcher
    data = facts.tree.read(path)
    script = facts.script(path)
    if data is None or script is None:
        return None, sibling
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, sibling  # never rewrite bytes we cannot read back exactly
    lines = text.splitlines(keepends=True)
    line_no = miss.built_at.line
    if not 0 < line_no <= len(lines):
        return None, sibling
    target = lines[line_no - 1]
    m = _SH_END.search(target, max(miss.built_at.col - 1, 0))
    if m is None:
        return None, sibling
    new_lines = list(lines)
    new_lines[line_no - 1] = target[: m.start()] + "${" + var + "}" + target[m.start():]
    safe_snippet = nounset_safe(snippet)
    own = assignment(script, var, text)
    if own is None:
        span = _statement_lines(script, line_no)
        at = (span[0] if span else line_no) - 1
        eol = _eol(lines[at])
        indent = re.match(r"[ \t]*", lines[at]).group(0)  # type: ignore[union-attr]
        block = "".join((indent + s.strip() if i == 0 else s) + eol for i, s in enumerate(safe_snippet.splitlines()))
        new_lines[at:at] = [block, eol] if indent == "" else [block]
    new_text = "".join(new_lines)
    ok, unchanged = _check(facts, miss, new_text)
    if not ok:
        return None, sibling
    if own is not None:
        copied = f" (line {own[0]} computes it already)"
    elif sibling is not None:
        copied = f"; computed as {sibling.lines_text} computes it"
        if safe_snippet != snippet:
            copied += ", with ${NAME:-} references so that it is safe under set -u"
    else:
        copied = f"; computed by the profile's template for {variant.name}"
    desc = f"Append ${{{var}}} to the script path {miss.launcher}:{line_no} dispatches{copied}"
    if not unchanged:
        desc += "; it also changes what other entries run through this launcher: review it"
    return Fix.of(desc, [Edit(path, text, new_text)], safe=unchanged), sibling


def _check(facts: Facts, miss: Miss, new_text: str) -> tuple[bool, bool]:
    """(every affected entry now runs its variant script, every other run is unchanged)."""
    affected = {(id(run)) for run, _ in miss.runs}
    for run, expected in miss.runs:
        got = facts.resolve_with(run.launcher, new_text.encode(), run.entry, run.point, run.node, run.label)
        if expected not in {known(d.target) for d in got}:
            return False, False
    for run in facts.runs:
        if run.real != miss.launcher or id(run) in affected:
            continue
        got = facts.resolve_with(run.launcher, new_text.encode(), run.entry, run.point, run.node, run.label)
        if {known(d.target) for d in got} != {known(d.target) for d in run.dispatches}:
            return True, False
    return True, True
