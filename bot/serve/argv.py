"""Shared tokenizing helpers for the per-engine normalizers.

One generic walk over the tokens after the launch words: a token that starts with ``-``
(and is not a negative number) is an option, ``--name=value`` carries its value inline,
otherwise the option takes as many following value tokens as its arity says (``0``: none,
``1``: exactly one, ``?``: at most one, ``+``: every following non-option token). What an
option means is the engine's business (a ``lookup`` callback); what a value becomes is
decided here, once: MARK -> None plus a reason, ``{``/``[`` -> JSON, integers and floats ->
numbers, else the text.

Nothing here raises on bad input: every problem becomes a reason string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.serve.model import MARK, Command, Tok

_NEG_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


def is_option(text: str) -> bool:
    """True for ``-x``/``--x`` words; negative numbers, ``-`` and MARK words are values."""
    return text.startswith("-") and len(text) > 1 and not _NEG_NUMBER.match(text)


def underscored(name: str) -> str:
    """``--max-model-len`` -> ``max_model_len``."""
    return name.lstrip("-").replace("-", "_")


def scalar(text: str) -> Any:
    """Integer or float text -> number; anything else stays text."""
    if _INT.match(text):
        try:
            return int(text)
        except ValueError:  # pragma: no cover - the pattern guarantees digits
            return text
    if _FLOAT.match(text):
        try:
            return float(text)
        except ValueError:  # pragma: no cover
            return text
    return text


def as_bool(text: str) -> bool | None:
    low = text.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    return None


def parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of ``text``, or ``(text, error)`` when it does not parse."""
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as e:
        return text, str(e).splitlines()[0] if str(e) else type(e).__name__


def has_mark(value: Any) -> bool:
    """True when a (possibly nested) value contains MARK anywhere."""
    if isinstance(value, str):
        return MARK in value
    if isinstance(value, Mapping):
        return any(has_mark(k) or has_mark(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_mark(v) for v in value)
    return False


@dataclass(frozen=True)
class Opt:
    """What an option string means to an engine."""

    dest: str  # canonical name ("model" for the model)
    nargs: str = "?"  # "0" | "1" | "?" | "+"
    kind: str = "any"  # bool | int | float | str | list | json | dotted | any
    const: Mapping[str, Any] | None = None  # store-const: dest -> value (nargs "0")
    path: tuple[str, ...] = ()  # dotted keys inside dict ``dest`` (vLLM ``--X.a.b``)
    append: bool = False  # ``--X.k+ v``: append to the list at path
    notes: tuple[str, ...] = ()  # facts worth showing (alias resolved, deprecated, ...)
    reason: str | None = None  # why it could not be read (unknown option, ...)


@dataclass
class Builder:
    """Accumulates one :class:`Command` while a normalizer walks the tokens (call-local)."""

    engine: str
    toks: Sequence[Tok]
    env: Mapping[str, str]
    args: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _positional_seen: bool = False
    model: str | None = None

    def reason(self, text: str) -> None:
        if text not in self.unknown:
            self.unknown.append(text)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def stray(self, tok: Tok) -> None:
        if not tok.known:
            self.reason(f"unknown words at {tok.src} (an unset or computed variable)")
        else:
            self.reason(f"unexpected argument {tok.text!r} at {tok.src}")

    def put(self, dest: str, value: Any, src: str) -> None:
        """Store ``dest`` (the last one given wins, as with argparse and click)."""
        if dest in self.args and self.args[dest] != value:
            self.note(f"{dest} given more than once; the last one ({src}) wins")
        self.args[dest] = value
        self.sources[dest] = src

    def positional_model(self, tok: Tok) -> None:
        """A positional argument: the first is the model (``vllm serve MODEL``), others are stray."""
        if self._positional_seen:
            self.stray(tok)
            return
        self._positional_seen = True
        self.put_model(tok)

    def put_model(self, tok: Tok, src: str | None = None) -> None:
        self.sources["model"] = src or tok.src
        if tok.known:
            self.model = tok.text
        else:
            self.model = None
            self.reason(f"model: value unknown ({MARK}) at {tok.src}")

    def merge(self, dest: str, path: Sequence[str], value: Any, src: str, *, append: bool = False) -> None:
        """Set ``dest.path...`` = value inside the dict at ``dest`` (creating it)."""
        cur = self.args.get(dest)
        if cur is None and dest in self.args and self.sources.get(dest) != src:
            self.reason(f"{dest}.{'.'.join(path)}: merged into a value that is unknown")
        if not isinstance(cur, dict):
            if cur is not None:
                self.reason(f"{dest}.{'.'.join(path)}: {dest} is not a JSON object; dotted key not merged")
                return
            cur = {}
        node: dict[str, Any] = cur
        for key in path[:-1]:
            nxt = node.get(key)
            if not isinstance(nxt, dict):
                nxt = {}
                node[key] = nxt
            node = nxt
        last = path[-1] if path else ""
        if append:
            old = node.get(last)
            items = value if isinstance(value, list) else [value]
            node[last] = (old if isinstance(old, list) else []) + items
        else:
            node[last] = value
        self.args[dest] = cur
        self.sources.setdefault(dest, src)

    def done(self, spec: Mapping[str, Any] | None) -> Command:
        return Command(
            engine=self.engine,
            model=self.model,
            argv=tuple(t.text for t in self.toks),
            args=dict(self.args),
            sources=dict(self.sources),
            env=dict(self.env),
            spec=spec,
            unknown=tuple(self.unknown),
            notes=tuple(self.notes),
        )


def convert(b: Builder, dest: str, text: str, src: str, kind: str = "any") -> Any:
    """One value token as a Python value; MARK -> None with a reason."""
    if MARK in text:
        if kind in ("json", "any") and text.lstrip().startswith(("{", "[")):
            partial = _partial_json(text)
            if partial is not None:  # what is known of it (``"synthetic_acceptance_length": $X``)
                unknown_keys = sorted(_unknown_leaves(partial, dest))
                b.reason(f"{', '.join(unknown_keys) or dest}: value unknown ({MARK}) at {src}")
                return _drop_marks(partial)
        b.reason(f"{dest}: value unknown ({MARK}) at {src}")
        return None
    if kind == "str":
        return text
    if kind == "bool":
        flag = as_bool(text)
        if flag is not None:
            return flag
    if kind == "dotted":  # vLLM --X.a.b v: json.loads, else the text (argparse_utils.py)
        parsed, err = parse_json(text)
        return parsed if err is None else scalar(text)
    stripped = text.lstrip()
    if kind == "json" or stripped.startswith(("{", "[")):
        value, err = parse_json(text)
        if err is None:
            return value
        if stripped.startswith(("{", "[")):
            b.reason(f"{dest}: not JSON: {err} at {src}")
            return text
    return scalar(text)


def store(b: Builder, opt: Opt, values: Sequence[Tok], tok: Tok) -> None:
    """Store an option's values under ``opt.dest`` per its arity and kind."""
    if opt.const is not None:
        for dest, const in opt.const.items():
            b.put(dest, const, tok.src)
        return
    if opt.append and values:  # vLLM --X.k+ a,b: the items, split on commas
        text = values[0].text
        value: Any = None if MARK in text else [scalar(x) for x in text.split(",")]
        if value is None:
            b.reason(f"{opt.dest}: value unknown ({MARK}) at {values[0].src}")
    elif opt.nargs == "+" or (opt.kind == "list" and len(values) > 1):
        value = [convert(b, opt.dest, v.text, v.src, "any") for v in values]
    elif not values:
        value = True
    else:
        value = convert(b, opt.dest, values[0].text, values[0].src, opt.kind)
    if opt.path:
        b.merge(opt.dest, opt.path, value, tok.src, append=opt.append)
    else:
        b.put(opt.dest, value, tok.src)


Lookup = Callable[[str, Tok], Opt]
OnValue = Callable[[Opt, str, Sequence[Tok], Tok], None]
OnPositional = Callable[[Tok], None]


def walk(toks: Sequence[Tok], b: Builder, lookup: Lookup, on_value: OnValue, on_positional: OnPositional) -> None:
    """Walk ``toks``: options to ``on_value`` (after ``lookup``), other words to ``on_positional``."""
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        i += 1
        text = tok.text
        if not is_option(text):
            on_positional(tok)
            continue
        name, eq, inline = text.partition("=")
        if MARK in name:
            b.reason(f"unknown words at {tok.src} (an unset or computed variable)")
            if not eq and i < n and not is_option(toks[i].text) and not toks[i].known:
                i += 1  # "--$X $Y": both unknown
            continue
        opt = lookup(name, tok)
        for note in opt.notes:
            b.note(note)
        if opt.reason:
            b.reason(opt.reason)
        values: list[Tok] = []
        if eq:
            values = [Tok(inline, tok.src)]
        elif opt.nargs == "+":
            while i < n and not is_option(toks[i].text):
                values.append(toks[i])
                i += 1
        elif opt.nargs in ("1", "?") and i < n and not is_option(toks[i].text):
            values = [toks[i]]
            i += 1
        if opt.nargs in ("1", "+") and not values:
            b.reason(f"{name}: expects a value at {tok.src}")
            continue
        on_value(opt, name, values, tok)


def _partial_json(text: str) -> Any:
    """JSON with unknown parts: each MARK outside a string becomes a string holding MARK, so
    that the rest parses; None when it still does not."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        if not in_string and text.startswith(MARK, i):
            out.append(json.dumps(MARK))
            i += len(MARK)
            continue
        ch = text[i]
        out.append(ch)
        if in_string and ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if ch == '"':
            in_string = not in_string
        i += 1
    value, err = parse_json("".join(out))
    return value if err is None and isinstance(value, (dict, list)) else None


def _unknown_leaves(value: Any, path: str) -> list[str]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _unknown_leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _unknown_leaves(v, f"{path}[{i}]")]
    return [path] if has_mark(value) else []


def _drop_marks(value: Any) -> Any:
    """Unknown leaves (and keys) become None: unknown, never the text with MARK in it."""
    if isinstance(value, dict):
        return {k: _drop_marks(v) for k, v in value.items() if MARK not in k}
    if isinstance(value, list):
        return [_drop_marks(v) for v in value]
    return None if has_mark(value) else value
