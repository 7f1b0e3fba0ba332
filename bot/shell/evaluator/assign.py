"""Declarations and assignments: ``export``/``local``/``declare``, ``X=...``, ``X+=...``,
arrays, and (``Options.sinks``) where each piece of a value was written."""

from __future__ import annotations

from bot.shell.evaluator.core import Core
from bot.shell.evaluator.options import _NAME_RE
from bot.shell.evaluator.state import Loc, State, Var
from bot.shell.evaluator.wordops import _join_words
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import EMPTY, Val, concat, known


class Assigns(Core):
    # -------------------------------------------------------------- commands
    def decl(self, stmt: ir.Decl, st: State) -> list[State]:
        export = stmt.kind == "export" or any("x" in f for f in stmt.flags if f.startswith("-"))
        is_local = stmt.kind in ("local",) or (stmt.kind in ("declare", "typeset") and bool(st.locals))
        for a in stmt.assigns:
            name = a.name
            if is_local and st.locals and name not in st.locals[-1]:
                st.locals[-1][name] = st.vars.get(name)
            old = st.vars.get(name)
            if a.value is None and a.array is None:
                if old is not None:
                    st.setvar(name, Var(old.value, old.exported or export, old.origin, old.parts, old.deps, old.items,
                                        old.segments))
                elif is_local:
                    st.setvar(name, Var(EMPTY, False, Loc(st.file, a.pos.line, a.pos.col)))
                # ``export X`` with X unset leaves it unset
                continue
            self.assign(a, st, exported=export or (old.exported if old else False))
        st.status = 0
        return [st]

    def assign(self, a: ir.Assign, st: State, exported: bool = False) -> None:
        name = a.name
        if name.endswith("[]"):
            return
        self._push()
        items = None
        segments: tuple[tuple[int, int], ...] | None = None
        if a.array is not None and self.opt.sinks is not None:
            items = self.array_items(a, st)
            value = self._cap(_join_words([v for v, _ in items]), st)
        elif a.array is not None:
            vals = [self.expand(w, st) for w in a.array]
            value = _join_words(vals)
        else:
            assert a.value is not None
            if self.opt.sinks is not None:
                value, segments = self.expand_segments(a.value, st)
            else:
                value = self.expand(a.value, st)
        if a.append and items is None:
            old = st.vars.get(name)
            value = self._cap(concat(old.value if old else EMPTY, value), st)
            if old is not None and self._frames:
                self._frames[-1].update(old.deps)
            if segments is not None:
                segments = _seg_join(old.segments if old is not None else (), old.value if old else EMPTY,
                                     segments, a.pos.line)
                if sum(n for n, _ in segments) != _width(value):  # the value was capped
                    segments = ((_width(value), a.pos.line),)
        deps = self._pop()
        parts = self._var_parts(a.value, st) if a.value is not None else ()
        # One object for equal assignments on different paths: a join skips what paths share.
        key = (value, exported, st.file, a.pos.line, a.pos.col, parts, deps, items, segments)
        var = self._assigned.get(key)
        if var is None:
            var = Var(value, exported, Loc(st.file, a.pos.line, a.pos.col), parts, deps, items, segments)
            self._assigned[key] = var
        st.setvar(name, var)

    def _var_parts(self, word: ir.Word, st: State) -> tuple[tuple[str, str], ...]:
        names = _param_names(word)
        if not names:
            return ()
        out: list[tuple[str, str]] = []
        for name in names:
            var = st.vars.get(name)
            if var is not None:
                k = known(var.value)
                if k is not None:
                    out.append((name, k))
                out.extend(var.parts)
        return tuple(dict.fromkeys(out))


_PARAM_NAMES: dict[int, tuple[ir.Word, tuple[str, ...]]] = {}


def _param_names(word: ir.Word) -> tuple[str, ...]:
    """The variable names of a word's top-level parameters, in order (once per word object)."""
    hit = _PARAM_NAMES.get(id(word))
    if hit is not None and hit[0] is word:
        return hit[1]
    names = tuple(p.name for p in word.parts if isinstance(p, ir.Param) and _NAME_RE.match(p.name))
    if len(_PARAM_NAMES) > 200_000:
        _PARAM_NAMES.clear()
    _PARAM_NAMES[id(word)] = (word, names)
    return names


def _seg_join(old: tuple[tuple[int, int], ...] | None, old_value: Val, new: tuple[tuple[int, int], ...],
              line: int) -> tuple[tuple[int, int], ...]:
    """The segments of ``X+=...``: the old value's, then the appended text's."""
    if old is None:
        old = ((_width(old_value), line),) if old_value else ()
    joined = (*old, *new)
    if len(joined) > 256:  # as ``serving.MAX_SEGMENTS``: too fine to keep
        return ((sum(n for n, _ in joined), line),)
    return joined


def _width(v: Val) -> int:
    """A value's length with each unknown part counted as one character (as segments count)."""
    return sum(len(p) if isinstance(p, str) else 1 for p in v)
