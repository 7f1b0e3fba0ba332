"""shell-syntax: a launcher or benchmark script that does not parse.

What it does:
    Parses every launcher, benchmark script and runner helper with tree-sitter-bash and
    reports the first syntax error of each file (and how many there are). The rest of the
    repo is still analysed; scripts that only a broken launcher could run are not
    reported as dead. A construct nested deeper than 50 levels (``if``, loops, ``case``,
    ``{ }``, ``( )``, ``$( )``, ``${...}``) is reported too, even though bash accepts it:
    it is analysed as an unknown command, so what it runs is not known.

Why is this bad?
    bash fails when it reaches the error, after the job has waited for a GPU node; and
    nothing about the file can be checked statically.

Example:
    ```sh
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh
    #!/usr/bin/env bash
    vllm serve "$MODEL" --tensor-parallel-size "$TP" )
    ```

Fix:
    Fix the syntax; ``bash -n FILE`` confirms.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Finding, Severity
from bot.repo.facts import Facts
from bot.rules._entries import entries_of
from bot.settings import Config
from bot.shell.ir.nesting import is_too_deep

ID = "shell-syntax"
CODE = "BB001"
SEVERITY = Severity.ERROR
SUMMARY = "a shell file that does not parse"


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    for path in facts.shell_files():
        errors = facts.syntax.get(path)
        if facts.tree.is_link(path):
            continue
        if not errors:
            # bash accepts the file, but part of it is nested too deep to analyse
            deep = [e for e in facts.parser_gaps.get(path, ()) if is_too_deep(e)]
            if deep:
                launcher = path in facts.broken_launchers
                tail = "; what its entries run is not analysed" if launcher else ""
                yield Finding(ID, CODE, SEVERITY, path, deep[0].pos.line, deep[0].pos.col, deep[0].message + tail,
                              (), tuple(entries_of(facts, path)) if launcher
                              else (), key=path)
            continue
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        yield Finding(ID, CODE, SEVERITY, path, first.pos.line, first.pos.col,
                      f"{first.message}{more}; this file was not analysed", key=path)
