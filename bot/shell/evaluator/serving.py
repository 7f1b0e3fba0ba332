"""What a benchmark script starts: the second kind of sink (``Options.sinks``).

Off unless the caller passes ``Options.sinks`` (``python -m bot serve``); lint never pays
for it. When on, the evaluator also

- keeps arrays as their elements (``X=(a "b c")``, ``X+=(d)``), so that ``"${X[@]}"``
  expands to one word per element, each with the line it was written on;
- records the files a script writes as ``Wrote`` events (``bot.shell.evaluator.written``);
- records every command the sink recognises (``vllm serve``, ``python3 -m sglang...``,
  ``run_benchmark_serving``) as a ``Served`` event: its words, where each came from, the
  environment that reaches it (exported variables and inline prefixes) and the engine-style
  assignments that do not (plain ``X=1``), and the files written before it;
- records, for every dispatched script, the environment that reaches it (``Handed``):
  the launcher's exported variables, or across a container boundary only what crosses it.
"""

from __future__ import annotations

import posixpath

from bot.shell.evaluator.options import _NAME_RE
from bot.shell.evaluator.state import Handed, Loc, Served, State, Var
from bot.shell.evaluator.wordops import _split_fields, fields
from bot.shell.evaluator.written import Written, _files, _files_read
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val, concat, known, leading, lit, unknown

MAX_ITEMS = 4096  # elements an array may have (beyond: unknown, and a budget note)
MAX_SEGMENTS = 256  # pieces of a value whose lines are kept
_CONTAINERS = frozenset({"docker", "podman", "nerdctl"})
_SRUN = frozenset({"srun"})


class Serving(Written):
    # ------------------------------------------------------------------ arrays
    def array_items(self, a: ir.Assign, st: State) -> tuple[tuple[Val, int], ...]:
        """The elements of ``X=(...)`` (after ``X+=``, the old ones first)."""
        items: list[tuple[Val, int]] = []
        if a.append:
            old = st.vars.get(a.name)
            if old is not None:
                items.extend(old.items if old.items is not None else ((old.value, (old.origin or Loc("", 0)).line),))
        size = sum(_width(v) for v, _ in items)
        for w in a.array or ():
            fields, lines = self.fields_of(w, st)
            items.extend(zip(fields, lines))
            size += sum(_width(v) for v in fields)
            if len(items) > MAX_ITEMS or size > self.budget.value_limit:  # ``A+=("${A[@]}")`` doubling
                self._hit(f"array over {MAX_ITEMS:,} elements" if len(items) > MAX_ITEMS else self.budget.value_what(),
                          st, a.name)
                return ((unknown(f"${{{a.name}[@]}} (too large)"), a.pos.line),)
        return tuple(items)

    def fields_of(self, w: ir.Word, st: State) -> tuple[list[Val], list[int]]:
        """One word as the fields it becomes: an array's elements for ``"${X[@]}"``, else
        the word's value, split when it is an unquoted expansion whose value is known."""
        parts = w.parts
        if (len(parts) == 1 and type(parts[0]) is ir.Lit) or \
                not any(isinstance(p, (ir.Param, ir.CmdSub)) for p in parts):
            return [self.expand(w, st)], [w.pos.line]  # no expansion to split (the common case)
        name = _whole_array(w) if len(parts) <= 2 else None
        var = st.vars.get(name) if name else None
        if var is not None and var.items is not None:
            self.expand(w, st)  # dependencies, as for any other word
            quoted = all(getattr(p, "quoted", False) for p in w.parts)
            if quoted:
                return [v for v, _ in var.items], [line for _, line in var.items]
            fields: list[Val] = []
            lines: list[int] = []
            for v, line in var.items:
                k = known(v)
                for f in (k.split() if k is not None else [v]):
                    fields.append(lit(f) if isinstance(f, str) else f)
                    lines.append(line)
            return fields, lines
        value = self.expand(w, st)
        split, _ = _split_fields([value], (w,))
        line = w.pos.line
        params = [p for p in w.parts if isinstance(p, ir.Param)]
        if len(params) == 1 and len(w.parts) == 1:
            origin = st.vars.get(params[0].name)
            if origin is not None and origin.origin is not None and origin.origin.path == st.file:
                if origin.segments and origin.value == value:
                    # a flag kept in a variable: the line that wrote that piece of it
                    return split, _field_lines(value, split, origin.segments)
                line = origin.origin.line
        return split, [line] * len(split)

    def expand_segments(self, w: ir.Word, st: State) -> tuple[Val, tuple[tuple[int, int], ...]]:
        """A word's value, and where each piece of it was written: text of the word itself on
        its line, a variable's value where that variable got it."""
        parts = w.parts
        if len(parts) == 1 and type(parts[0]) is ir.Lit and len(parts[0].text) <= self.budget.limits.max_value:
            self._tick()  # a literal word (``X=1``): as below, in short
            text = parts[0].text
            return ((text,), ((len(text), w.pos.line),)) if text else ((), ())
        self._tick()
        out: list[Val] = []
        segments: list[tuple[int, int]] = []
        line = w.pos.line
        for p in w.parts:
            v = self.part(p, st)
            out.append(v)
            var = st.vars.get(p.name) if isinstance(p, ir.Param) and p.op == "" else None
            if var is not None and var.segments is not None and var.value == v:
                segments.extend(var.segments)
            elif v:
                segments.append((_width(v), line))
        value = self._cap(concat(*out), st)
        if len(segments) > MAX_SEGMENTS or _width(value) != sum(n for n, _ in segments):
            return value, ((_width(value), line),)  # too fine, or capped: the word's own line
        return value, tuple(segments)

    # ------------------------------------------------------------- sinks
    def sink(self, cmd: ir.Command, argv: list[Val], lines: list[int], st: State,
             function: bool = False) -> str | None:
        """Record ``argv`` as a ``Served`` event if the sink recognises it; its kind. A call of a
        shell function counts only as a client (``write_command F vllm serve ...`` prints a
        command line; it does not start it)."""
        if self.opt.sinks is None or self._in_client:
            return None
        hit = self.opt.sinks(argv)
        if hit is None or (function and hit[0] != "client"):
            return None
        kind, start = hit[0], hit[1]
        self._significant()
        if len(lines) != len(argv):
            lines = [cmd.pos.line] * len(argv)
        if len(hit) == 3:  # the command is what a variable holds: ``$REPLAY_CMD`` at this call
            var = st.vars.get(hit[2])
            held = fields(var.value) if var is not None else []
            # the client's arguments start after its program and subcommand (``aiperf profile``)
            lead = next((i for i, v in enumerate(held) if (known(v) or "").startswith("-")), len(held))
            argv, lines, start = [argv[0], *held], [lines[0], *([cmd.pos.line] * len(held))], 1 + lead
        env, dropped, plain_vars = self._changes(st)
        self._push()  # the inline ``X=$Y cmd`` values: what they read is relevant
        for a in cmd.assigns:
            env[a.name] = self.expand(a.value, st) if a.value is not None else lit("")
        self.relevant.update(self._pop())
        plain = tuple((n, v.value, v.origin or Loc(st.file, 0)) for n, v in plain_vars if n not in env)
        locs = tuple(_line_loc(st.file, line or cmd.pos.line) for line in lines)
        event = Served(kind, start, tuple(argv), locs, tuple(sorted(env.items())), plain, _files(st),
                       Loc(st.file, cmd.pos.line, cmd.pos.col), dropped)
        st.emit(event)
        self._sunk.append(event)
        # What the recorded command holds decides which envs may reuse this evaluation
        # (``Result.relevant``): its words (``_significant`` above), the variables it is handed
        # changed or exported (``_changes``), the engine-style ones set without export, the
        # command a variable holds. An input that only passes through unchanged is not among
        # them: its value is the caller's (``Served.env`` lists changes only), so two launchers
        # that hand the script different ``RUNNER_NAME`` share one evaluation. A written file
        # the command may read (a here-document with $CONC in it, ``--config`` of it) adds what
        # the file's content and name were made of, over every write of it (which branch wrote
        # it is already relevant: branch conditions are).
        for _, var in plain_vars:
            self.relevant.update(var.deps)
        if len(hit) == 3:
            held_var = st.vars.get(hit[2])
            if held_var is not None:
                self.relevant.update(held_var.deps)
        for f in _files_read(event):
            self.relevant.update(self._file_deps.get(f.target, ()))
        if kind != "client" and self.opt.after_sink_steps and self._stop_at is None:
            self._stop_at = self.budget.steps + self.opt.after_sink_steps
        if kind in self.opt.stop_after:
            st.flow = "exit"
        return kind

    # ------------------------------------------------------------- files
    # ------------------------------------------------------------- hand-off
    def handed(self, cmd: ir.Command, argv: list[Val], idx: int, target: Val, loc: Loc, st: State) -> None:
        """Record the environment the script at ``argv[idx]`` starts with (``Options.sinks``
        or ``Options.handoffs``)."""
        if self.opt.sinks is None and not self.opt.handoffs:
            return
        changed, dropped, _ = self._changes(st)
        exported = _Exported(st, changed)
        words = [known(a) for a in argv[:idx]]
        bases = [posixpath.basename(w) if w else None for w in words]
        env: dict[str, Val]
        complete = True
        boundary = ""
        box = next((i for i, b in enumerate(bases) if b in _CONTAINERS and i + 1 < len(words)
                    and words[i + 1] in ("run", "exec", "container")), None)
        srun = next((i for i, b in enumerate(bases) if b in _SRUN), None)
        if box is not None:
            boundary = bases[box] or "docker"
            env = {}
            i = box + 2
            while i < idx:
                w = words[i]
                value: str | None = None
                if w in ("-e", "--env") and i + 1 < idx:
                    value, i = words[i + 1], i + 2
                elif w is not None and w.startswith("--env="):
                    value, i = w[len("--env="):], i + 1
                elif w is not None and w.startswith("-e") and len(w) > 2 and not w.startswith("--"):
                    value, i = w[2:], i + 1
                elif w in ("--env-file",) or (w or "").startswith("--env-file="):
                    complete = False
                    i += 2 if w == "--env-file" else 1
                    continue
                else:
                    i += 1
                    continue
                if value is None:
                    complete = False
                    continue
                var, eq, val = value.partition("=")
                if eq:
                    env[var] = lit(val)
                elif var in exported:
                    env[var] = exported[var]
        elif srun is not None:
            export = next((w for w in words[srun + 1:] if w is not None and w.startswith("--export=")), None)
            if export is None:
                env = dict(changed)
            else:
                boundary = "srun --export"
                env = {}
                for item in export[len("--export="):].split(","):
                    var, eq, val = item.partition("=")
                    if var == "ALL" and not eq:
                        env.update(changed)
                    elif var == "NONE" and not eq:
                        continue
                    elif eq:
                        env[var] = lit(val)
                    elif var in exported:
                        env[var] = exported[var]
            # an unknown word could be an ``--export`` (one with a known option name cannot)
            if any(w is None and not leading(v).startswith("-") for w, v in zip(words[srun + 1:], argv[srun + 1:idx])):
                complete = False
        else:
            env = dict(changed)
            for a in cmd.assigns:
                env[a.name] = self.expand(a.value, st) if a.value is not None else lit("")
        inherited: list[str] = []
        for name in list(env):
            held = st.vars.get(name)
            if held is None or not held.exported or env[name] != held.value:
                continue  # set on the command line (``-e X=1``): its words are the dispatch's, relevant
            if held is self._inputs.get(name):
                inherited.append(name)
                del env[name]
        everything = boundary == "" or (boundary == "srun --export" and "ALL" in _export_items(words, srun))
        st.emit(Handed(target, loc, tuple(sorted(env.items())), complete, boundary,
                       () if everything else tuple(sorted(inherited)), everything,
                       dropped if everything else ()))

    def _changes(self, st: State) -> tuple[dict[str, Val], tuple[str, ...], list[tuple[str, Var]]]:
        """What differs from the env the evaluation started with, from the persistent map's
        diff (only the buckets that changed): the exported variables set since (their inputs
        become relevant), the input variables that no longer reach a child unchanged, and the
        upper-case plain variables set without ``export``."""
        env: dict[str, Val] = {}
        dropped: list[str] = []
        plain: list[tuple[str, Var]] = []
        for name, now, then in st.vars.diff(self._initial):
            if now is then:
                continue
            if then is not None and then is self._inputs.get(name):
                dropped.append(name)
                self.relevant.add(name)
            if now is None:
                continue
            if now.exported:
                env[name] = now.value
                self.relevant.update(now.deps)
            elif name.isupper() and now.items is None:  # an array cannot be exported at all
                plain.append((name, now))
        return env, tuple(sorted(dropped)), plain


_LOCS: dict[tuple[str, int], Loc] = {}


def _line_loc(path: str, line: int) -> Loc:
    """``Loc(path, line)``, one object for each (the words of a command share a few lines; the
    evaluation cache encodes a shared object once)."""
    loc = _LOCS.get((path, line))
    if loc is None:
        if len(_LOCS) > 50_000:
            _LOCS.clear()
        loc = _LOCS[path, line] = Loc(path, line)
    return loc


def _whole_array(w: ir.Word) -> str | None:
    """The array name of a word that is only ``${X[@]}`` / ``"${X[@]}"``."""
    parts = [p for p in w.parts if not (isinstance(p, ir.Lit) and not p.text)]
    if len(parts) == 1 and isinstance(parts[0], ir.Param) and parts[0].op == "" and parts[0].index \
            and _NAME_RE.match(parts[0].name):
        return parts[0].name
    return None


def _export_items(words: list[str | None], srun: int | None) -> list[str]:
    """The items of ``srun --export=ALL,X=1`` (``[]`` without the option)."""
    if srun is None:
        return []
    export = next((w for w in words[srun + 1:] if w is not None and w.startswith("--export=")), None)
    return export[len("--export="):].split(",") if export else ["ALL"]


class _Exported:
    """The exported value of a variable at a hand-off: set since the start, or an input."""

    def __init__(self, st: State, changed: dict[str, Val]) -> None:
        self.st = st
        self.changed = changed

    def __contains__(self, name: object) -> bool:
        var = self.st.vars.get(name) if isinstance(name, str) else None
        return var is not None and var.exported

    def __getitem__(self, name: str) -> Val:
        var = self.st.vars.get(name)
        assert var is not None
        return var.value


def _width(v: Val) -> int:
    return sum(len(p) if isinstance(p, str) else 1 for p in v)


def _field_lines(value: Val, fields: list[Val], segments: tuple[tuple[int, int], ...]) -> list[int]:
    """The line of each field of a split value: that of the segment its first character is in."""
    text = "".join(p if isinstance(p, str) else "\0" for p in value)
    bounds: list[tuple[int, int]] = []
    at = 0
    for length, line in segments:
        bounds.append((at + length, line))
        at += length
    lines: list[int] = []
    pos = 0
    for f in fields:
        k = known(f)
        start = text.find(k, pos) if k else pos
        start = start if start >= 0 else pos
        pos = start + (len(k) if k else 1)
        lines.append(next((line for end, line in bounds if start < end), bounds[-1][1] if bounds else 0))
    return lines
