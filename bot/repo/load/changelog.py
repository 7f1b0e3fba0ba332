"""The performance changelog (InferenceX's ``perf-changelog.yaml``): read it with positions,
find the entries a change appended, and where a change broke its append-only bytes.

Facts only: what the entries are, which are new, which base bytes changed. The rule
``changelog-missing`` (bot/rules/changelog_missing.py) judges.

Globs are those of InferenceX's own gate (utils/process_changelog.py): ``*`` matches any run
of characters, every other character itself, the whole name; a key without ``*`` names one
entry exactly. Matching is linear-time (no regex built from repo text).
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from bot.repo.load.yamlfile import YamlError, YList, YMap, load

MAX_GLOB = 512
_PR_LINK = re.compile(r"(https://[A-Za-z0-9.-]{1,100}/[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}/pull/)[0-9]{1,9}")


@dataclass(frozen=True)
class LogEntry:
    line: int  # of the list item
    keys: tuple[tuple[str, int], ...]  # (glob, line)
    canon: str  # the item as canonical JSON (what "the same entry" means)
    problem: str = ""  # why its key list is unusable


@dataclass
class Changelog:
    path: str
    raw: bytes
    entries: list[LogEntry] = field(default_factory=list)
    error: YamlError | None = None


@dataclass(frozen=True)
class Hunk:
    """Base lines a change edited, deleted or reordered (1-based; ``head_line`` where it shows)."""

    base_start: int
    base_end: int  # exclusive; == base_start for a pure insertion inside history
    head_line: int
    kind: str  # "edited", "deleted", "inserted"
    digest: str  # a stable subject: the base and head text of the hunk


def read(path: str, raw: bytes, key: str) -> Changelog:
    out = Changelog(path, raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        out.error = YamlError(f"not UTF-8 text (byte {exc.start})", line, 1)
        return out
    data, err = load(text)
    if err is not None:
        out.error = err
        return out
    if data is None:
        return out
    if not isinstance(data, YList):
        out.error = YamlError("the changelog must be a YAML list of entries", 1, 1)
        return out
    for item, pos in zip(data, data.item_pos):
        canon = json.dumps(item, sort_keys=True, default=str)
        if not isinstance(item, YMap):
            out.entries.append(LogEntry(pos.line, (), canon, "is not a mapping"))
            continue
        value = item.get(key)
        vline = item.val_pos[key].line if key in item.val_pos else pos.line
        if isinstance(value, YList) and value and all(isinstance(v, str) for v in value):
            keys = tuple((str(v), p.line) for v, p in zip(value, value.item_pos))
            out.entries.append(LogEntry(pos.line, keys, canon))
        else:
            what = "has no" if value is None else "has an unusable"
            out.entries.append(LogEntry(vline, (), canon, f"{what} `{key}` list (a list of entry names or globs)"))
    return out


def new_entries(base: Changelog, head: Changelog) -> list[LogEntry]:
    """Head entries the base does not have (compared as data, duplicates counted)."""
    left = Counter(e.canon for e in base.entries)
    out = []
    for e in head.entries:
        if left[e.canon]:
            left[e.canon] -= 1
        else:
            out.append(e)
    return out


def glob_match(pattern: str, name: str) -> bool:
    """``*`` = any characters, the rest literal, whole name; O(len(pattern) * len(name))."""
    if len(pattern) > MAX_GLOB:
        return False
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] != "*" and pattern[p] == name[n]:
            p += 1
            n += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


APPEND_MODES = ("tail", "no-deletions")


def hunks(base: bytes, head: bytes, mutable: tuple[str, ...] = (), mode: str = "tail") -> list[Hunk]:
    """Where the head changed the base's bytes other than by appending at the tail. Lines
    keep their endings (a CRLF or a dropped final newline is a change). A line replaced by a
    line of the same ``mutable`` field (``  pr-link: ...``, the gate's allowed correction) is not.

    ``mode`` ``no-deletions`` (InferenceX's CI gate, utils/process_changelog.py, which reads the
    lines ``git diff`` removes): only hunks that remove a base line with text in it count; lines
    inserted anywhere, and removed blank lines, do not."""
    if head.startswith(base):
        return []
    a = base.splitlines(keepends=True)
    b = head.splitlines(keepends=True)
    out: list[Hunk] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "insert" and i1 == len(a)):
            continue
        if tag == "replace" and i2 - i1 == j2 - j1 and all(
                _field(x) and _field(x) == _field(y) and _field(x) in mutable and x.endswith(b"\n")
                and y.endswith(b"\n") for x, y in zip(a[i1:i2], b[j1:j2])):
            continue
        if mode == "no-deletions" and not any(x.strip() for x in a[i1:i2]):
            continue
        kind = {"replace": "edited", "delete": "deleted", "insert": "inserted"}[tag]
        digest = json.dumps([b"".join(a[i1:i2]).decode("utf-8", "replace"),
                             b"".join(b[j1:j2]).decode("utf-8", "replace")])
        out.append(Hunk(i1 + 1, i2 + 1, min(j1 + 1, max(len(b), 1)), kind, digest))
    return out


def link_placeholder(log: Changelog) -> str:
    """A pull-request link for a new entry when the pull request is not known (a local lint):
    the newest entry's ``pr-link`` with the number replaced by ``XXX``
    (``https://github.com/acme/bench/pull/XXX``), else ``https://github.com/OWNER/REPO/pull/XXX``."""
    for entry in reversed(log.entries):
        try:
            link = json.loads(entry.canon).get("pr-link")
        except (ValueError, AttributeError):
            continue
        m = _PR_LINK.fullmatch(link) if isinstance(link, str) else None
        if m:
            return f"{m.group(1)}XXX"
    return "https://github.com/OWNER/REPO/pull/XXX"


def _field(line: bytes) -> str:
    name, colon, _ = line.strip().partition(b":")
    return name.decode("utf-8", "replace") if colon and line[:1] in (b" ", b"\t") else ""


def bad_bytes(base: bytes, head: bytes) -> tuple[int, str] | None:
    """(head line, what) for bytes InferenceX's gate rejects in appended text: a CR, a tab, a
    NUL, or a file that does not end with a newline. Lines added before the end
    (``changelog-append: no-deletions``) are searched too, for a byte the base does not have."""
    appended = head.startswith(base)
    tail_start = len(base) if appended else 0
    tail = head[tail_start:]
    for byte, what in ((b"\r", "a CR (CRLF line ending)"), (b"\t", "a tab"), (b"\0", "a NUL byte")):
        at = tail.find(byte)
        if at >= 0 and (appended or byte not in base):
            return head[: tail_start + at].count(b"\n") + 1, what
    if head and not head.endswith(b"\n"):
        return head.count(b"\n") + 1, "no newline at the end of the file"
    return None
