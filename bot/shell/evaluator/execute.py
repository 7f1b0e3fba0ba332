"""Simple commands: builtins, functions, ``source``, ``eval``."""

from __future__ import annotations

from bot.shell.evaluator import reads as _reads
from bot.shell.evaluator.builtins import (
    _echo,
    _int_or_none,
    _path_op,
    _printf,
    _printf_too_wide,
    _status,
    _test_argv,
)
from bot.shell.evaluator.core import Core
from bot.shell.evaluator.options import (
    _NAME_RE,
    _PURE_OUTPUT,
)
from bot.shell.evaluator.state import Exited, Loc, Sourced, State, Var
from bot.shell.evaluator.wordops import (
    _inert,
    _shift_lines,
    _split_by,
    cmd_info,
)
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import (
    TooLong,
    Val,
    concat,
    is_known,
    known,
    lit,
    unknown,
)

# The names ``Execute._run`` handles itself, before env checks, functions and programs
_BUILTINS = frozenset({
    ":", "true", "false", "exit", "return", "break", "continue", *_PURE_OUTPUT, "dirname", "basename", "[", "test",
    "unset", "shift", "cd", "source", ".", "eval", "set", "trap", "shopt", "ulimit", "umask", "wait", "sleep", "hash",
    "alias", "read", "export", "local", "readonly", "declare", "typeset",
})


class Execute(Core):
    def command(self, cmd: ir.Command, st: State) -> list[State]:
        words = cmd.words
        first, stdout, split, subst = cmd_info(cmd)
        if not words:
            status: int | None = 0
            for a, has_subst in zip(cmd.assigns, subst):
                st.status = 0
                old = st.vars.get(a.name)
                self.assign(a, st, exported=old.exported if old is not None else False)
                if has_subst:
                    status = st.status
            st.status = status
            return [st]
        serving = self.opt.sinks is not None
        if serving and cmd.redirects and self.wrote(cmd, st):
            st.status = 0
            return [st]
        if st.out is None and _inert(cmd) and first not in self.opt.observe \
                and not (serving and first in ("python", "python3")):
            # An external utility that cannot run a script, change a variable or exit the
            # shell: its only effect here is an unknown exit status (and its reads).
            if st.nounset or self.opt.record_reads:
                _reads.inert_words(self, cmd, st)
            st.status = None
            return [st]
        self._push()
        lines: list[int] = []
        if serving:
            argv, widx = [], []
            for i, w in enumerate(words):
                fields, at = self.fields_of(w, st)
                argv.extend(fields)
                lines.extend(at)
                widx.extend([i] * len(fields))
        elif self.opt.record_reads and first in ("[", "test"):
            argv = _reads.test_words(self, words, st)
        else:
            argv = [self.expand(w, st) for w in words]
        # Kept for the commands whose words decide something (a dispatched script, a
        # sourced file, a test, a function to call): they call ``_significant``.
        self._cmd_deps = self._pop()
        if first is None:
            self._control(self._cmd_deps)
        if st.flow is not None:
            return [st]
        if not serving:
            argv, widx = _split_by(argv, split)
        self._lines = lines
        if not argv:
            st.status = 0
            return [st]
        name = known(argv[0])
        saved_out = st.out
        if saved_out is None or not stdout:
            return self._run(cmd, argv, name, st, widx)
        st.out = None
        try:
            return self._run(cmd, argv, name, st, widx)
        finally:
            st.out = saved_out

    def _run(self, cmd: ir.Command, argv: list[Val], name: str | None, st: State,
             widx: list[int]) -> list[State]:
        args = argv[1:]
        if name is None:
            return self.external(cmd, argv, st, widx)
        if name not in _BUILTINS:  # a function or a program (most commands): none of the cases below
            return self._call_or_external(cmd, argv, args, name, st, widx)
        if name in (":", "true"):
            st.status = 0
            return [st]
        if name == "false":
            st.status = 1
            return [st]
        if name == "exit":
            self._significant()
            st.flow = "exit"
            st.status = _int_or_none(args[0]) if args else st.status
            st.emit(Exited(Loc(st.file, cmd.pos.line, cmd.pos.col), st.status))
            return [st]
        if name == "return":
            st.flow = "return"
            st.status = _int_or_none(args[0]) if args else st.status
            return [st]
        if name in ("break", "continue"):
            st.flow = name
            return [st]
        if name in _PURE_OUTPUT:
            limit = self.budget.value_limit
            if name == "printf" and args and _printf_too_wide(known(args[0]), limit):
                self._hit("printf width", st, f"printf {(known(args[0]) or '')[:40]}")
                if st.out is not None:
                    st.out = concat(st.out, unknown("printf width"))
            elif st.out is not None:
                try:
                    out = _echo(args) if name == "echo" else _printf(args, limit)
                except TooLong:
                    self._hit("printf width", st)
                    out = unknown("printf width")
                st.out = self._cap(concat(st.out, out), st)
            st.status = 0
            return [st]
        if name in ("dirname", "basename"):
            if st.out is not None:
                st.out = concat(st.out, _path_op(name, args), lit("\n"))
            st.status = 0
            return [st]
        if name in ("[", "test"):
            self._significant()
            words = args[:-1] if name == "[" and args and known(args[-1]) == "]" else args
            st.status = _status(_test_argv(words, self, st))
            return [st]
        if name == "unset":
            for a in args:
                k = known(a)
                if k and not k.startswith("-"):
                    st.delvar(k)
                    self.relevant.add(k)
            st.status = 0
            return [st]
        if name == "shift":
            self._significant()
            n = _int_or_none(args[0]) if args else 1
            st.argv = st.argv[n or 1 :]
            st.status = 0
            return [st]
        if name == "cd":
            self._significant()
            target = args[0] if args else unknown("$HOME")
            st.cwd = self._resolve_dir(target, st)
            st.status = 0 if is_known(st.cwd) else None
            return [st]
        if name in ("source", "."):
            self._significant()
            return self.source(cmd, args, st)
        if name == "eval":
            self._significant()
            return self.eval_(cmd, args, st)
        if name in ("set", "trap", "shopt", "ulimit", "umask", "wait", "sleep", "hash", "alias"):
            if name == "set":
                _reads.set_flags(args, st)
            if name == "set" and args and known(args[0]) == "--":
                self._significant()
                st.argv = tuple(args[1:])
            st.status = 0
            return [st]
        if name == "read":
            for a in args:
                k = known(a)
                if k and _NAME_RE.match(k):
                    st.setvar(k, Var(unknown(f"read {k}"), False, Loc(st.file, cmd.pos.line, cmd.pos.col)))
            st.status = None
            return [st]
        if name in ("export", "local", "readonly", "declare", "typeset"):
            # bashlex-style declarations that reached us as commands
            assigns = []
            for a in args:
                k = known(a)
                if k is None:
                    continue
                if "=" in k:
                    var_name, _, text = k.partition("=")
                    assigns.append(ir.Assign(var_name, ir.Word((ir.Lit(text, True),)), cmd.pos))
                elif _NAME_RE.match(k):
                    assigns.append(ir.Assign(k, None, cmd.pos))
            return self.decl(ir.Decl(name, tuple(assigns), (), cmd.pos), st)
        return self._call_or_external(cmd, argv, args, name, st, widx)

    def _call_or_external(self, cmd: ir.Command, argv: list[Val], args: list[Val], name: str, st: State,
                          widx: list[int]) -> list[State]:
        if name in self.opt.env_checks:
            ended = _reads.env_check(self, cmd, args, st)
            if ended is not None:
                return ended
        if name in st.funcs:
            self._significant()  # arguments become $1.. inside the function
            if self.opt.sinks is not None and self.sink(cmd, argv, self._lines, st, function=True) is not None:
                if st.flow is not None:
                    return [st]  # the path ends at this sink (``Options.stop_after``)
                self._in_client += 1  # what the client's body runs is part of the client
                try:
                    return self.call(name, args, st)
                finally:
                    self._in_client -= 1
            return self.call(name, args, st)
        return self.external(cmd, argv, st, widx)

    def call(self, name: str, args: list[Val], st: State) -> list[State]:
        if st.depth >= self.opt.max_depth:
            self.notes.append(f"call depth limit reached at {name}")
            self._hit(f"call depth ({self.opt.max_depth})", st, name)
            st.status = None
            return [st]
        self._tick()  # a call counts, besides the statements it runs
        body = st.funcs[name]
        saved_argv = st.argv
        st.argv = tuple(args)
        st.depth += 1
        st.locals.append({})
        states = self.block(body, [st])
        for s in states:
            frame = s.locals.pop() if s.locals else {}
            for var, old in frame.items():
                if old is None:
                    s.delvar(var)
                else:
                    s.setvar(var, old)
            s.argv = saved_argv
            s.depth -= 1
            if s.flow == "return":
                s.flow = None
        return states

    def source(self, cmd: ir.Command, args: list[Val], st: State) -> list[State]:
        if not args:
            st.status = 1
            return [st]
        target = self.normalize(args[0], st)
        st.emit(Sourced(target, Loc(st.file, cmd.pos.line, cmd.pos.col)))
        path = known(target)
        script = self.fs.script(path) if path and self.opt.descend_source else None
        if script is not None and st.depth >= self.opt.max_depth:
            self._hit(f"source depth ({self.opt.max_depth})", st, f"source {path}")
        if script is None or st.depth >= self.opt.max_depth:
            st.status = None
            return [st]
        saved_file, saved_argv = st.file, st.argv
        st.file = path or st.file
        if len(args) > 1:
            st.argv = tuple(args[1:])
        st.depth += 1
        states = self.block(self.enter(script.body), [st])
        for s in states:
            s.file, s.depth = saved_file, s.depth - 1
            if len(args) > 1:
                s.argv = saved_argv
            if s.flow == "return":
                s.flow = None
        return states

    def eval_(self, cmd: ir.Command, args: list[Val], st: State) -> list[State]:
        text = " ".join(known(a) or "\0" for a in args)
        if "\0" in text or self.opt.parse is None:
            return self.external(cmd, [lit("eval")] + args, st)
        if st.depth >= self.opt.max_depth:
            self._hit(f"eval depth ({self.opt.max_depth})", st, "eval")
            st.status = None
            return [st]
        script = self._parse_string(st.file, text)
        st.depth += 1
        states = self.block(self.enter(_shift_lines(script.body, cmd.pos.line - 1)), [st])
        for s in states:
            s.depth -= 1
        return states
