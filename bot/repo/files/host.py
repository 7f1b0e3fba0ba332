"""What the repo's caches ask of the facts they work for (``bot.repo.facts.Facts``), as a
protocol: the tree, the memo of this lint, a script's parse, the profile's env checks. The
caches (``parsed``, ``evalcache``, ``recipefile``) take any such host and never import Facts:
Facts imports them, they import this.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

from bot.repo.files.tree import Tree
from bot.shell.ir import nodes as ir


class Settings(Protocol):
    """The part of the profile the caches read (``bot.repo.env.profile.Profile``)."""

    @property
    def env_checks(self) -> Collection[str]: ...


class Host(Protocol):
    @property
    def tree(self) -> Tree: ...
    @property
    def memo(self) -> dict[str, Any]: ...
    @property
    def profile(self) -> Settings: ...
    def script(self, path: str) -> ir.Script | None: ...
