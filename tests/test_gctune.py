"""``bot.gctune``: thresholds raised and restored, objects frozen only inside a lint."""

from __future__ import annotations

import gc
import threading

import pytest

from bot import gctune
from tests.conftest import EXAMPLE


def test_thresholds_are_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with gctune.fewer_collections():
        assert gc.get_threshold()[0] == max(gctune.YOUNG, before[0])
        assert gc.get_threshold()[1:] == before[1:]
        with gctune.fewer_collections():  # nested: still raised
            assert gc.get_threshold()[0] >= gctune.YOUNG
        assert gc.get_threshold()[0] >= gctune.YOUNG  # the inner exit did not restore early
    assert gc.get_threshold() == before


def test_settle_freezes_only_inside_and_everything_is_unfrozen_after() -> None:
    assert gc.get_freeze_count() == 0
    gctune.settle()
    assert gc.get_freeze_count() == 0  # outside a lint: nothing is frozen
    keep = [[i] for i in range(1000)]
    with gctune.fewer_collections():
        gctune.settle()
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0


def test_cycles_made_inside_are_collected_after() -> None:
    class Node:
        other: object = None

    import weakref
    with gctune.fewer_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        gctune.settle()
        del a, b
    gc.collect()
    assert ref() is None


def test_concurrent_users_restore_once_the_last_leaves() -> None:
    before = gc.get_threshold()
    inside, release = threading.Event(), threading.Event()

    def worker() -> None:
        with gctune.fewer_collections():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    with gctune.fewer_collections():
        pass
    assert gc.get_threshold()[0] >= gctune.YOUNG  # the worker is still inside
    release.set()
    t.join(10)
    assert gc.get_threshold() == before


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_run_of_lints_does_not_keep_the_cycles_each_one_left() -> None:
    """Each lint's ``settle`` would freeze the cycles the lint before it left (they wait for
    a full collection that the raised thresholds put off): every COLLECT_EVERY lints one runs,
    so a long run (``history``) keeps at most that many lints' garbage."""
    import weakref

    gc.collect()
    left: list[weakref.ref[_Cycle]] = []
    for _ in range(gctune.COLLECT_EVERY * 3):
        with gctune.fewer_collections():
            gctune.settle()
            left.append(weakref.ref(_Cycle()))  # garbage at once: a cycle nothing else holds
            gctune.settle()
    alive = sum(1 for r in left if r() is not None)
    assert alive < gctune.COLLECT_EVERY


class _Marker:
    """Something only a lint's facts hold."""


@pytest.mark.parametrize("release", [True, False])
def test_a_released_lint_frees_what_its_facts_hold_without_a_collection(release: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A lint's facts can sit in a reference cycle (on InferenceX an evaluator's file-system
    view and ``Facts.options``' closures point back at them), and then all they hold waits for
    a full collection. ``LintResult.release``, which ``history`` calls once it has a commit's
    findings, frees it by reference counting: in a ``history`` of InferenceX a full pass then
    finds a sixth of the objects (260,000 against 1,530,000 over four commits)."""
    import weakref

    from bot import cache
    from bot.config import load_config
    from bot.lint import lint
    from bot.repo.files.tree import WorkTree

    monkeypatch.setattr(cache, "_disabled", True)  # a lint that gathers, not a kept result
    tree = WorkTree(str(EXAMPLE))
    result = lint(tree, load_config(tree))
    findings = [f.text() for f in result.findings]
    marker = _Marker()
    held = weakref.ref(marker)
    result.facts.memo["marker"] = marker
    result.facts.memo["cycle"] = result.facts  # the facts in a cycle, as on InferenceX
    del marker
    gc.disable()
    try:
        if release:
            result.release()
        del result
        assert (held() is None) == release
    finally:
        gc.enable()
        gc.collect()
    assert held() is None  # a full collection frees it either way
    assert findings
