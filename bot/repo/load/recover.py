"""A YAML map that does not load whole, read block by block.

InferenceX keeps its master configs as maps of entries whose keys sit at column 0, and
runners.yaml as a map of runner labels (at column 0, or under ``labels:``). One syntax error
in such a file used to leave every entry of it unread. :func:`recover` splits the text into
blocks (a key line at the map's indentation and every line up to the next one; comments
and blank lines go with the block above them, the lines before the first key are a header
every load keeps: ``---``, directives), finds the blocks that do not load on their own, and
loads every other block together, so that an alias of an anchor in another block still works.
A block that fails only in that combined load (an alias of an anchor in a broken block, an
anchor defined twice, the node budget of ``bot.repo.load.yamlfile``) is set apart at the line the
combined load names, for at most :data:`MAX_ROUNDS` loads; past that nothing is recovered.
A block whose only fault is an alias of an anchor in a broken block names that block as its
``cause`` (one root cause, its consequences).

The broken blocks are blanked line by line, their line breaks (every one libyaml counts)
kept: every position in what loads is its position in the file, and a broken block's error is
at its line in the file.

Costs: the blocks are loaded in runs of :data:`CHUNK` (a run that loads is done with; one that
does not is halved until the blocks that fail alone are found), then once all together: about
twice the text when a few blocks are broken, never a load per pair of blocks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.repo.load.yamlfile import YamlError, YMap, load

CHUNK = 64  # blocks loaded together before they are loaded one by one
MAX_ROUNDS = 16  # combined loads that may each set apart one more block (or run of blocks)

# the line breaks libyaml counts (CR LF once)
_BREAK = re.compile("(\r\n|[\r\n\x85\u2028\u2029])")
# a plain key: text up to the first ``:`` (ASCII or full-width) followed by a blank or the end
_PLAIN_KEY = re.compile(r"(.+?)[ \t]*([:\uff1a])(?:[ \t]|$)")
_UNDEFINED_ALIAS = re.compile(r"the alias (\S+) names no anchor defined before it")
_NAMES_A_LINE = re.compile(r"\bline \d")


@dataclass(frozen=True)
class Broken:
    """A block that did not load: its key (None when it cannot be read), the line of its key
    line, and the error at its real line in the file."""

    key: str | None
    line: int
    error: YamlError
    text: str  # the key line as written (stripped): the block's subject when its key cannot be read
    parent: str | None = None  # the key it is under (``labels``), None at the top level
    cause: int | None = None  # the ``line`` of the broken block whose anchor it uses (its only fault)


@dataclass(frozen=True)
class Recovered:
    data: YMap  # every block that loads, at its positions in the file
    broken: tuple[Broken, ...]  # in file order, at least one
    blocks: int  # the blocks found (broken ones included)


@dataclass(frozen=True)
class _Unit:
    start: int  # 0-based index of its key line
    end: int  # exclusive
    key: str | None
    head: tuple[int, ...]  # the lines loaded before it when it is loaded on its own
    parent: str | None = None


class _Text:
    """The text as lines and the line breaks after them (the last one's is empty)."""

    def __init__(self, text: str) -> None:
        parts = _BREAK.split(text)
        self.lines = parts[0::2]
        self.breaks = [*parts[1::2], ""]

    def join(self, indexes: Sequence[int] | range) -> str:
        return "".join(self.lines[i] + self.breaks[i] for i in indexes)


def recover(text: str, nested: str | None = None) -> Recovered | None:
    """The blocks of a top-level map that load, and those that do not; None when the text
    holds fewer than two blocks, when no block loads or when the broken ones cannot be told
    apart within the budget. ``nested``: a key (``labels``) whose own map is split into blocks
    in its place."""
    doc = _Text(text.removeprefix("\ufeff"))  # libyaml skips the mark: columns are the same
    units = _units(doc, nested)
    if len(units) < 2:
        return None
    excluded: dict[int, YamlError] = {}
    dangling: dict[int, YamlError] = {}  # units that fail alone for an alias of an anchor outside them
    for i, alone in _alone_errors(doc, units):
        if _UNDEFINED_ALIAS.match(alone.message):
            dangling[i] = alone
        else:
            excluded[i] = _exact(doc, units[i], alone)
    caused: dict[int, int] = {}  # unit -> the broken unit whose anchor it uses
    data = _together(doc, units, excluded, dangling, caused)
    if data is None:
        return None
    broken = tuple(Broken(units[i].key, units[i].start + 1, e, doc.lines[units[i].start].strip()[:200],
                          units[i].parent, units[caused[i]].start + 1 if i in caused else None)
                   for i, e in sorted(excluded.items()))
    return Recovered(data, broken, len(units))


def _together(doc: _Text, units: list[_Unit], excluded: dict[int, YamlError], dangling: dict[int, YamlError],
              caused: dict[int, int]) -> YMap | None:
    """Every unit but the excluded ones, loaded together; a unit that fails only here is
    excluded too (and the units that need the same missing anchor with it), for at most
    :data:`MAX_ROUNDS` loads."""
    starts = [u.start for u in units]
    for _ in range(MAX_ROUNDS):
        if len(excluded) == len(units):
            return None
        data, err = load(_blanked(doc, units, excluded))
        if err is None:
            return data if isinstance(data, YMap) else None
        at = _unit_at(starts, units, err.line - 1)
        if at is None or at in excluded:
            return None
        excluded[at] = err
        alias = _UNDEFINED_ALIAS.match(err.message)
        if alias is not None:  # an anchor no block that loads defines: the other blocks that need it fail too
            anchor = _anchor(alias.group(1))
            root = next((j for j in sorted(excluded, reverse=True)
                         if j < at and anchor.search(_text_of(doc, units[j]))), None)
            if root is not None:
                root = caused[at] = caused.get(root, root)
            _exclude_dangling(doc, units, excluded, dangling, at, alias.group(1), caused, root)
    return None


# ------------------------------------------------------------------ blocks


def _units(doc: _Text, nested: str | None) -> list[_Unit]:
    top = _blocks(doc.lines, 0, len(doc.lines), 0)
    if not top:
        return []
    header = tuple(i for i in range(top[0][0]) if _content(doc.lines[i]))
    units: list[_Unit] = []
    for start, end, key in top:
        if nested is not None and key == nested and _PLAIN_KEY.fullmatch(doc.lines[start].split(" #", 1)[0].rstrip()):
            indent = _indent_below(doc.lines, start + 1, end)
            children = _blocks(doc.lines, start + 1, end, indent) if indent else []
            if children:
                units.extend(_Unit(s, e, k, (*header, start), nested) for s, e, k in children)
                continue
        units.append(_Unit(start, end, key, header))
    return units


def _blocks(lines: list[str], lo: int, hi: int, indent: int) -> list[tuple[int, int, str | None]]:
    """(start, end, key) of the blocks of lines[lo:hi] whose key lines are at ``indent``."""
    found: list[tuple[int, str | None]] = []
    for i in range(lo, hi):
        is_key, key = _key_line(lines[i], indent)
        if is_key:
            found.append((i, key))
    return [(s, found[n + 1][0] if n + 1 < len(found) else hi, k) for n, (s, k) in enumerate(found)]


def _key_line(line: str, indent: int) -> tuple[bool, str | None]:
    """Whether the line is a mapping key at exactly ``indent`` spaces, and the key when it can
    be read (a full-width colon still ends a key: the line is the key line of a broken block)."""
    if len(line) <= indent or line[indent] in " \t" or (indent and line[:indent].strip(" ")):
        return False, None
    rest = line[indent:]
    first = rest[0]
    if first in "#]},%" or (first == "-" and (len(rest) == 1 or rest[1] in " \t")):
        return False, None
    if rest.startswith(("---", "...")) and rest[3:4] in ("", " ", "\t"):
        return False, None
    if first in "'\"":
        return _quoted_key(rest)
    if first == "?":
        return True, None
    m = _PLAIN_KEY.match(rest)
    if m is None or " #" in m.group(1):
        return False, None  # a continuation line (of a quoted or flow value), or no key
    key = m.group(1)
    return True, (None if key[0] in "&*!|>{[@`" else key)


def _quoted_key(rest: str) -> tuple[bool, str | None]:
    quote = rest[0]
    i = 1
    while True:
        j = rest.find(quote, i)
        if j < 0:
            return False, None
        if quote == "'" and rest.startswith("''", j):
            i = j + 2
            continue
        if quote == '"' and _escaped(rest, j):
            i = j + 1
            continue
        break
    if not rest[j + 1:].lstrip(" \t").startswith((":", "\uff1a")):
        return False, None
    body = rest[1:j]
    if quote == "'":
        return True, body.replace("''", "'")
    return True, (None if "\\" in body else body)


def _escaped(text: str, at: int) -> bool:
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent_below(lines: list[str], lo: int, hi: int) -> int:
    """The indentation of the first line with content in lines[lo:hi] (0 when none)."""
    for i in range(lo, hi):
        if _content(lines[i]):
            return len(lines[i]) - len(lines[i].lstrip(" "))
    return 0


# ------------------------------------------------------------------ loads


def _alone_errors(doc: _Text, units: list[_Unit]) -> list[tuple[int, YamlError]]:
    """(unit, error) of the units that do not load on their own, in file order: runs of
    :data:`CHUNK` units (their lines as they are in the file) are loaded first, a run that
    fails is halved."""
    out: list[tuple[int, YamlError]] = []
    pending = [(a, min(a + CHUNK, len(units))) for a in reversed(range(0, len(units), CHUNK))]
    while pending:  # a stack: the first run on top
        a, b = pending.pop()
        _, err = load(doc.join(units[a].head) + doc.join(range(units[a].start, units[b - 1].end)))
        if err is None:
            continue
        if b - a == 1:
            out.append((a, _mapped(doc, units[a], err)))
            continue
        mid = (a + b) // 2
        pending += [(mid, b), (a, mid)]
    return out


def _mapped(doc: _Text, unit: _Unit, err: YamlError) -> YamlError:
    """An error of a unit loaded on its own (its head, then its lines) at its line in the file;
    one past the unit's lines (the end of the text) is its last line with content (not a comment)."""
    line = unit.start + (err.line - 1 - len(unit.head))
    if unit.start <= line < unit.end:
        return YamlError(err.message, line + 1, err.col)
    last = max((i for i in range(unit.start, unit.end) if _content(doc.lines[i])), default=unit.start)
    return YamlError(err.message, last + 1, len(doc.lines[last].rstrip()) + 1)


def _exact(doc: _Text, unit: _Unit, err: YamlError) -> YamlError:
    """A message that names a line (an anchor defined twice) loaded again at the unit's place,
    so that the lines it names are the file's."""
    if not _NAMES_A_LINE.search(err.message):
        return err
    head = set(unit.head)
    before = "".join((doc.lines[i] if i in head else "") + doc.breaks[i] for i in range(unit.start))
    _, again = load(before + doc.join(range(unit.start, unit.end)))
    if again is None or not unit.start < again.line <= unit.end:
        return err
    return again


def _blanked(doc: _Text, units: list[_Unit], excluded: dict[int, YamlError]) -> str:
    blank = bytearray(len(doc.lines))
    for i in excluded:
        blank[units[i].start:units[i].end] = b"\1" * (units[i].end - units[i].start)
    return "".join(("" if blank[i] else doc.lines[i]) + doc.breaks[i] for i in range(len(doc.lines)))


def _unit_at(starts: list[int], units: list[_Unit], line: int) -> int | None:
    i = bisect.bisect_right(starts, line) - 1
    return i if i >= 0 and line < units[i].end else None


def _anchor(alias: str) -> re.Pattern[str]:
    """Where the text defines the anchor an alias names (``*base`` -> ``&base``)."""
    return re.compile(re.escape("&" + alias[1:]) + r"(?![^\s,\[\]{}])")


def _text_of(doc: _Text, unit: _Unit) -> str:
    return doc.join(range(unit.start, unit.end))


def _exclude_dangling(doc: _Text, units: list[_Unit], excluded: dict[int, YamlError],
                      dangling: dict[int, YamlError], at: int, alias: str, caused: dict[int, int],
                      root: int | None) -> None:
    """Set apart, with ``at``, the later units that fail alone for the same alias, up to a unit
    that defines its anchor; ``root``: the broken unit that defines it, their cause."""
    anchor = _anchor(alias)
    for j in range(at + 1, len(units)):
        if j in excluded:
            continue
        err = dangling.get(j)
        same = _UNDEFINED_ALIAS.match(err.message) if err is not None else None
        if err is not None and same is not None and same.group(1) == alias:
            excluded[j] = err
            if root is not None:
                caused[j] = root
        elif anchor.search(_text_of(doc, units[j])):
            return
