"""Word expansion, parameters, command substitution, arithmetic and tests."""

from __future__ import annotations

import posixpath

from bot.shell.evaluator import arith as _arith
from bot.shell.evaluator import reads as _reads
from bot.shell.evaluator.builtins import (
    _binary,
    _int_or_none,
    _nonempty,
)
from bot.shell.evaluator.core import Core
from bot.shell.evaluator.options import (
    _NAME_RE,
)
from bot.shell.evaluator.state import Dispatch, Exited, State, Var
from bot.shell.evaluator.wordops import (
    _join_words,
    _norm,
    _strip_trailing_newlines,
)
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import (
    EMPTY,
    Pat,
    TooLong,
    Val,
    concat,
    is_known,
    known,
    leading,
    lit,
    match,
    pat_from_val,
    remove,
    replace,
    unknown,
)

# Parameters ``lookup`` answers itself (never from a variable of the path)
_SPECIAL_NAMES = frozenset({"@", "*", "#", "?", "$", "!", "-", "RANDOM", "SECONDS", "LINENO", "BASHPID",
                            "EPOCHSECONDS", "PWD"})


class Expand(Core):
    # ---------------------------------------------------------------- paths
    def normalize(self, value: Val, st: State) -> Val:
        """Make a script path repo-relative where possible."""
        head = leading(value)
        for alias in self.opt.workspace_aliases:
            a = alias.rstrip("/")
            if head == a or head.startswith(a + "/"):
                rest = head[len(a) :].lstrip("/")
                return _norm(concat(lit(rest), value[1:]))
        if head.startswith("/"):
            return value
        if head.startswith("~"):
            return value
        if not value:
            return value
        base = st.cwd
        if base and not is_known(base):
            return concat(base, lit("/"), value)
        prefix = known(base) or ""
        joined = concat(lit(prefix + "/" if prefix else ""), value)
        return _norm(joined)

    def _resolve_dir(self, target: Val, st: State) -> Val:
        k = known(target)
        if k is None:
            return unknown("cwd")
        norm = self.normalize(target, st)
        nk = known(norm)
        if nk is None or nk.startswith(("/", "../")):
            return unknown(f"cwd {k}")
        nk = nk.rstrip("/")
        if nk in (".", ""):
            return EMPTY
        if not self.fs.is_dir(nk):
            return unknown(f"cwd {k}")  # made at run time (a clone, a build dir): not the repo
        return lit(nk)

    def file_test(self, op: str, value: Val, st: State) -> bool | None:
        path = known(self.normalize(value, st))
        if path is None or path.startswith(("/", "~")) or path.startswith("../"):
            return None
        path = path.rstrip("/") or "."
        parent = posixpath.dirname(path)
        if parent and not self.fs.is_dir(parent):
            return None  # a folder the repo does not have: made at run time, if at all
        if op in ("-f", "-s", "-r"):
            return self.fs.is_file(path)
        if op == "-d":
            return self.fs.is_dir(path) or path == "."
        if op in ("-e", "-a"):
            return self.fs.is_file(path) or self.fs.is_dir(path)
        return None

    # -------------------------------------------------------------- words
    def expand(self, word: ir.Word, st: State) -> Val:
        b = self.budget
        b.steps += 1  # ``_tick``, inline: once per word
        if b.steps >= b._next_check:
            self._checkpoint()
        parts = word.parts
        if len(parts) == 1 and type(parts[0]) is ir.Lit:  # a literal word (most are): no reads
            text = parts[0].text
            if len(text) <= b.limits.max_value:
                return (text,) if text else EMPTY
            return self._cap((text,), st)
        if st.nounset or self.opt.record_reads:
            return _reads.expand_at(self, word, st)
        out: list[Val] = []
        for p in parts:
            out.append(self.part(p, st))
        return self._cap(concat(*out), st)

    def pattern(self, word: ir.Word, st: State) -> Pat:
        out: list[object] = []
        for p in word.parts:
            if isinstance(p, ir.Lit):
                out.append((p.text, not p.quoted))
            else:
                v = self.part(p, st)
                glob = not getattr(p, "quoted", False)
                out.extend(pat_from_val(v, glob))
        return tuple(out)  # type: ignore[arg-type]

    def part(self, p: ir.Part, st: State) -> Val:
        kind = type(p)
        if kind is ir.Lit:
            return lit(p.text)  # type: ignore[union-attr]
        if kind is ir.Param:
            return self.param(p, st)  # type: ignore[arg-type]
        if kind is ir.CmdSub:
            return self.cmdsub(p, st)  # type: ignore[arg-type]
        return self.arith(p.text, st)  # type: ignore[union-attr]

    def lookup(self, name: str, st: State) -> Val | None:
        """The value of a parameter, None when unset."""
        if name not in _SPECIAL_NAMES and not name.isdigit():  # a plain variable (most reads)
            var = st.vars.get(name)
            if self._frames:
                if var is None:
                    self._frames[-1].add(name)
                else:
                    self._frames[-1].update(var.deps)
            if var is None and (self.opt.unset_is_unknown or self._unknown_name(name)):
                return unknown(f"${name}")
            return var.value if var is not None else None
        if name.isdigit():
            n = int(name)
            if n == 0:
                v = st.vars.get("0")
                return v.value if v else None
            return st.argv[n - 1] if n - 1 < len(st.argv) else None
        if name in ("@", "*"):
            return _join_words(list(st.argv))
        if name == "#":
            return lit(str(len(st.argv)))
        if name == "?":
            return lit(str(st.status)) if st.status is not None else unknown("$?")
        return unknown(f"${name}")  # $ ! - RANDOM SECONDS LINENO BASHPID EPOCHSECONDS PWD: this run's own

    def param(self, p: ir.Param, st: State) -> Val:
        op = p.op
        if p.name in ("BASH_SOURCE", "FUNCNAME") and op in ("", "["):
            return lit(st.file) if p.name == "BASH_SOURCE" else unknown("$FUNCNAME")
        value = self.lookup(p.name, st)
        if st.nounset or self.opt.record_reads:
            ended = _reads.param_read(self, p, value, st)
            if ended is not None:
                return ended
        if op == "":
            return value if value is not None else EMPTY
        if op == "len":
            k = known(value or EMPTY)
            return lit(str(len(k))) if k is not None else unknown(f"${{#{p.name}}}")
        if op in ("-", ":-", "=", ":=", "?", ":?", "+", ":+"):
            colon = op.startswith(":")
            base = op[-1]
            is_set = value is not None
            empty = known(value or EMPTY) == ""
            maybe_empty = value is not None and not is_known(value) and not leading(value) and \
                not any(isinstance(x, str) and x for x in value)
            use_alt = (not is_set) or (colon and empty)
            if colon and maybe_empty:
                return unknown(f"${{{p.name}{op}...}}")
            if base == "+":
                return (self.expand(p.arg, st) if p.arg else EMPTY) if not use_alt else EMPTY
            if not use_alt:
                return value or EMPTY
            if base == "-":
                return self.expand(p.arg, st) if p.arg else EMPTY
            if base == "=":
                v = self.expand(p.arg, st) if p.arg else EMPTY
                st.setvar(p.name, Var(v, st.vars[p.name].exported if p.name in st.vars else False, None))
                return v
            # ? : error, the script exits
            self._control({p.name})
            st.flow = "exit"
            st.status = 1
            return EMPTY
        if value is None:
            value = EMPTY
        if op in ("#", "##", "%", "%%"):
            pat = self.pattern(p.arg, st) if p.arg else ()
            r = remove(value, pat, op, self._tick)
            return r if r is not None else unknown(f"${{{p.name}{op}...}}")
        if op in ("/", "//", "/#", "/%"):
            pat = self.pattern(p.arg, st) if p.arg else ()
            repl = self.expand(p.arg2, st) if p.arg2 else EMPTY
            try:
                r = replace(value, pat, repl, op, self._tick, self.budget.value_limit)
            except TooLong:
                self._hit(self.budget.value_what(), st, f"${{{p.name}{op}...}}")
                return unknown(self.budget.value_what())
            return r if r is not None else unknown(f"${{{p.name}{op}...}}")
        if op == ":":
            k = known(value)
            off = _int_or_none(self.expand(p.arg, st)) if p.arg else 0
            length = _int_or_none(self.expand(p.arg2, st)) if p.arg2 else None
            if k is None or off is None or (p.arg2 is not None and length is None):
                return unknown(f"${{{p.name}:...}}")
            start = off if off >= 0 else max(0, len(k) + off)
            if length is None:
                return lit(k[start:])
            end = start + length if length >= 0 else len(k) + length
            return lit(k[start:end])
        if op in ("^^", ",,", "^", ","):
            k = known(value)
            if k is None:
                return unknown(f"${{{p.name}{op}}}")
            if op == "^^":
                return lit(k.upper())
            if op == ",,":
                return lit(k.lower())
            return lit((k[:1].upper() if op == "^" else k[:1].lower()) + k[1:])
        if op == "!":
            k = known(value)
            if k and _NAME_RE.match(k):
                target = self.lookup(k, st)
                return target if target is not None else EMPTY
            return unknown(f"${{!{p.name}}}")
        return unknown(f"${{{p.name}{op}...}}")

    def cmdsub(self, p: ir.CmdSub, st: State) -> Val:
        child = st.copy()
        child.out = EMPTY
        child.status = 0
        results = self.block(p.body, [child])
        outs = set()
        for r in results:
            for e in r.events:
                if isinstance(e, Exited):
                    continue
                if isinstance(e, Dispatch) and e.via in ("bash", "sh"):
                    e = Dispatch(e.target, e.raw, e.loc, e.built_at, "subst", e.var_parts)
                st.emit(e)
            outs.add(r.out if r.out is not None else unknown("output"))
        statuses = {r.status for r in results}
        st.status = statuses.pop() if len(statuses) == 1 else None
        if len(outs) == 1:
            out = outs.pop()
            return _strip_trailing_newlines(out)
        return unknown("$(...)")

    def arith(self, text: str, st: State) -> Val:
        assigned: dict[str, int] = {}
        try:
            value = _arith.evaluate(text, lambda name: self._arith_name(name, st), assigned)
        except _arith.Capped as e:
            self._hit("arithmetic beyond 64 bits", st, f"$(({text.strip()[:40]})): {e}")
            return unknown("$((...)) beyond 64 bits")
        if value is None:
            return unknown("$((...))")
        for name, v in assigned.items():
            old = st.vars.get(name)
            st.setvar(name, Var(lit(str(v)), old.exported if old else False, old.origin if old else None))
        return lit(str(value))

    def _arith_name(self, name: str, st: State) -> int | None:
        """A variable in arithmetic: its integer value; unset or empty is 0, as in bash."""
        value = self.lookup(name, st)
        if value is None:
            return 0
        k = known(value)
        if k is None:
            return None
        k = k.strip()
        if not k:
            return 0
        try:
            return int(k, 0) if not (len(k) > 1 and k.startswith("0") and k.isdigit()) else int(k, 8)
        except ValueError:
            return None

    # --------------------------------------------------------------- tests
    def test(self, expr: ir.TestExpr | None, st: State) -> bool | None:
        if expr is None:
            return False
        if isinstance(expr, ir.TNot):
            v = self.test(expr.expr, st)
            return None if v is None else not v
        if isinstance(expr, ir.TAnd):
            a = self.test(expr.left, st)
            if a is False:
                return False
            b = self.test(expr.right, st)
            if a is True:
                return b
            return False if b is False else None
        if isinstance(expr, ir.TOr):
            a = self.test(expr.left, st)
            if a is True:
                return True
            b = self.test(expr.right, st)
            if a is False:
                return b
            return True if b is True else None
        if isinstance(expr, ir.TWord):
            if self.opt.record_reads:
                return _nonempty(_reads.operand(self, expr.word, st))
            return _nonempty(self.expand(expr.word, st))
        if isinstance(expr, ir.TUnary):
            if self.opt.record_reads and expr.op in ("-n", "-z"):
                return self.unary(expr.op, _reads.operand(self, expr.arg, st), st)
            return self.unary(expr.op, self.expand(expr.arg, st), st)
        left = self.expand(expr.left, st)
        if expr.op in ("==", "=", "!="):
            v = match(left, self.pattern(expr.right, st), self._tick)
            if expr.op == "!=":
                return None if v is None else not v
            return v
        right = self.expand(expr.right, st)
        return _binary(expr.op, left, right, self._tick)

    def unary(self, op: str, value: Val, st: State) -> bool | None:
        if op == "-n":
            return _nonempty(value)
        if op == "-z":
            v = _nonempty(value)
            return None if v is None else not v
        if op in ("-f", "-e", "-a", "-d", "-s", "-r"):
            return self.file_test(op, value, st)
        if op == "-v":
            k = known(value)
            return (k in st.vars) if k else None
        return None
