"""Shared by the map's tests: the seed and its fix (the seed PR), a map written by the real CLI."""

from __future__ import annotations

from pathlib import Path

from bot.cli import main
from bot.config import load_config
from bot.lint import lint
from bot.repo.facts import Facts
from bot.repo.files.git import open_tree
from tests.conftest import EXAMPLE, copy_repo

MTP = ("kimik2.5-int4-mi300x-vllm-mtp", "kimik2.5-int4-mi325x-vllm-mtp")
PLAIN = {"kimik2.5-int4-mi300x-vllm-mtp": "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh",
         "kimik2.5-int4-mi325x-vllm-mtp": "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi325x.sh"}


def write_map(repo: Path, out: Path, *extra: str) -> Path:
    assert main(["map", str(repo), "--html", str(out), *extra]) == 0
    return out


def fixed_seed(tmp: Path) -> Path:
    """The seed with lint's own fix applied (its MI300X/MI325X launchers append SPEC_SUFFIX):
    the head of the seed PR, whose base is the seed."""
    head = copy_repo(EXAMPLE, tmp / "fixed")
    main(["lint", str(head), "--fix"])
    assert "SPEC_SUFFIX" in (head / "runners" / "launch_mi300x-amds.sh").read_text()
    return head


def facts_of(repo: Path) -> Facts:
    tree = open_tree(str(repo))
    return lint(tree, load_config(tree, None)).facts
