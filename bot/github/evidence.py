"""Accuracy evidence for pull requests that change speculative-decoding settings.

Speculative decoding (MTP, EAGLE) should not change what the model answers, but a wrong
setting or an engine bug can (async scheduling once cost MTP accuracy in vLLM). So when a
pull request changes speculative settings (:func:`spec_change`: an added or changed
``*_mtp.sh`` script, or an added or changed config entry named ``*-mtp`` or with
``spec-decoding: mtp`` points), the summary asks for lm_eval results; when its description
holds lm_eval tables (markdown or tab-separated: the first is the base, the others
candidates), the summary compares them (:mod:`bot.report.evals`) and flags a drop beyond two
combined standard errors. :func:`section` is pure; the description is untrusted and every
piece of it is shown through :mod:`bot.report.markdown`'s escaping.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.external import lmeval
from bot.github.port import ChangedFile
from bot.repo.load.configs import Entry
from bot.report import evals
from bot.report import markdown as md

MAX_DESCRIPTION = 200_000  # characters of a description read for tables (GitHub allows 65,536)
MAX_ROWS = 40  # comparison rows shown in the summary
MAX_NAMES = 5  # scripts and entries named in the request
_ASYNC = re.compile(r"(?<![\w-])--async[-_]scheduling(?![\w-])")


@dataclass(frozen=True)
class SpecChange:
    """What in a pull request touches speculative decoding (paths and entry names)."""

    scripts: tuple[str, ...] = ()  # added or changed *_mtp.sh scripts
    entries: tuple[str, ...] = ()  # added or changed speculative config entries
    async_on: tuple[str, ...] = ()  # of ``scripts``, those whose server runs with --async-scheduling

    def __bool__(self) -> bool:
        return bool(self.scripts or self.entries)


def _speculative(entry: Entry) -> bool:
    return entry.name.endswith("-mtp") or any(p.spec_decoding == "mtp" for p in entry.points)


def _content(entry: Entry) -> tuple[object, ...]:
    return (entry.fields, tuple(p.fields for p in entry.points))


def async_scheduling(text: str) -> bool:
    """Whether a script's text passes vLLM's ``--async-scheduling`` (comment lines left out)."""
    return any(_ASYNC.search(line) for line in text.splitlines() if not line.lstrip().startswith("#"))


def spec_change(files: Iterable[ChangedFile], base_entries: Iterable[Entry], head_entries: Iterable[Entry],
                read: Callable[[str], bytes | None]) -> SpecChange:
    """The speculative part of a pull request: from its changed files (the files API), the
    entries of the base and of the head, and ``read`` (a head file's bytes)."""
    changed = {f.path for f in files if f.status != "removed"}
    scripts = sorted(p for p in changed if p.endswith("_mtp.sh"))
    before = {e.name: e for e in base_entries}
    entries = sorted({e.name for e in head_entries if e.path in changed and _speculative(e)
                      and (e.name not in before or _content(before[e.name]) != _content(e))})
    async_on = []
    for path in scripts:
        raw = read(path)
        if raw is not None and async_scheduling(raw.decode("utf-8", "replace")):
            async_on.append(path)
    return SpecChange(tuple(scripts), tuple(entries), tuple(async_on))


def _names(items: tuple[str, ...]) -> str:
    shown = ", ".join(md.code(x) for x in items[:MAX_NAMES])
    return shown + (f" and {len(items) - MAX_NAMES} more" if len(items) > MAX_NAMES else "")


def _what(change: SpecChange) -> str:
    parts = []
    if change.scripts:
        parts.append(f"{'script' if len(change.scripts) == 1 else 'scripts'} {_names(change.scripts)}")
    if change.entries:
        parts.append(f"{'entry' if len(change.entries) == 1 else 'entries'} {_names(change.entries)}")
    return " and ".join(parts)


def labels(tables: list[lmeval.Results]) -> list[str]:
    """Candidate names: ``candidate 1``, ``candidate 2 (async scheduling off)``..."""
    return [f"candidate {i}" + (" (async scheduling off)" if t.no_async else "") for i, t in enumerate(tables, 1)]


def section(change: SpecChange, description: str) -> list[str]:
    """The summary's "Accuracy evidence" lines (markdown), or ``[]`` when there is nothing to say."""
    text = description[:MAX_DESCRIPTION]
    try:
        tables = [t for t in lmeval.tables(text, "description") if t.rows]
        problem = None
    except lmeval.EvalError as exc:
        tables, problem = [], exc
    if not change and len(tables) < 2 and problem is None:
        return []
    out = ["", "### Accuracy evidence", ""]
    if problem is not None:
        out.append(f"\u26a0\ufe0f benchbot could not read the lm_eval table in the description (line "
                   f"{problem.line}): {md.escape(problem.message)}.")
    if len(tables) >= 2:
        cands = tables[1:]
        result = evals.compare(tables[0], cands, labels(cands))
        drops = result.drops
        head = (f"The description holds {len(tables)} lm_eval tables; the first (line {tables[0].line}) is the base. "
                f"Compared: {evals.summary(result)}.")
        out += [head, ""]
        if drops:
            what = ", ".join(f"{md.code(f'{p.task} {p.filter} {p.metric}')} ({md.escape(s.label)}: "
                             f"{p.diff:+.4f}, 2 se {2 * (p.se or 0):.4f})" for s, p in drops[:MAX_NAMES])
            out += [f"{evals.WARN} **Accuracy drops beyond 2 combined standard errors**: {what}.", ""]
        out.append(evals.as_markdown(result, max_rows=MAX_ROWS).rstrip("\n"))
    elif change:
        found = " The description holds one lm_eval table; a comparison needs a base and a candidate." \
            if tables else ""
        out.append(f"This pull request changes an MTP script or entry ({_what(change)}).{found} Please add "
                   "accuracy evidence to its description: lm_eval results (e.g. gsm8k, 5-shot) of the same server "
                   "without speculative decoding (the first table, the base) and with it, as the markdown table "
                   "lm_eval prints or a tab-separated copy; benchbot compares them here.")
    if change.async_on and not any(t.no_async for t in tables[1:]):
        out += ["", f"{_names(change.async_on)} {'runs' if len(change.async_on) == 1 else 'run'} the MTP server with "
                "`--async-scheduling` and no evidence with it off is given (a table after a line that says "
                "\u201cno-async\u201d or \u201casync scheduling off\u201d): async scheduling has changed MTP "
                "accuracy in vLLM before (gsm8k 0.9454 with it, 0.9522 without, against 0.9530 without MTP)."]
    return out
