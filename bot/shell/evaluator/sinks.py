"""External commands and what they run: dispatched scripts, ``bash -c``, followed launchers."""

from __future__ import annotations

import posixpath

from bot.shell.evaluator.core import Core
from bot.shell.evaluator.options import (
    _STRING_CACHE,
    PREFIX_COMMANDS,
    SHELLS,
)
from bot.shell.evaluator.state import Dispatch, Exited, Loc, Ran, State, Var
from bot.shell.evaluator.varmap import VarMap
from bot.shell.evaluator.wordops import (
    _cmd_name,
    _looks_like_script,
    _shift_lines,
    _word_at,
)
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import (
    Val,
    concat,
    known,
    lit,
    unknown,
)


class Sinks(Core):
    def external(self, cmd: ir.Command, argv: list[Val], st: State,
                 widx: list[int] | None = None) -> list[State]:
        """A command we do not model: look for a dispatched script, then give up on it."""
        if self.opt.sinks is not None and self.sink(cmd, argv, self._lines, st) is not None:
            st.status = None
            return [st]
        memo_key = (id(cmd), tuple(argv))
        memo = self._external_memo.get(memo_key)
        if memo is None:
            memo = (self._observed(argv) if self.opt.observe else None, self.find_script(argv, 0))
            if len(self._external_memo) > 50_000:
                self._external_memo.clear()
            self._external_memo[memo_key] = memo
        seen, found = memo
        if seen is not None:
            self._significant()
            st.emit(Ran(seen, tuple(argv), Loc(st.file, cmd.pos.line, cmd.pos.col), st.cwd, self._cmd_deps))
        if found is not None:
            self._significant()
            kind, idx, via = found
            if kind == "script":
                self._dispatch(cmd, argv, idx, via, st, widx)
                if via in ("exec", "exec bash"):
                    st.flow = "exit"
            elif kind == "-c":
                self._bash_c(cmd, argv, idx, st, widx)
        st.status = None
        if st.out is not None:
            st.out = concat(st.out, unknown(_cmd_name(argv)))
        return [st]

    def _observed(self, argv: list[Val]) -> str | None:
        """The observed command a command runs, directly or behind prefix commands and
        wrappers (``timeout 600 srtctl ...``, ``srun --jobid=1 srtctl ...``)."""
        for i, v in enumerate(argv):
            name = known(v)
            base = posixpath.basename(name) if name else None
            if base in self.opt.observe:
                return base
            if base == "command" and i + 1 < len(argv) and known(argv[i + 1]) in ("-v", "-V"):
                return None  # ``command -v srtctl`` only asks whether it is installed
            if base in PREFIX_COMMANDS or base in self.opt.wrappers:
                continue
            if i == 0 or not name or not (name.startswith("-") or "=" in name or name.isdigit()):
                return None  # another program, or a word we cannot read
        return None

    def find_script(self, argv: list[Val], i: int, via: str = "") -> tuple[str, int, str] | None:
        if i >= len(argv):
            return None
        name = known(argv[i])
        base = posixpath.basename(name) if name else None
        if base in SHELLS:
            j = i + 1
            while j < len(argv):
                opt = known(argv[j])
                if opt is None or not opt.startswith(("-", "+")) or opt in ("-", "--"):
                    if opt in ("-", "--"):
                        j += 1
                    break
                if opt.startswith("-") and not opt.startswith("--") and "c" in opt[1:]:
                    return ("-c", j + 1, via or "bash -c") if j + 1 < len(argv) else None
                if opt in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                    j += 2
                    continue
                if opt.startswith("-") and "s" in opt[1:] and not opt.startswith("--"):
                    return None  # script from stdin
                j += 1
            if j < len(argv):
                return ("script", j, via or base or "bash")
            return None
        if base in PREFIX_COMMANDS or base in self.opt.wrappers:
            this = via or base or ""
            if base == "exec":
                this = "exec"
            for j in range(i + 1, len(argv)):
                k = known(argv[j])
                if k is not None and (k.startswith("-") or "=" in k.split("/")[0]):
                    continue
                nb = posixpath.basename(k) if k else None
                if nb in SHELLS:
                    return self.find_script(argv, j, "exec bash" if this == "exec" else this)
                if _looks_like_script(argv[j]):
                    return ("script", j, this)
                if base in PREFIX_COMMANDS and k is not None and base not in ("timeout", "taskset", "chrt",
                                                                            "flock", "numactl", "nice"):
                    # the wrapped command is a plain program
                    return self.find_script(argv, j, this) if k and (nb in PREFIX_COMMANDS or
                                                                      nb in self.opt.wrappers) else None
            return None
        if _looks_like_script(argv[i]) and (name is None or "/" in name or name.endswith(".sh")):
            return ("script", i, via or "direct")
        return None

    def _dispatch(self, cmd: ir.Command, argv: list[Val], idx: int, via: str, st: State,
                  widx: list[int] | None) -> None:
        raw = argv[idx]
        target = self.normalize(raw, st)
        word = _word_at(cmd, idx, widx)
        pos = word.pos if word is not None else cmd.pos
        loc = Loc(st.file, pos.line or cmd.pos.line, pos.col or cmd.pos.col)
        built_at = loc
        var_parts: tuple[tuple[str, str], ...] = ()
        if word is not None:
            params = [p for p in word.parts if isinstance(p, ir.Param)]
            others = [p for p in word.parts if not isinstance(p, ir.Param) and not (isinstance(p, ir.Lit)
                                                                                    and not p.text)]
            if len(params) == 1 and not others and params[0].op == "":
                var = st.vars.get(params[0].name)
                if var is not None and var.origin is not None:
                    built_at = var.origin
                    var_parts = var.parts
            if not var_parts:
                var_parts = self._var_parts(word, st)
        st.emit(Dispatch(target, raw, loc, built_at, via, var_parts))
        if self.opt.sinks is not None:
            self.handed(cmd, argv, idx, target, loc, st)
        path = known(target)
        if path and self.opt.follow is not None and self.opt.follow(path):
            if st.depth < self.opt.max_depth:
                self._follow(path, argv[idx + 1 :], st)
            else:
                self._hit(f"script depth ({self.opt.max_depth})", st, f"bash {path}")

    def _follow(self, path: str, args: list[Val], st: State) -> None:
        """Evaluate a repo script that the file runs as a child (a launcher delegating)."""
        script = self.fs.script(path)
        if script is None:
            return
        child = State()
        child.file = path
        child.depth = st.depth + 1
        child.argv = tuple(args)
        child.vars = VarMap.of([(n, v) for n, v in st.vars.items() if v.exported])  # as ``setvar`` of each
        child.setvar("0", Var(lit(path), False, None))
        for r in self.block(self.enter(script.body), [child]):
            for e in r.events:
                if not isinstance(e, Exited):
                    st.emit(e)

    def _bash_c(self, cmd: ir.Command, argv: list[Val], idx: int, st: State,
                widx: list[int] | None) -> None:
        if self.opt.parse is None or idx >= len(argv):
            return
        if st.depth >= self.opt.max_depth:
            self._hit(f"bash -c depth ({self.opt.max_depth})", st, "bash -c")
            return
        value = argv[idx]
        child = State()
        child.file = st.file
        child.cwd = st.cwd
        child.depth = st.depth + 1
        pieces: list[str] = []
        counter = 0
        held: list[tuple[str, Var]] = []
        for p in value:
            if isinstance(p, str):
                pieces.append(p)
            else:
                counter += 1
                name = f"__bb_unknown_{counter}"
                held.append((name, Var((p,), True, None)))
                pieces.append("${" + name + "}")
        held.extend((n, v) for n, v in st.vars.items() if v.exported)
        child.vars = VarMap.of(held)  # as ``setvar`` of each, in this order
        child.setvar("0", Var(lit("bash"), False, None))
        script = self._parse_string(st.file, "".join(pieces))
        word = _word_at(cmd, idx, widx)
        offset = (word.pos.line - 1) if word is not None and word.pos.line else cmd.pos.line - 1
        results = self.block(self.enter(_shift_lines(script.body, offset)), [child])
        for r in results:
            for e in r.events:
                if isinstance(e, Exited):
                    continue
                if isinstance(e, Dispatch):
                    e = Dispatch(e.target, e.raw, e.loc, e.built_at, "bash -c", e.var_parts)
                st.emit(e)

    def _parse_string(self, path: str, text: str) -> ir.Script:
        """Parse a ``bash -c`` / ``eval`` string, cached by its text."""
        key = (path, text)
        script = _STRING_CACHE.get(key)
        if script is None:
            assert self.opt.parse is not None
            script = self.opt.parse(path, text.encode())
            if len(_STRING_CACHE) > 4096:
                _STRING_CACHE.clear()
            _STRING_CACHE[key] = script
        return script
