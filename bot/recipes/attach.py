"""Recipe sources a lint compares with, and where they come from.

A lint compares entries with official recipes only when asked: by ``lint --recipes`` (a
directory, or ``github``), by the repo's configuration (``recipes: {local: [DIR]}``:
recipe collections kept in the repo, read from the same tree as everything else, so from
the base in pull requests), or by the pull-request bot. The sources, and the notes of those
that could not be reached, ride on the facts (``attach``); the rule ``recipe-mismatch``
reads them there (``attached``) and never opens anything itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.recipes.model import Source
from bot.repo.facts import Facts
from bot.repo.files.tree import Tree

if TYPE_CHECKING:
    pass

VLLM_MARK, SGLANG_DIR = "strategies", "docs_new/src/snippets/configs"


class TreeSource:
    """A recipe collection at ``root`` inside the linted tree (a work tree or a revision)."""

    def __init__(self, tree: Tree, root: str, kind: str) -> None:
        self.tree, self.root, self.kind = tree, root.strip("/"), kind
        self.name = f"{self.root or '.'} (in the repo)"
        self._revision: str | None = None

    @property
    def revision(self) -> str:
        """``tree:`` and a digest of the collection's files: what the renderers' memos key on
        (two repos, or two revisions of one, with a folder of the same name differ)."""
        if self._revision is None:
            h = hashlib.sha1()
            for p in self.list(""):
                h.update(p.encode() + b"\0" + (self.tree.read(self._path(p)) or b"") + b"\0")
            self._revision = "tree:" + h.hexdigest()[:12]
        return self._revision

    def _path(self, path: str) -> str:
        return f"{self.root}/{path}" if self.root else path

    def get(self, path: str) -> str | None:
        return self.tree.text(self._path(path))

    def list(self, prefix: str) -> list[str]:
        base = self._path(prefix).strip("/")
        cut = len(self.root) + 1 if self.root else 0
        return sorted(p[cut:] for p in self.tree.files() if p.startswith(base + "/") or p == base)


def tree_sources(tree: Tree, dirs: Sequence[str]) -> tuple[list[Source], list[str]]:
    """The collections kept in the repo at ``dirs``, each recognised by its layout."""
    out: list[Source] = []
    notes: list[str] = []
    files = tree.files()
    for d in dirs:
        root = d.strip("/")
        pre = f"{root}/" if root else ""
        found = False
        if any(p.startswith(f"{pre}models/") for p in files) and any(p.startswith(f"{pre}{VLLM_MARK}/") for p in files):
            out.append(TreeSource(tree, root, "vllm"))
            found = True
        if any(p.startswith(f"{pre}{SGLANG_DIR}/") for p in files):
            out.append(TreeSource(tree, root, "sglang"))
            found = True
        if not found:
            notes.append(f"{d}: neither a vLLM recipes layout (models/ and strategies/) nor an SGLang cookbook "
                         f"one ({SGLANG_DIR}/)")
    return out, notes


@dataclass(frozen=True)
class Attached:
    sources: tuple[Source, ...]
    notes: tuple[str, ...] = ()
    only: frozenset[str] | None = None  # the entries to compare (a pull request's); None: every one


def attach(facts: Facts, sources: Sequence[Source], notes: Sequence[str] = (),
           only: frozenset[str] | None = None) -> None:
    facts.memo["recipes.sources"] = Attached(tuple(sources), tuple(notes), only)


def attached(facts: Facts) -> Attached | None:
    """The sources attached; None when the lint was not asked to compare."""
    got = facts.memo.get("recipes.sources")
    return got if isinstance(got, Attached) else None
