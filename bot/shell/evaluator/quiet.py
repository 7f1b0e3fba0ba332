"""The static half of dispatch slicing (``bot.shell.evaluator.slicing``): which statements of a file
are quiet, what each reads and assigns, and, to a fixed point, which assign nothing that a
statement still run reads."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bot.shell.evaluator.wordops import INERT_COMMANDS, _inert, special
from bot.shell.ir import nodes as ir

_DEFAULTS = frozenset({"-", ":-", "+", ":+"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An arithmetic assignment: ``=`` that is not part of ``==``, ``!=``, ``<=``, ``>=``; ``++``; ``--``.
_ARITH_ASSIGN = re.compile(r"(?<![=!<>])=(?!=)|\+\+|--")
_QUIET_NAMES = frozenset({":", "true", "false", "[", "test", "echo", "printf"})
_DEVNULL = frozenset({"/dev/null", "/dev/stderr", "/dev/stdout"})
_NEVER_DEAD = frozenset({"_", "IFS", "PATH", "HOME", "CDPATH", "PWD", "OLDPWD", "OPTIND", "OPTARG"})
SERVING = "\0serving"  # in the loud set of an evaluation that records ``Served`` events



@dataclass(frozen=True, slots=True)
class Quiet:
    """A skippable statement: what it reads without a default (checked under ``set -u``)
    and the variables it may assign (made unknown when it is skipped)."""

    reads: tuple[str, ...]
    assigns: tuple[str, ...]
    file_reads: frozenset[str]  # every name its file reads (another file reading one it assigns: run it)


@dataclass(slots=True)
class _Info:
    quiet: bool = True
    # every name read, with how often (liveness): a dict in the order names were first read, as
    # a Counter would be (cheaper to make and merge; ``file`` counts with Counters)
    reads: dict[str, int] | None = None
    guard: set[str] | None = None  # names read without a default
    assigns: set[str] | None = None
    # a ``break``/``continue`` no loop inside the statement catches: skipping the statement
    # would drop the jump, so it is skipped only with its loop
    jumps: bool = False

    def read(self, name: str) -> None:
        reads = self.reads
        if reads is None:
            self.reads = {name: 1}
        else:
            reads[name] = reads.get(name, 0) + 1

    def assign(self, name: str) -> None:
        if self.assigns is None:
            self.assigns = set()
        self.assigns.add(name)

    def merge(self, other: _Info, assigns: bool = True) -> None:
        self.quiet = self.quiet and other.quiet
        self.jumps = self.jumps or other.jumps
        if other.reads:
            reads = self.reads
            if reads is None:
                self.reads = dict(other.reads)
            else:
                get = reads.get
                for name, k in other.reads.items():
                    reads[name] = get(name, 0) + k
        if other.guard:
            if self.guard is None:
                self.guard = set()
            self.guard.update(other.guard)
        if assigns and other.assigns:
            if self.assigns is None:
                self.assigns = set()
            self.assigns.update(other.assigns)


class _Analysis:
    def __init__(self, loud: frozenset[str], out: dict[int, tuple[ir.Stmt, Quiet]]) -> None:
        self.loud = loud
        self.serving = SERVING in loud
        self.out = out
        self._observed: dict[int, bool] = {}  # candidates: whether their status is looked at
        self.poisoned = False
        # per statement of the file: its info (filled by ``stmt``), for the second pass
        self.infos: dict[int, tuple[ir.Stmt, _Info]] = {}

    def file(self, body: tuple[ir.Stmt, ...]) -> frozenset[str]:
        """Register the file's skippable statements; returns every name the file reads.

        Optimistic, to a fixed point: every quiet statement is taken as skipped, then one
        that assigns a variable a statement still run reads is run after all (and its inner
        lists offer their own quiet statements), until nothing changes. What is skipped then
        assigns nothing that anything run in the file reads."""
        whole = _Info()
        for s in body:
            whole.merge(self.stmt(s, False))
        total = Counter(whole.reads or ())
        live = Counter(total)  # reads by the statements still run
        skipped: dict[int, ir.Stmt] = {}
        by_name: dict[str, list[ir.Stmt]] = {}  # skipped statements by a name they assign
        check: list[str] = []

        def skip(c: ir.Stmt) -> None:
            info = self.infos[id(c)][1]
            skipped[id(c)] = c
            if info.reads:
                live.subtract(info.reads)
            for n in info.assigns or ():
                by_name.setdefault(n, []).append(c)
                check.append(n)

        for c in self._candidates(body, True):
            skip(c)
        while check:  # a name read by a statement that runs: what assigns it runs too
            n = check.pop()
            if live[n] <= 0:
                continue
            for c in by_name.pop(n, ()):
                if skipped.pop(id(c), None) is None:
                    continue
                reads = self.infos[id(c)][1].reads or {}
                live.update(reads)
                check.extend(reads)
                for inner in self._inner(c):
                    skip(inner)
        names = frozenset(n for n, k in total.items() if k > 0)
        for key, s in skipped.items():
            info = self.infos[key][1]
            self.out[key] = (s, Quiet(tuple(sorted(info.guard or ())), tuple(sorted(info.assigns or ())), names))
        return names

    # ------------------------------------------ second pass: statement lists
    def _candidates(self, body: Iterable[ir.Stmt], observed: bool) -> Iterator[ir.Stmt]:
        """The outermost quiet members of a statement list (``observed``: its last statement's
        status is looked at) and of the lists nested in the others."""
        stmts = list(body)
        for i, s in enumerate(stmts):
            nxt = stmts[i + 1] if i + 1 < len(stmts) else None
            last = nxt is None
            seen = (last and observed) or (nxt is not None and self._reads_status(nxt))
            info = self.infos[id(s)][1]
            if info.quiet and not info.jumps and not seen and self._may_assign(info):
                self._observed[id(s)] = last and observed
                yield s
            else:
                yield from self._nested(s, last and observed)

    def _inner(self, s: ir.Stmt) -> Iterator[ir.Stmt]:
        """A statement taken out of the skipped ones: the quiet statements of its lists."""
        return self._nested(s, self._observed.get(id(s), False))

    def _may_assign(self, info: _Info) -> bool:
        """Whether what it assigns could be dead: lower-case names (upper-case ones are the
        serve model's "set without export"), or any in lint, and no special name."""
        if not info.assigns:
            return True
        if self.poisoned:
            return False
        return all(n not in _NEVER_DEAD and not special(n) and (not self.serving or not n.isupper())
                   for n in info.assigns)

    def _dead(self, info: _Info, live: Counter[str]) -> bool:
        return not info.assigns or all(live[n] <= 0 for n in info.assigns)

    def _reads_status(self, s: ir.Stmt) -> bool:
        info = self.infos[id(s)][1]
        return bool(info.reads and info.reads.get("?"))

    def _nested(self, s: ir.Stmt, observed: bool) -> Iterator[ir.Stmt]:
        if isinstance(s, ir.If):
            for cond, body in s.clauses:
                yield from self._candidates(cond, True)
                yield from self._candidates(body, observed)
            if s.else_body is not None:
                yield from self._candidates(s.else_body, observed)
        elif isinstance(s, ir.Case):
            for _, body in s.items:
                yield from self._candidates(body, observed)
        elif isinstance(s, ir.For):
            yield from self._candidates(s.body, observed)
        elif isinstance(s, ir.While):
            yield from self._candidates(s.cond, True)
            yield from self._candidates(s.body, False)  # the loop's status is 0 when its body ran
        elif isinstance(s, (ir.Group, ir.FuncDef)):
            yield from self._candidates(s.body, True)
        elif isinstance(s, ir.AndOr):
            for part in (s.first, *(p for _, p in s.rest)):
                yield from self._nested(part, True)
        elif isinstance(s, ir.Pipeline):
            for part in s.cmds:
                yield from self._nested(part, True)

    # ------------------------------------------------ first pass: statements
    def stmt(self, s: ir.Stmt, in_loop: bool) -> _Info:
        info = self._stmt(s, in_loop)
        self.infos[id(s)] = (s, info)
        return info

    def _body(self, body: Iterable[ir.Stmt], in_loop: bool, info: _Info, assigns: bool = True) -> None:
        for s in body:
            info.merge(self.stmt(s, in_loop), assigns)

    def _stmt(self, s: ir.Stmt, in_loop: bool) -> _Info:
        info = _Info()
        if isinstance(s, ir.Command):
            self._command(s, in_loop, info)
        elif isinstance(s, ir.Decl):
            info.quiet = False
            if any(f.startswith("-") and "n" in f[1:] for f in s.flags):
                self.poisoned = True  # a name reference reads a variable another names
            for a in s.assigns:
                self._assign(a, info)
                if s.kind == "export" or "-x" in s.flags:
                    info.read(a.name)  # exported: a child reads it
        elif isinstance(s, ir.Test):
            if s.expr is not None:
                self._test(s.expr, info)
        elif isinstance(s, ir.AndOr):
            for part in (s.first, *(p for _, p in s.rest)):
                info.merge(self.stmt(part, in_loop))
        elif isinstance(s, ir.Pipeline):
            for part in s.cmds:
                info.merge(self.stmt(part, in_loop))
        elif isinstance(s, ir.If):
            for cond, body in s.clauses:
                self._body(cond, in_loop, info)
                self._body(body, in_loop, info)
            if s.else_body is not None:
                self._body(s.else_body, in_loop, info)
        elif isinstance(s, ir.Case):
            self._word(s.word, info)
            for patterns, body in s.items:
                for w in patterns:
                    self._word(w, info)
                self._body(body, in_loop, info)
        elif isinstance(s, ir.For):
            for w in s.items or ():
                self._word(w, info)
            info.assign(s.var)
            loop = _Info()
            self._body(s.body, True, loop)
            if loop.guard:
                loop.guard.discard(s.var)  # the body runs with the loop variable set
            loop.jumps = False  # the loop catches its body's break and continue
            info.merge(loop)
        elif isinstance(s, ir.While):
            loop = _Info()
            self._body(s.cond, True, loop)
            self._body(s.body, True, loop)
            loop.jumps = False
            info.merge(loop)
        elif isinstance(s, ir.Group):
            inner = _Info()
            self._body(s.body, in_loop and not s.subshell, inner)
            info.merge(inner, assigns=not s.subshell)  # nothing a subshell assigns escapes it
            self._redirects(s.redirects, info)
        elif isinstance(s, ir.FuncDef):
            info.quiet = False
            self._body(s.body, False, info)
        elif isinstance(s, ir.ArithCmd):
            self._arith(s.text, info)
        else:  # Opaque
            info.quiet = False
        return info

    def _command(self, cmd: ir.Command, in_loop: bool, info: _Info) -> None:
        for a in cmd.assigns:
            self._assign(a, info, prefix=bool(cmd.words))
        for w in cmd.words:
            self._word(w, info)
        self._redirects(cmd.redirects, info)
        if not cmd.words:
            return
        name = cmd.words[0].literal()
        if name in ("[", "test"):
            for i, w in enumerate(cmd.words[1:-1], 1):
                if w.literal() == "-v":
                    info.read(cmd.words[i + 1].literal() or "")
        if name in ("export", "declare", "typeset", "readonly", "local"):  # a declaration as a command
            for w in cmd.words[1:]:
                k = w.literal()
                if k is None or (k.startswith("-") and "n" in k[1:]):
                    self.poisoned = True
                else:
                    info.read(k.partition("=")[0])
        if name == "eval" or (name == "set" and any(_allexport(w.literal()) for w in cmd.words[1:])):
            self.poisoned = True
        if name == "printf" and len(cmd.words) > 1 and not _narrow(cmd.words[1].literal()):
            info.quiet = False  # a width may run out the value budget: that is reported
        if name in ("break", "continue"):
            info.quiet = info.quiet and in_loop
            info.jumps = True
        elif name in self.loud or name in ("python", "python3"):
            info.quiet = False
        elif not (name in _QUIET_NAMES or (name in INERT_COMMANDS and _inert(cmd))):
            info.quiet = False

    def _assign(self, a: ir.Assign, info: _Info, prefix: bool = False) -> None:
        if not prefix:
            info.assign(a.name)
            if a.append:
                info.read(a.name)
        for w in (a.value,) if a.value is not None else ():
            self._word(w, info)
        for w in a.array or ():
            self._word(w, info)

    def _redirects(self, redirects: tuple[ir.Redirect, ...], info: _Info) -> None:
        for r in redirects:
            if r.body is not None:
                self._word(r.body, info)
            if r.target is None:
                continue
            self._word(r.target, info)
            t = r.target.literal()
            if r.op.startswith("<") or t in _DEVNULL:
                continue
            if r.op.endswith("&") and t is not None and (t.isdigit() or t == "-"):
                continue  # a descriptor copied or closed
            info.quiet = False

    def _word(self, w: ir.Word, info: _Info) -> None:
        for p in w.parts:
            if isinstance(p, ir.Param):
                self._param(p, info)
            elif isinstance(p, ir.CmdSub):
                inner = _Info()
                self._body(p.body, False, inner)
                info.merge(inner, assigns=False)  # a substitution runs in a subshell
            elif isinstance(p, ir.Arith):
                self._arith(p.text, info)

    def _param(self, p: ir.Param, info: _Info) -> None:
        info.read(p.name)
        if p.op in ("=", ":=", "?", ":?"):
            info.quiet = False
        elif p.op == "!":
            self.poisoned = True
            info.quiet = False
        elif p.op not in _DEFAULTS and not p.index and not special(p.name):
            if info.guard is None:
                info.guard = set()
            info.guard.add(p.name)
        for w in (p.arg, p.arg2):
            if w is not None:
                self._word(w, info)

    def _arith(self, text: str, info: _Info) -> None:
        if "**" in text:
            info.quiet = False  # a power may run out of 64 bits: that is reported
        names = [n for n in _IDENT.findall(text) if not n[0].isdigit()]
        for n in names:
            info.read(n)
        if _ARITH_ASSIGN.search(text):
            for n in names:
                info.assign(n)

    def _test(self, e: ir.TestExpr, info: _Info) -> None:
        if isinstance(e, ir.TUnary):
            self._word(e.arg, info)
            if e.op == "-v":
                info.read(e.arg.literal() or "")
        elif isinstance(e, ir.TBinary):
            self._word(e.left, info)
            self._word(e.right, info)
            if e.op == "=~":
                info.assign("BASH_REMATCH")
        elif isinstance(e, ir.TNot):
            self._test(e.expr, info)
        elif isinstance(e, (ir.TAnd, ir.TOr)):
            self._test(e.left, info)
            self._test(e.right, info)
        else:
            self._word(e.word, info)


def _narrow(fmt: str | None) -> bool:
    """A ``printf`` format known to stay small: literal, widths of at most four digits."""
    return fmt is not None and not re.search(r"\d{5}", fmt)


def _allexport(k: str | None) -> bool:
    return k is not None and (k == "allexport" or (len(k) > 1 and k[0] in "-+" and "a" in k[1:] and k[1:].isalpha()))
