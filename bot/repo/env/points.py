"""Which search-space points of an entry are evaluated: one per key of what can change the
script that runs (scenario, sequence lengths, the profile's ``point-keys``)."""

from __future__ import annotations

from bot.repo.env.profile import Profile
from bot.repo.load.configs import Point

__all__ = ["point_key", "representatives"]


def representatives(profile: Profile, points: tuple[Point, ...]) -> list[Point]:
    """The points to evaluate: by default one per scenario, sequence length and value of
    the ``point-keys`` fields (spec-decoding); sizing fields (tp, ep, conc, worker
    blocks) choose resources, not scripts. ``all-points: true`` evaluates every point."""
    if profile.all_points:
        return list(points)
    seen: dict[tuple[object, ...], Point] = {}
    for p in points:
        seen.setdefault(point_key(profile, p), p)
    return list(seen.values())


def point_key(profile: Profile, p: Point) -> tuple[object, ...]:
    """Points with the same key run the same script (the run of one stands for all)."""
    if profile.all_points:
        return (id(p),)
    return (p.scenario, str(p.seq.get("isl")), str(p.seq.get("osl")),
            tuple(str(p.fields.get(k)) for k in profile.point_keys))
