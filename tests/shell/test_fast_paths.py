"""The evaluator's fast paths answer exactly as the general code they stand for."""

from __future__ import annotations

import random

from bot.shell.evaluator.state import Exited, Loc, Read, Sourced, holds, merge_events
from bot.shell.evaluator.varmap import VarMap
from bot.shell.evaluator.wordops import _split_by, _split_fields, _splits, cmd_info
from bot.shell.ir import nodes as ir
from bot.shell.ir.nesting import rebase
from bot.shell.ir.stars import _star_segments, _Stars
from bot.shell.ir.values import _glob_regex, glob_regex, re2_compile


def test_star_globs_match_as_re2_does() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        pat = tuple((("".join(rng.choice("ab*./\n é") for _ in range(rng.randint(0, 4)))), rng.random() < 0.7)
                    for _ in range(rng.randint(0, 3)))
        segs = _star_segments(pat)
        if segs is None:
            continue
        rx = re2_compile(_glob_regex(pat))
        assert rx is not None
        stars = _Stars(segs, lambda n: None)
        for _ in range(4):
            s = "".join(rng.choice("ab./\n é*") for _ in range(rng.randint(0, 8)))
            assert stars.full(s) == (rx.fullmatch(s) is not None), (pat, s)


def test_only_star_globs_take_the_string_path() -> None:
    assert isinstance(glob_regex(((r"*.sh", True),)), _Stars)
    assert not isinstance(glob_regex((("a?c", True),)), _Stars)
    assert not isinstance(glob_regex((("[ab]*", True),)), _Stars)


def test_a_star_glob_charges_what_re2_charged() -> None:
    spent: list[int] = []
    g = glob_regex((("*x", True),), spent.append)
    assert g is not None and g.full("a" * 600 + "x")
    assert spent == [601 // 256 + 1]


def test_varmap_of_is_set_in_turn() -> None:
    items = [(f"V{i % 37}", i) for i in range(200)]
    one: VarMap[int] = VarMap()
    for name, value in items:
        one.set(name, value)
    bulk = VarMap.of(items)
    assert bulk == one and bulk.hash == one.hash and len(bulk) == len(one)
    assert list(bulk.items()) == list(one.items()) and list(bulk) == list(one)
    assert not bulk.diff(one)


def test_events_merge_as_membership_does() -> None:
    a = Loc("a.sh", 1)
    shared = (Sourced(("x",), a), Read("X", a, "plain"))
    mine = (*shared, Exited(a, 1), Read("Y", a, "plain"))
    theirs = (*shared, Read("Y", Loc("a.sh", 1), "plain"), Exited(a, 0), Sourced(("x",), Loc("a.sh", 1)))
    expect = mine
    for e in theirs:
        if e not in expect and not isinstance(e, Exited):
            expect = expect + (e,)
    assert merge_events(mine, theirs, Exited) == expect
    assert holds(mine, Read("Y", Loc("a.sh", 1), "plain")) and not holds(mine, Exited(a, 2))


def test_command_info_and_splitting() -> None:
    w_lit = ir.Word((ir.Lit("echo"),))
    w_param = ir.Word((ir.Param("X"),))
    w_quoted = ir.Word((ir.Param("Y", quoted=True),))
    cmd = ir.Command((w_lit, w_param, w_quoted))
    first, stdout, split, subst = cmd_info(cmd)
    assert (first, stdout, subst) == ("echo", False, ())
    assert split == (False, True, False) == tuple(_splits(w) for w in cmd.words)
    argv = [("echo",), ("a b",), ("c d",)]
    assert _split_by(list(argv), split) == _split_fields(list(argv), cmd.words)
    assert cmd_info(ir.Command((w_lit,)))[2] is None


def test_flat_words_rebase_as_the_walk_does() -> None:
    w = ir.Word((ir.Lit("-n"), ir.Param("X", quoted=True)), ir.Pos(1, 3, 1, 9, 2, 8))
    moved = rebase(w, 4, 10, 100)
    assert moved == ir.Word(w.parts, ir.Pos(5, 13, 5, 19, 102, 108))
