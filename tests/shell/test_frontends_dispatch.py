"""Differential: both front-ends give the same dispatch facts on every script bashlex parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.repo.env.profile import Profile
from bot.repo.facts import Facts, _RepoFS
from bot.repo.files.tree import WorkTree
from bot.shell.evaluator.evaluate import Evaluator, Options
from bot.shell.front import bashlex_front
from bot.shell.front.parse import parse as ts_parse
from bot.shell.ir.values import describe, lit
from tests.conftest import EXAMPLE, FIXTURES, NOT_REPOS

REPOS = [EXAMPLE] + sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_REPOS)
ENV = {"SPEC_DECODING": "mtp", "EXP_NAME": "dsr1_1k1k", "MODEL_PREFIX": "dsr1", "PRECISION": "fp8",
       "FRAMEWORK": "sglang", "SCENARIO_SUBDIR": "fixed_seq_len/", "IS_MULTINODE": "false", "TP": "8",
       "RUNNER_NAME": "x_0", "IMAGE": "img:1"}


def facts_of(repo: Path, script: str, parser: object) -> list[tuple[str, str, int]]:
    tree = WorkTree(str(repo))
    facts = Facts(tree, Profile(), parser)  # type: ignore[arg-type]
    parsed = facts.script(script)
    assert parsed is not None
    opts = Options(parse=parser)  # type: ignore[arg-type]
    result = Evaluator(_RepoFS(facts), opts).run(parsed, {k: lit(v) for k, v in ENV.items()}, argv0=script)
    out = [("dispatch", describe(d.target), d.loc.line) for d in result.dispatches()]
    out += [("source", describe(s.target), s.loc.line) for s in result.sourced()]
    return sorted(out)


def test_same_dispatch_facts_where_bashlex_parses() -> None:
    compared = 0
    mismatches = []
    for repo in REPOS:
        for path in sorted(repo.rglob("*.sh")):
            rel = path.relative_to(repo).as_posix()
            if bashlex_front.parse(rel, path.read_bytes()).errors:
                continue
            compared += 1
            a, b = facts_of(repo, rel, ts_parse), facts_of(repo, rel, bashlex_front.parse)
            if a != b:
                mismatches.append(f"{repo.name}/{rel}: tree-sitter {a} != bashlex {b}")
    if compared == 0:
        pytest.skip("bashlex parses none of the fixture scripts")
    assert not mismatches, "\n".join(mismatches)
    assert compared >= 20
