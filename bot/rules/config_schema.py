"""config-schema: a master config or runners.yaml entry the benchmark sweep would reject.

What it does:
    Validates every master config against ``schemas/master-config.schema.json`` and
    runners.yaml against ``schemas/runners.schema.json`` (both formats: ``scenarios:``
    and the older ``seq-len-configs:``; ``labels:`` and the flat label map). Reports
    unknown or misspelt fields (with the closest known name), wrong types, missing
    required fields, ``conc-start`` above ``conc-end``, a range and a ``conc-list`` in
    one item, and duplicate keys: PyYAML silently keeps the last of two entries with
    the same name, so the first one is never benchmarked. Entry names must be unique
    across all master configs, as the sweep loads them together.

Why is this bad?
    The sweep generator validates the merged configs and fails the whole run on one bad
    field; a duplicate name silently drops an entry instead.

Example:
    ```yaml
    # file: configs/amd-extra-master.yaml
    kimik2.5-int4-mi300x-vllm-long:
      image: vllm/vllm-openai-rocm:v0.14.1
      model: moonshotai/Kimi-K2.5
      model-prefix: kimik2.5
      runner: mi300x
      precision: int4
      framework: vllm
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 1024
          search-space:
          - { tp: 8, conc-strat: 4, conc-end: 64 }
    ```

Fix:
    Use the field name the message suggests; rename or delete one of two entries that
    share a name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.repo.load.schema import Violation, validate
from bot.repo.load.yamlfile import Mark, YList, YMap
from bot.settings import Config

ID = "config-schema"
CODE = "BB003"
SEVERITY = Severity.ERROR
SUMMARY = "a config entry with unknown, mistyped, missing or duplicate fields"

MASTER_SCHEMA = "master-config.schema.json"
RUNNERS_SCHEMA = "runners.schema.json"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    first_seen: dict[str, tuple[str, Mark]] = {}
    for cfg in facts.configs:
        if cfg.error is not None or cfg.data is None:
            continue
        for v in validate(cfg.data, MASTER_SCHEMA):
            yield _finding(cfg.path, v)
        yield from _duplicates(cfg.path, cfg.data, ())
        yield from _cross_field(cfg.path, cfg.data)
        if isinstance(cfg.data, YMap):
            for name in cfg.data:
                pos = cfg.data.key_pos.get(name, Mark(1, 1))
                if "*" in name:
                    yield Finding(ID, CODE, SEVERITY, cfg.path, pos.line, pos.col,
                                  f"entry name {name!r} contains '*', which the sweep reserves for wildcards",
                                  key=f"wildcard|{name}")
                if name in first_seen and first_seen[name][0] != cfg.path:
                    other, mark = first_seen[name]
                    yield Finding(ID, CODE, SEVERITY, cfg.path, pos.line, pos.col,
                                  f"entry {name!r} is also defined in {other}; the sweep refuses duplicate "
                                  "entry names across master configs",
                                  (Related(other, mark.line, "first definition"),), (name,),
                                  key=f"duplicate-across|{name}")
                first_seen.setdefault(name, (cfg.path, pos))
    r = facts.runners
    if r.path is not None and r.error is None and r.data is not None:
        for v in validate(r.data, RUNNERS_SCHEMA):
            yield _finding(r.path, v)
        yield from _duplicates(r.path, r.data, ())


def _finding(path: str, v: Violation) -> Finding:
    entries = (str(v.path[0]),) if v.path and path.endswith((".yaml", ".yml")) and "runners" not in path else ()
    key = f"{'/'.join(str(p) for p in v.path)}|{v.keyword}|{v.subject}"
    return Finding(ID, CODE, SEVERITY, path, v.mark.line, v.mark.col, v.message, entries=entries, key=key)


def _duplicates(path: str, node: Any, at: tuple[str | int, ...]) -> Iterator[Finding]:
    """Keys that appear twice in one mapping, at any depth: reported where YAML drops one."""
    if isinstance(node, YMap):
        for i, (key, dropped) in enumerate(node.duplicates):
            nth = sum(1 for k, _ in node.duplicates[:i] if k == key)  # stable when lines move
            kept = _next_occurrence(node, key, dropped)
            if not at:
                msg = (f"duplicate entry name {key!r}: YAML keeps only the last definition (line {kept.line}), "
                       "so this entry is silently dropped")
            else:
                msg = (f"duplicate key {_where((*at, key))}: YAML keeps only the last value (line {kept.line}), "
                       "so this one is ignored")
            yield Finding(ID, CODE, SEVERITY, path, dropped.line, dropped.col, msg,
                          (Related(path, kept.line, "the definition that replaces it"),),
                          (str(at[0]) if at else key,), key=f"duplicate|{_where((*at, key))}|{nth}")
        for k, v in node.items():
            yield from _duplicates(path, v, (*at, k))
    elif isinstance(node, YList):
        for i, v in enumerate(node):
            yield from _duplicates(path, v, (*at, i))


def _next_occurrence(node: YMap, key: str, dropped: Mark) -> Mark:
    later = [m for k, m in node.duplicates if k == key and (m.line, m.col) > (dropped.line, dropped.col)]
    return min(later, key=lambda m: (m.line, m.col)) if later else node.key_pos.get(key, node.pos)


def _where(path: tuple[str | int, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _cross_field(path: str, doc: Any) -> Iterator[Finding]:
    """The constraints a JSON Schema cannot state, checked on every search-space item."""
    if not isinstance(doc, YMap):
        return
    for name, body in doc.items():
        if not isinstance(body, YMap):
            continue
        for at, item in _search_space_items(body):
            yield from _conc(path, name, (name, *at), item)


def _search_space_items(body: YMap) -> Iterator[tuple[tuple[str | int, ...], YMap]]:
    blocks: list[tuple[tuple[str | int, ...], Any]] = []
    scenarios = body.get("scenarios")
    if isinstance(scenarios, YMap):
        blocks = [(("scenarios", k), v) for k, v in scenarios.items()]
    if isinstance(body.get("seq-len-configs"), YList):
        blocks.append((("seq-len-configs",), body["seq-len-configs"]))
    for at, seqs in blocks:
        if not isinstance(seqs, YList):
            continue
        for i, seq in enumerate(seqs):
            space = seq.get("search-space") if isinstance(seq, YMap) else None
            if isinstance(space, YList):
                for j, item in enumerate(space):
                    if isinstance(item, YMap):
                        yield (*at, i, "search-space", j), item


def _conc(path: str, entry: str, at: tuple[str | int, ...], item: YMap) -> Iterator[Finding]:
    start, end, lst = item.get("conc-start"), item.get("conc-end"), item.get("conc-list")
    where = _where(at)
    ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end))
    if ints and start > end:  # type: ignore[operator]
        m = item.val_pos.get("conc-start", item.pos)
        yield Finding(ID, CODE, SEVERITY, path, m.line, m.col,
                      f"conc-start ({start}) is above conc-end ({end}) in {where}: the sweep rejects it",
                      entries=(entry,), key=f"{where}|conc-order")
    has_range = start is not None or end is not None
    # A misspelt concurrency key (conc-strat) is already reported as an unknown field.
    misspelt = any(str(k).startswith("conc") and k not in ("conc-start", "conc-end", "conc-list") for k in item)
    if has_range and isinstance(lst, list) and lst:
        m = item.key_pos.get("conc-list", item.pos)
        yield Finding(ID, CODE, SEVERITY, path, m.line, m.col,
                      f"{where} sets both conc-list and conc-start/conc-end; use a list or a range, not both",
                      entries=(entry,), key=f"{where}|conc-both")
    elif misspelt:
        return
    elif start is None and end is None and not lst:
        yield Finding(ID, CODE, SEVERITY, path, item.pos.line, item.pos.col,
                      f"{where} has no concurrency: set conc-start and conc-end, or conc-list",
                      entries=(entry,), key=f"{where}|conc-none")
    elif (start is None) != (end is None):
        m = item.key_pos.get("conc-start" if start is not None else "conc-end", item.pos)
        missing = "conc-end" if start is not None else "conc-start"
        yield Finding(ID, CODE, SEVERITY, path, m.line, m.col,
                      f"{where} sets {'conc-start' if start is not None else 'conc-end'} without {missing}",
                      entries=(entry,), key=f"{where}|conc-half")
