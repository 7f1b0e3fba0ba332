"""A whole lint's findings kept across processes, by everything they depend on.

A lint is a pure function of three things: the tree's contents (every path, every link
target, every file's bytes or why it cannot be read), the configuration it runs with, and
benchbot's own code. ``lint`` looks its result up by a key of the three before it gathers
anything; a hit costs a walk of the tree and one small file, where the rest of the caches
(evaluations, parses, workflow envs) still leave the whole pipeline to run. What it saves:
a second lint of a tree nobody changed (a pre-commit run after ``git commit --amend -m``, a
re-run CI job, the base of every pull request opened against the same main, a ``history``
over a range it walked before).

The tree's key (``Tree.content_key``; the size budget is part of it):
- a git revision or the index (``--staged``): every path's blob id (git hashed the bytes)
  and link target, from the ``ls-tree``/``ls-files`` a lint runs anyway; a revision and an
  index holding the same blobs are the same lint;
- a work tree: every path, link target, the BLAKE2b of each readable file's bytes, and the
  reason for any other (too large, a FIFO, unreadable). Contents, never modification
  times: an edit within one tick of the file system's clock is never missed. On
  InferenceX (1,276 files, 12.6 MB) that is 70 ms.
A tree kind without a content key (``Tree.content_key`` gives None) is not cached.

The configuration's key is its canonical JSON (sets sorted, never in hash order).

Not kept: a lint that ran out of a time budget (a deadline depends on the machine, not the
inputs; ``bash -n``'s on a file tree-sitter rejects included), and a lint told which
suppressions to honour (the PR bot's head: its answer depends on the base). A hit has no
facts: ``LintResult.facts`` gathers them when a caller asks (the head's change rules in
``--new-from-rev`` and the PR bot), through the other caches, and ``LintResult.read_facts``
reads a base's entries, suppressions and tree without parsing or evaluating anything.

The entry is xz-compressed JSON (a fix holds whole files, each text stored once), decoded
field by field (``bot.cachejson``: bounded in size and depth, every field's type checked): a
damaged or hostile file is a miss, never findings. An entry decides what the gate reports,
so where the folder may hold what someone else wrote (CI) it is read only when sealed with
the key of ``BENCHBOT_CACHE_KEY`` (``bot.cachetrust``), like every other entry.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import lzma
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bot import cache
from bot.cachejson import Refused, array, boolean, integer, obj, string
from bot.cachejson import loads as json_loads
from bot.findings import Edit, Finding, Fix, Related, Severity

if TYPE_CHECKING:
    from bot.repo.facts import Facts
    from bot.repo.files.tree import Tree
    from bot.repo.jobs import Coverage
    from bot.settings import Config

KIND = "lint"
FORMAT = "1"
MAX_DECODED = 256 * 1024 * 1024  # an entry that decodes to more is not ours: a miss


def _canon(obj: object) -> Any:
    """A JSON-able form of a configuration that is the same in every process."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _canon(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return _canon(obj.value)
    if isinstance(obj, Mapping):
        return sorted([str(k), _canon(v)] for k, v in obj.items())
    if isinstance(obj, (set, frozenset)):
        return sorted((_canon(v) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


def key_of(tree: Tree, conf: Config) -> str | None:
    """The key of this lint, or None when it is not to be cached (cache off, a tree kind
    without a content key)."""
    if not cache.persistent():
        return None
    content = tree.content_key()
    if content is None:
        return None
    return cache.key(KIND, FORMAT, content, json.dumps(_canon(conf), sort_keys=True))


def keepable(facts: Facts) -> bool:
    """Whether the findings of these facts depend on the inputs alone (no time budget ran out:
    an evaluation's, a reference scan's, or ``bash -n``'s on a file tree-sitter rejected)."""
    return not (any(r.budget_hits for r in facts.runs)
                or any(p.result.budget_hits for p in facts.path_runs)
                or any(facts.scan_budget_hits.values())
                or facts.undecided)


# ------------------------------------------------------------------ encoding


def _enc_finding(f: Finding, text: dict[str, int]) -> list[Any]:
    """``text``: each whole-file text of an edit is stored once (by its index in the entry's
    table): the fixes of one file all start from the same text."""
    fix = None if f.fix is None else [f.fix.description, f.fix.given, f.fix.safe,
                                      [[e.path, text.setdefault(e.old, len(text)), text.setdefault(e.new, len(text))]
                                       for e in f.fix.edits]]
    return [f.rule, f.code, int(f.severity), f.path, f.line, f.column, f.message,
            [[r.path, r.line, r.note, r.rule, r.key] for r in f.related], list(f.entries), fix, f.key]


def _text(texts: list[str], index: Any) -> str:
    i = integer(index)
    if not 0 <= i < len(texts):
        raise Refused("no such text")
    return texts[i]


def _dec_related(raw: Any) -> Related:
    path, line, note, rule, key = array(raw, 5)
    return Related(string(path), integer(line), string(note), string(rule), string(key))


def _dec_edit(raw: Any, texts: list[str]) -> Edit:
    path, old, new = array(raw, 3)
    return Edit(string(path), _text(texts, old), _text(texts, new))


def _dec_finding(raw: Any, texts: list[str]) -> Finding:
    rule, code, sev, path, line, column, message, related, entries, fix, key = array(raw, 11)
    dfix = None
    if fix is not None:
        desc, given, safe, edits = array(fix, 4)
        dfix = Fix(string(desc), string(given), boolean(safe), tuple(_dec_edit(e, texts) for e in array(edits)))
    return Finding(string(rule), string(code), Severity(integer(sev)), string(path), integer(line), integer(column),
                   string(message), tuple(_dec_related(r) for r in array(related)),
                   tuple(string(e) for e in array(entries)), dfix, string(key))


def _enc_coverage(c: Coverage | None) -> list[Any] | None:
    if c is None:
        return None
    return [c.analysed, [list(t) for t in c.handed], c.rejected, c.unknown, c.recipes_checked, c.recipes_missing,
            [list(t) for t in c.recipes_external], c.unread, list(c.unread_names)]


def _dec_coverage(raw: Any) -> Coverage | None:
    from bot.repo.jobs import Coverage

    if raw is None:
        return None
    analysed, handed, rejected, unknown, checked, missing, external, unread, names = array(raw, 9)
    return Coverage(integer(analysed), _pairs(handed), integer(rejected), integer(unknown), integer(checked),
                    integer(missing), _pairs(external), integer(unread), tuple(string(n) for n in array(names)))


def _pairs(raw: Any) -> tuple[tuple[str, int], ...]:
    return tuple((string(t), integer(n)) for t, n in (array(p, 2) for p in array(raw)))


def store(key: str, findings: list[Finding], counts: tuple[int, int, int, int], coverage: Coverage | None) -> None:
    text: dict[str, int] = {}
    payload = {"findings": [_enc_finding(f, text) for f in findings], "counts": list(counts),
               "coverage": _enc_coverage(coverage), "texts": list(text)}
    raw = json.dumps(payload, separators=(",", ":")).encode()  # ASCII: lone surrogates are escaped
    # xz at preset 1: a fix holds whole files (a master config of InferenceX: 1.3 MB of JSON
    # becomes 30 KB, in about 15 ms); a hit decodes it in 2 ms
    cache.put(KIND, key, lzma.compress(raw, preset=1))


def load(key: str) -> tuple[list[Finding], tuple[int, int, int, int], Coverage | None] | None:
    """What ``store`` kept under ``key``; None when there is nothing (or nothing usable)."""
    data = cache.get(KIND, key)
    if data is None:
        return None
    try:
        unpack = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        raw = unpack.decompress(data, max_length=MAX_DECODED)
        if not unpack.eof:  # more than any lint keeps, or cut short
            return None
        got = obj(json_loads(raw, max_bytes=MAX_DECODED))
        texts = [string(t) for t in array(got["texts"])]
        findings = [_dec_finding(f, texts) for f in array(got["findings"])]
        files, entries, launchers, scripts = (integer(n) for n in array(got["counts"], 4))
        return findings, (files, entries, launchers, scripts), _dec_coverage(got["coverage"])
    except (ValueError, TypeError, KeyError, lzma.LZMAError):  # Refused is a ValueError
        return None
