"""The persistent variable map of a path (bot.shell.evaluator.varmap) against a plain dict model,
and the costs it promises: O(1) forks, comparisons and joins that look only at what two
paths do not share."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.shell.evaluator.state import State, Var, changed, join
from bot.shell.evaluator.varmap import VarMap
from bot.shell.front.parse import parse
from bot.shell.ir.values import lit

NAMES = st.sampled_from([f"V{i}" for i in range(40)] + ["PATH", "HOME", "_", "x"])
# (op, map index, name, value): set/del on one map, or fork a map into a new one
OPS = st.lists(st.tuples(st.sampled_from(["set", "del", "fork"]), st.integers(0, 7), NAMES, st.integers(0, 3)),
               max_size=80)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_forked_maps_behave_like_separate_dicts(ops: list[tuple[str, int, str, int]]) -> None:
    maps: list[VarMap[int]] = [VarMap()]
    models: list[dict[str, int]] = [{}]
    for op, i, name, value in ops:
        i %= len(maps)
        if op == "fork":
            maps.append(maps[i].copy())
            models.append(dict(models[i]))
        elif op == "set":
            maps[i].set(name, value)
            models[i][name] = value
        else:
            assert maps[i].pop(name) == models[i].pop(name, None)
    for m, model in zip(maps, models, strict=True):
        assert dict(m.items()) == model and sorted(m) == sorted(model) and len(m) == len(model)
        for name in model:
            assert name in m and m[name] == model[name] and m.get(name) == model[name]
        assert "absent" not in m and m.get("absent", -1) == -1
    for a, ma in zip(maps, models, strict=True):
        for b, mb in zip(maps, models, strict=True):
            assert (a == b) == (ma == mb)
            if ma == mb:
                assert a.hash == b.hash
            differing = {n for n in ma.keys() | mb.keys() if ma.get(n) != mb.get(n)}
            listed = {n for n, _, _ in a.diff(b)}
            assert differing <= listed
            for n, va, vb in a.diff(b):
                assert (va, vb) == (ma.get(n), mb.get(n))


def test_a_fork_shares_every_bucket_until_written() -> None:
    m: VarMap[int] = VarMap()
    for i in range(5000):
        m.set(f"V{i}", i)
    f = m.copy()
    assert f.ident() == m.ident() and f == m and f.diff(m) == []
    f.set("V7", -1)
    assert f.ident() != m.ident() and m["V7"] == 7 and f["V7"] == -1
    assert [(n, a, b) for n, a, b in f.diff(m) if a != b] == [("V7", -1, 7)]
    # the fork copied one bucket, not the 5,000 variables
    shared = sum(x is y for x, y in zip(f._b, m._b, strict=True))
    assert shared == len(m._b) - 1


def test_the_second_writer_of_a_fork_copies_nothing() -> None:
    m: VarMap[int] = VarMap()
    m.set("A", 1)
    f = m.copy()
    del m  # the other path is dropped (a merge keeps one of two)
    before = id(f._b)  # a copy would be made while this list is alive: a new id
    f.set("A", 2)
    assert id(f._b) == before and f["A"] == 2


def test_deleting_the_last_name_of_a_bucket_compares_equal_to_never_setting_it() -> None:
    a: VarMap[int] = VarMap()
    b: VarMap[int] = VarMap()
    a.set("X", 1)
    a.pop("X")
    assert a == b and a.hash == b.hash == 0 and len(a) == 0 and a.diff(b) == []


def test_join_merges_only_what_differs() -> None:
    base = State()
    for i in range(3000):
        base.setvar(f"V{i}", Var(lit(str(i))))
    a, b = base.copy(), base.copy()
    a.setvar("V1", Var(lit("one")))
    b.setvar("V2", Var(lit("two")))
    b.setvar("NEW", Var(lit("new")))
    assert sorted(n for n in changed(a, b) if a.vars.get(n) != b.vars.get(n)) == ["NEW", "V1", "V2"]
    interned: dict[tuple[object, ...], Var] = {}
    j = join(a, b, interned=interned)
    for name in ("V1", "V2", "NEW"):
        assert j.vars[name].value[0].why == f"${name} (merged paths)"  # type: ignore[union-attr]
    assert j.vars["V3"] is base.vars["V3"] and a.vars["V1"].value == lit("one")  # ``a`` untouched
    k = join(a.copy(), b, interned=interned)
    assert k.vars["V1"] is j.vars["V1"]  # one object per merged value: later joins skip it by identity


def test_paths_with_equal_variables_are_recognised_as_one() -> None:
    """Two paths that set the same variables after forking compare equal (by content:
    each holds its own copy of the bucket it wrote)."""
    from bot.shell.evaluator.evaluate import Evaluator, Options
    from tests.shell.test_evaluate import DictFS

    text = "\n".join([f'if [[ "$HOSTNAME" == a{i}* ]]; then echo a; else echo b; fi\nY_{i}=$Y_{i - 1}{i}'
                      for i in range(6)] + ["bash b/x.sh"]) + "\n"
    ev = Evaluator(DictFS({}), Options(parse=parse, max_paths=4, unknown_names=lambda name: name == "HOSTNAME"))
    r = ev.run(parse("runners/launch_x.sh", text.encode()), {})
    assert [str(d.target) for p in r.paths for d in p.events] == ["('b/x.sh',)"]
    assert not r.bound_hit  # identical paths are de-duplicated, never merged
