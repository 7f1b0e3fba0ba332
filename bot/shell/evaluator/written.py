"""The files a script writes, for the serve model (``Options.sinks``): ``cat > F <<EOF``,
``cat <<EOF >> F``, ``echo ... > F``, ``printf ... >> F``, ``tee F <<EOF`` become ``Wrote``
events, with their content when the command is one whose output we can tell, and what each
write read (a server that reads the file depends on it: ``bot.shell.evaluator.serving``)."""

from __future__ import annotations

import posixpath

from bot.shell.evaluator.builtins import _echo, _printf
from bot.shell.evaluator.core import Core
from bot.shell.evaluator.state import Loc, Served, State, Wrote
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import TooLong, Val, concat, known, lit, unknown

_OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>"})
_CONTENT_COMMANDS = frozenset({"cat", "tee", "echo", "printf"})


class Written(Core):
    def wrote(self, cmd: ir.Command, st: State) -> bool:
        """Record the files ``cmd`` writes; True when that was all it did (``cat > F <<EOF``,
        ``echo ... > F``), so the caller need not run it."""
        outs = [r for r in cmd.redirects if r.op in _OUT_OPS and r.fd in (None, 1) and r.target is not None]
        name = cmd.words[0].literal() if cmd.words else None
        tee_files: list[ir.Word] = []
        if name == "tee":
            tee_files = [w for w in cmd.words[1:] if not (w.literal() or "").startswith("-")]
        if not outs and not tee_files:
            return False
        self._push()  # what the content and the file's name read: relevant when a server reads the file
        content: Val
        if name in ("cat", "tee"):
            body = next((r for r in cmd.redirects if r.op in ("<<", "<<-", "<<<")), None)
            if body is not None and body.op == "<<<" and body.target is not None:
                content = concat(self.expand(body.target, st), lit("\n"))
            elif body is not None and body.body is not None:
                content = self.expand(body.body, st)
                if body.op == "<<-":
                    content = _strip_tabs(content)
            else:
                content = unknown(f"output of {name}")
        elif name in ("echo", "printf"):
            args = [self.expand(w, st) for w in cmd.words[1:]]
            try:
                content = _echo(args) if name == "echo" else _printf(args, self.budget.value_limit)
            except TooLong:
                content = unknown("printf width")
        else:
            content = unknown(f"output of {name or 'a command'}")
        content = self._cap(content, st)
        loc = Loc(st.file, cmd.pos.line, cmd.pos.col)
        appends = (tee_files and any((w.literal() or "") in ("-a", "--append") for w in cmd.words[1:]))
        written: list[Wrote] = []
        for r in outs:
            assert r.target is not None
            raw = self.expand(r.target, st)
            target = self.normalize(raw, st)
            if not (known(raw) or "").startswith("/dev/"):
                written.append(Wrote(target, content, r.op in (">>", "&>>"), loc, raw))
        for w in tee_files:
            raw = self.expand(w, st)
            written.append(Wrote(self.normalize(raw, st), content, bool(appends), loc, raw))
        deps = self._pop()
        for e in written:
            st.emit(e)
            self._file_deps.setdefault(e.target, set()).update(deps)
        return name in _CONTENT_COMMANDS and not tee_files and name != "tee"


def _files(st: State) -> tuple[Wrote, ...]:
    """The last content of each file the path wrote (appends added to what was there)."""
    last: dict[Val, Wrote] = {}
    for e in st.events:
        if isinstance(e, Wrote):
            before = last.get(e.target)
            if e.append and before is not None:
                e = Wrote(e.target, concat(before.content, e.content), True, before.loc, e.raw)
            last[e.target] = e
    return tuple(last.values())


def _strip_tabs(v: Val) -> Val:
    """``<<-``: leading tabs of each line are removed (known text only)."""
    out: list[Val] = []
    at_start = True
    for p in v:
        if isinstance(p, str):
            lines = p.split("\n")
            text = "\n".join(line.lstrip("\t") if (i or at_start) else line for i, line in enumerate(lines))
            out.append(lit(text))
            at_start = p.endswith("\n")
        else:
            out.append((p,))
            at_start = False
    return concat(*out)


def _files_read(event: Served) -> tuple[Wrote, ...]:
    """The files the path wrote that the command may read: those one of its words names (by
    path or name), or every one when a word or the file's path is not known."""
    if not event.files:
        return ()
    words = [known(v) for v in event.argv[event.start:]]
    if any(w is None for w in words):
        return event.files
    text = " ".join(w for w in words if w is not None)
    return tuple(f for f in event.files
                 if (target := known(f.target)) is None or posixpath.basename(target) in text)
