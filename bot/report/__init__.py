"""Output formats. Each renders findings and stats to a string; only the CLI prints.

Formats never read files or the environment: what they need from the repo (source text for
code frames, links) is passed in as callables by the CLI.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType

from bot.findings import Finding, Severity
from bot.findings import Stats as Stats  # re-exported: the figures of a lint, rendered here
from bot.findings import plural as plural

# The text of a repo-relative path, or None when it is not a (readable) file.
Source = Callable[[str], str | None]

# Characters repository text (file names, entry names, messages quoting it) must not put on
# a terminal or in a log as they are: C0 controls but tab (ESC starts terminal sequences, CR
# rewrites a line), DEL, C1 controls, and the bidirectional marks, embeddings, overrides and
# isolates that make text read differently from what it is (U+061C, U+200E, U+200F,
# U+202A-U+202E, U+2066-U+2069; the "Trojan Source" characters).
_INVISIBLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# The same but CR and LF, for formats that escape line breaks their own way.
_INVISIBLE_INLINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control or bidi character shown as an escape (``\\x1b``, ``\\u202e``);
    with ``lines``, CR and LF are left for the format to escape its own way."""
    return (_INVISIBLE_INLINE if lines else _INVISIBLE).sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"




def count_text(findings: Iterable[Finding]) -> str:
    """``4 findings (2 errors, 2 warnings)``; ``0 findings`` when there are none."""
    findings = list(findings)
    counts = Counter(f.severity for f in findings)
    parts = [plural(counts[s], s.label) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
    what = plural(len(findings), "finding")
    return f"{what} ({', '.join(parts)})" if parts else what


def checked_text(stats: Stats) -> str:
    """``6 entries, 3 launchers, 7 scripts``; when not every entry reached a script,
    ``208 entries (123 analysed, 77 handed to srtctl, 8 unknown), 19 launchers, 151 scripts,
    241 recipes``: what follows "checked" is only what was."""
    entries = f"{stats.entries} {'entry' if stats.entries == 1 else 'entries'}"
    cov = stats.coverage
    if cov is not None and cov.analysed != stats.entries:
        parts = [f"{cov.analysed} analysed"]
        parts += [f"{n} handed to {tool}" for tool, n in cov.handed]
        parts += [f"{n} {what}" for n, what in ((cov.rejected, "rejected"), (cov.unknown, "unknown")) if n]
        entries += f" ({', '.join(parts)})"
    text = f"{entries}, {plural(stats.launchers, 'launcher')}, {plural(stats.scripts, 'script')}"
    if cov is not None and cov.recipes_checked:
        text += f", {plural(cov.recipes_checked, 'recipe')}"
    return text


def unchecked_text(stats: Stats) -> str:
    """``1 entry not read (syntax error): x, 162 recipes from srtctl's repo, not checked``
    (empty when everything was)."""
    cov = stats.coverage
    if cov is None:
        return ""
    parts = [unread_text(stats)] if cov.unread else []
    parts += [f"{plural(n, 'recipe')} from {tool}'s repo, not checked" for tool, n in cov.recipes_external if n]
    return ", ".join(parts)


UNREAD_NAMES = 5  # entry names a summary line shows of those not read


def unread_text(stats: Stats, name: Callable[[str], str] = visible) -> str:
    """``2 entries not read (syntax error): a, b``: the entries of master configs that did not
    load whole and were not read (``bot.repo.load.recover``), named where their keys can be read
    (``name`` renders one: escaped for the format); empty when there are none."""
    cov = stats.coverage
    if cov is None or not cov.unread:
        return ""
    text = f"{cov.unread} {'entry' if cov.unread == 1 else 'entries'} not read (syntax error)"
    shown = cov.unread_names[:UNREAD_NAMES]
    if shown:
        text += ": " + ", ".join(name(n) for n in shown)
        if cov.unread > len(shown):
            text += f" and {cov.unread - len(shown)} more"
    return text


def coverage_dict(stats: Stats) -> dict[str, object] | None:
    """The coverage counts for the JSON report (None without them); ``unread`` only when some
    entries were not read."""
    cov = stats.coverage
    if cov is None:
        return None
    out: dict[str, object] = {
        "analysed": cov.analysed, "handed": dict(cov.handed), "rejected": cov.rejected, "unknown": cov.unknown,
        "recipes": {"checked": cov.recipes_checked, "missing": cov.recipes_missing,
                    "external": dict(cov.recipes_external)}}
    if cov.unread:
        out["unread"] = {"count": cov.unread, "entries": list(cov.unread_names)}
    return out


# ------------------------------------------------------------ rule documentation ----

SECTIONS = ("What it does:", "Why is this bad?", "Example:", "Fix:")
_SECTION_RE = re.compile(r"^(What it does:|Why is this bad\?|Example:|Fix:)\s*$")


def rule_doc(module: ModuleType) -> str:
    """The rule's whole docstring, dedented (what ``benchbot explain`` prints)."""
    return inspect.cleandoc(module.__doc__ or "")


def rule_sections(module: ModuleType) -> dict[str, str]:
    """The documented sections of a rule (keys from SECTIONS), each body dedented."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in rule_doc(module).splitlines():
        m = _SECTION_RE.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: inspect.cleandoc("\n".join(body)) for name, body in out.items()}


def paragraph(text: str) -> str:
    """The first paragraph of a text, its lines joined by single spaces."""
    first = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(line.strip() for line in first.splitlines())


def rule_markdown(module: ModuleType) -> str:
    """The rule's documentation as markdown: a title line, then one heading per section."""
    doc = rule_doc(module)
    title = doc.splitlines()[0] if doc else module.ID
    parts = [f"**{module.ID}** ({module.CODE}): {title.split(':', 1)[-1].strip()}"]
    for name, body in rule_sections(module).items():
        parts.append(f"### {name.rstrip(':')}\n\n{body}")
    return "\n\n".join(parts) + "\n"


# ``literal`` (the docstrings' RST-style inline code) and a fence line (```sh ... ```).
_LITERAL_RE = re.compile(r"``([^`\n]+?)``")
_FENCE_RE = re.compile(r"^\s*```")


def rule_text(module: ModuleType) -> str:
    """The rule's documentation as plain text for a terminal (``benchbot explain``).

    Inline ``literals`` lose their backticks (the words stand as written); fenced examples
    lose their fences and are indented four more spaces, their code kept exactly.
    """
    out: list[str] = []
    in_code = after_code = False
    for line in rule_doc(module).splitlines():
        if _FENCE_RE.match(line):
            in_code = not in_code
            after_code = not in_code
            continue
        if in_code:
            out.append("    " + line if line.strip() else "")
            continue
        if after_code and line.strip():
            out.append("")  # prose right after an example: a blank line sets the code apart
        after_code = False
        out.append(_LITERAL_RE.sub(r"\1", line))
    return "\n".join(out)


def _markdown_body(text: str) -> str:
    """A docstring section as markdown: ``literal`` becomes `literal` outside fences."""
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        if _FENCE_RE.match(line):
            in_code = not in_code
            out.append(line)
        else:
            out.append(line if in_code else _LITERAL_RE.sub(r"`\1`", line))
    return "\n".join(out)


def rule_page(module: ModuleType) -> str:
    """The rule's page under docs/rules/ (markdown), made from its docstring alone."""
    doc = rule_doc(module)
    title = doc.splitlines()[0].split(":", 1)[-1].strip() if doc else module.SUMMARY
    source = module.__name__.replace(".", "/") + ".py"
    severity: Severity = module.SEVERITY
    parts = [
        f"<!-- generated from {source} by scripts/gen_rule_docs.py; edit the docstring, not this page -->",
        f"# {module.ID} ({module.CODE})",
        _markdown_body(title[:1].upper() + title[1:]),
        f"Default severity: **{severity.label}**. On the command line: `python -m bot explain {module.ID}`; "
        f"in `.benchbot.yml`: `ignore: [{module.ID}]`, `severity: {{{module.ID}: ...}}`; in a file: "
        f"`# benchbot: ignore[{module.ID}]`.",
    ]
    for name, body in rule_sections(module).items():
        parts.append(f"## {name.rstrip(':')}\n\n{_markdown_body(body)}")
    parts.append("[All rules](../rules.md)")
    return "\n\n".join(parts) + "\n"


def rule_pages(registry: Mapping[str, ModuleType]) -> dict[str, str]:
    """docs/rules/ as it should be: file name (``<rule-id>.md``) -> page text."""
    return {f"{rid}.md": rule_page(module) for rid, module in registry.items()}
