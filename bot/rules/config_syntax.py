"""config-syntax: a master config, runners.yaml or workflow that is not valid YAML, or a file that cannot be read.

What it does:
    Loads every master config and runners.yaml and reports YAML errors at their line and
    column (a full-width comma ``，`` in a flow mapping is named as such). When such a file
    does not load, its top-level blocks (the entries at column 0, the runner labels) are
    loaded one by one: every block that loads is linted as usual, and each broken one is
    reported at its error, by its key; the entries not read are counted in the summary
    (``1 entry not read (syntax error)``). A block that fails only because it uses an anchor
    of a broken block is listed with that block. Every workflow
    the profile reads (``.github/workflows/*.yml``) is loaded too: a YAML error, a
    malformed ``${{ }}`` expression or a workflow too large to read is reported at its
    line, since GitHub refuses such a workflow and the launcher calls and envs it would
    hand the launchers are then not checked. A document
    that would expand past a million values through its aliases (a "billion laughs"),
    nests deeper than 200 levels or uses an anchor inside itself is an error at the line
    where that happens. Any file the analysis needs (a master config, runners.yaml, a
    launcher, a benchmark script, a workflow) that is not a regular file (a FIFO, a
    device, a socket), is over the file-size budget (8 MB by default, ``max-file-mb``)
    or cannot be read is reported too, and is never opened or parsed. The other files
    are still linted.

Why is this bad?
    The sweep generator fails on the whole file, so none of its entries run, not even those
    the linter could still read. GitHub does
    not run a workflow that does not parse: no benchmark it dispatches runs. A launcher
    that cannot be read runs nothing anybody can check: what its entries dispatch is
    unknown.

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
          - { tp: 8， conc-start: 4, conc-end: 64 }
    ```

Fix:
    Fix the YAML at the reported position.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from bot.findings import Finding, Related, Severity
from bot.repo.facts import Facts
from bot.repo.load.recover import Broken
from bot.rules._entries import entries_of
from bot.settings import Config

ID = "config-syntax"
CODE = "BB002"
SEVERITY = Severity.ERROR
SUMMARY = "a config file or workflow that is not valid YAML, or a file that cannot be read"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    yaml_files: set[str] = set()
    for cfg in facts.configs:
        yaml_files.add(cfg.path)
        if cfg.error is not None:
            yield Finding(ID, CODE, SEVERITY, cfg.path, cfg.error.line, cfg.error.col,
                          f"{_what(facts, cfg.path, cfg.error.message)}; no entry of this file was checked",
                          key=cfg.path)
        read = len(cfg.entries)
        others = f"the file's {_count(read, 'other entry')} {'was' if read == 1 else 'were'} read"
        yield from _blocks(cfg.path, cfg.broken, "entry", others)
    r = facts.runners
    if r.path is not None:
        yaml_files.add(r.path)
        if r.error is not None and not r.broken:
            yield Finding(ID, CODE, SEVERITY, r.path, r.error.line, r.error.col,
                          f"{_what(facts, r.path, r.error.message)}; runner labels were not checked", key=r.path)
        flat = not (isinstance(r.data, Mapping) and isinstance(r.data.get("labels"), Mapping))
        what = "runner label" if flat or any(b.parent == "labels" for b in r.broken) else "key"
        yield from _blocks(r.path, r.broken, what, "runner labels were not checked; the "
                           f"{_count(len(r.labels), 'label')} read still route entries")
    for path, line, message in facts.workflows.errors:
        if path in facts.unreadable:
            continue  # reported below, as a file that was not read
        yield Finding(ID, CODE, SEVERITY, path, line, 1,
                      f"this workflow does not load ({message}); GitHub would not run it, and the launcher calls "
                      "and envs it hands the launchers were not checked", key=f"workflow|{path}|{line}|{message}")
    launchers = set(facts.launcher_files)
    for path, why in sorted(facts.unreadable.items()):
        if path in yaml_files:
            continue
        if path in launchers:
            entries = entries_of(facts, path)
            consequence = (f"; what {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} on it dispatch is unknown"
                           if entries else "")
            yield Finding(ID, CODE, SEVERITY, path, 1, 1, f"this launcher is {why}; it was not read{consequence}",
                          entries=tuple(entries), key=f"unreadable|{path}")
        else:
            yield Finding(ID, CODE, SEVERITY, path, 1, 1, f"this file is {why}; it was not read",
                          key=f"unreadable|{path}")


def _blocks(path: str, broken: tuple[Broken, ...], what: str, rest: str) -> Iterator[Finding]:
    """One finding per broken block of a file whose other blocks were read. The blocks that fail
    only for an anchor of a broken one are its consequences (in ``related``). The subject is the
    file when one block is broken (as for a file that does not load at all); with more, the file
    and each block's key (or its key line as written)."""
    causes = [b for b in broken if b.cause is None]
    for b in causes:
        name = f"{what} {b.key!r}" if b.key is not None else f"the {what} at line {b.line}"
        needs = [d for d in broken if d.cause == b.line]
        related = tuple(Related(path, d.error.line, f"{what} {d.key!r} uses an anchor of {name}: not read either"
                                if d.key is not None else f"uses an anchor of {name}: not read either")
                        for d in needs)
        also = f", nor {_count(len(needs), what)} using its anchors" if needs else ""
        keys = tuple(k.key for k in (b, *needs) if k.key is not None) if what == "entry" else ()
        subject = path if len(causes) == 1 else f"{path}|{b.key if b.key is not None else b.text}"
        yield Finding(ID, CODE, SEVERITY, path, b.error.line, b.error.col,
                      f"invalid YAML: {b.error.message}; {name} was not read{also} ({rest})", related, keys,
                      key=subject)


def _count(n: int, noun: str) -> str:
    """``1 entry``, ``2 entries``, ``3 runner labels``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def _what(facts: Facts, path: str, message: str) -> str:
    why = facts.unreadable.get(path)
    return f"this file is {why}; it was not read" if why is not None else f"invalid YAML: {message}"
