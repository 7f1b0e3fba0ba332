"""What a benchmark script's text says about its speculative switches (``bot.serve.specswitch``),
once per lint and kept in the persistent cache by the script's text, so that a warm lint
parses no script for the spec rules' view (``bot.launches.specview``). Facts only.

Stored as JSON (data only), decoded by ``bot.cachejson`` (an entry of another shape is a
miss, worked out again); in CI read only when sealed (``bot.cachetrust``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from bot import cache
from bot.cachejson import array, boolean, integer, string
from bot.repo.facts import Facts
from bot.repo.files import parsed as _parsed
from bot.serve import specswitch


def switches(facts: Facts, script: str) -> Mapping[str, tuple[int, ...]]:
    """``specswitch.switches`` of a script, once per lint."""
    return _static(facts, script)[0]


def cuts(facts: Facts, script: str, var: str) -> tuple[specswitch.Cut, ...] | None:
    """``specswitch.thresholds`` of a switched variable."""
    return _static(facts, script)[1].get(var)


def eval_may_disable(facts: Facts, script: str) -> bool:
    """``specswitch.may_disable(script, "EVAL_ONLY")``."""
    return _static(facts, script)[2]


Static = tuple[dict[str, tuple[int, ...]], dict[str, "tuple[specswitch.Cut, ...] | None"], bool]


def _static(facts: Facts, script: str) -> Static:
    """What the script's text says about its switches (``bot.serve.specswitch``): the
    variables and lines, the thresholds of each, whether a switch on ``EVAL_ONLY`` may turn
    speculation off. Once per lint, and kept in the persistent cache by the script's text (a
    warm lint parses no script for it)."""
    memo = facts.memo.setdefault("spec.static", {})
    if script in memo:
        return memo[script]  # type: ignore[no-any-return]
    data = _parsed.read(facts, facts.tree.resolve(script) or script) or b""
    k = cache.key("spec-static", script, data)
    stored = cache.get_json("spec-static", k)
    if stored is not None:
        try:
            memo[script] = _decode(stored)
            return memo[script]  # type: ignore[no-any-return]
        except ValueError:  # cachejson.Refused: work it out again
            pass
    parsed = facts.script(script)
    if parsed is None:
        memo[script] = ({}, {}, False)
        return memo[script]  # type: ignore[no-any-return]
    found = dict(specswitch.switches(parsed))
    got: Static = (found, {v: specswitch.thresholds(parsed, v) for v in found},
                   "EVAL_ONLY" in found and specswitch.may_disable(parsed, "EVAL_ONLY"))
    memo[script] = got
    cache.put("spec-static", k, json.dumps([
        [[v, list(lines)] for v, lines in got[0].items()],
        [[v, None if c is None else [[t, side] for t, side in c]] for v, c in got[1].items()],
        got[2]]).encode())
    return got


def _decode(stored: object) -> Static:
    switches_raw, cuts_raw, may = array(stored, 3)
    switched = {string(v): tuple(integer(x) for x in array(lines)) for v, lines in (array(e, 2) for e in
                                                                                 array(switches_raw))}
    cuts: dict[str, tuple[specswitch.Cut, ...] | None] = {}
    for v, c in (array(e, 2) for e in array(cuts_raw)):
        cuts[string(v)] = None if c is None else tuple((integer(t), string(side)) for t, side in
                                                       (array(x, 2) for x in array(c)))
    return switched, cuts, boolean(may)
