"""The cyclic garbage collector during a lint: fewer passes over objects that stay.

A lint builds a few hundred thousand objects that live until it ends (YAML nodes, IR
trees, evaluation results) and frees few in between. At the default threshold (a young
collection every 700 net allocations, an older one every 10 of those, a full one every 10
of those) the collector rescans them again and again: a quarter of a lint of InferenceX.
Inside ``fewer_collections`` a young collection runs every ``YOUNG`` allocations, and
``settle()`` (called by ``facts.gather`` after each phase) moves what exists to the
permanent generation (``gc.freeze``), which no later pass scans. Garbage without cycles
is freed at once as always; cycles among frozen objects wait until the block ends, when
everything is unfrozen and the thresholds come back; every ``COLLECT_EVERY`` lints a full
collection frees them (the next lint's ``settle`` would freeze them again: ``history`` grew
by 7 MB a commit before it released each lint's facts). Peak memory stays within a few MB of the default
(``tests/perf/bench_lint.py`` and ``compare_revs.py`` measure both).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 100_000
# Every so many lints of one process (``history``, a server) a full collection: the next lint's
# ``settle`` would otherwise freeze this one's cyclic garbage with the rest, for good. A full
# pass walks every live object (0.4-0.8 s in a ``history`` of InferenceX); ``history`` frees
# each lint's facts by reference counting (``LintResult.release``), which leaves about 9,000
# cyclic objects a lint (the evaluators), so one pass every 32 lints keeps memory as low as a
# pass every 8 did without the release (100 commits: 179 MB peak against 192 MB) at a quarter
# of the cost (5% of a ``history``).
COLLECT_EVERY = 32
_ended = 0
_lock = threading.Lock()
_users = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young threshold while the block runs; the previous thresholds come back
    (and frozen objects are unfrozen) when the last of concurrent users leaves."""
    global _users, _saved, _ended
    with _lock:
        if _users == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG, _saved[0]), *_saved[1:])
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
                gc.unfreeze()
                _ended += 1
                if _ended % COLLECT_EVERY == 0:
                    gc.collect()


def settle() -> None:
    """Inside ``fewer_collections``: stop scanning the objects that exist now."""
    with _lock:
        if _users:
            gc.freeze()
