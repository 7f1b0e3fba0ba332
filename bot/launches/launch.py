"""A launch: one (entry, point, launcher), the script it runs and what that script serves; and
the concurrencies a point runs at. The records ``bot.launches.gather`` (single node) and
``bot.launches.multinode`` (recipes of a hand-off) both make.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.repo.load.configs import Entry, Point
from bot.serve.model import Command


@dataclass(frozen=True)
class Launch:
    """One (entry, point, launcher): the script it runs and what that script serves."""

    entry: Entry
    point: Point
    conc: str | None  # the concurrency the point runs at (its first, unless every one is asked for)
    launcher: str
    script: str | None
    server: Command | None
    client: Command | None
    others: tuple[Command, ...] = ()  # further server commands (other paths, several servers)
    handoff: str = ""  # the boundary the script's env crosses ("docker", "srun --export", "")
    env_complete: bool = True  # False when more may cross than we can tell (``--env-file``)
    # Engine-style variables the script sets without ``export``: they never reach the server.
    unexported: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value, "path:line")
    reasons: tuple[str, ...] = ()  # why ``server`` is missing
    # The launcher was not read from runners.yaml (the label lists no nodes) but is the only
    # one named for the label's nodes: why it was assumed (makes a resolved launch partial).
    assumed: str = ""
    recipe: str | None = None  # multinode: the recipe file the engine args come from
    workers: Mapping[str, Command] = field(default_factory=dict)  # multinode: "prefill" / "decode" / ...


def concurrencies(point: Point) -> list[str]:
    """Every concurrency a point runs at: its ``conc-list``, or ``conc-start`` doubling up to
    ``conc-end`` (as InferenceX's sweep generator does)."""
    f = point.fields
    cl = f.get("conc-list")
    if isinstance(cl, list) and cl:
        return [str(c) for c in cl]
    start, end = f.get("conc-start", f.get("conc")), f.get("conc-end")
    if not isinstance(start, int) or isinstance(start, bool):
        return [str(start)] if start is not None else []
    if not isinstance(end, int) or isinstance(end, bool) or end < start or start <= 0:
        return [str(start)]
    out: list[str] = []
    c = start
    while c <= end and len(out) < 64:
        out.append(str(c))
        c *= 2
    return out
