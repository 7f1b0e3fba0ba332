"""Whether the static answer and the traced one agree, for one (entry, point, launcher).

Compared, each side normalized the same way:

- the script: ``serve``'s dispatched script against the file the launcher really ran;
- the server: engine, model and every argument the static side knows (a value holding an
  unknown part, or a key the static side could not read, matches whatever ran: the static
  model said "unknown", not something else); an argument only the trace has is a
  disagreement unless the static command has words it could not read. Where the static side
  keeps several servers apart (an ``if`` on a value it cannot know, such as a variable a
  container image may set), the traced server agrees with any of them;
- the client: present on both sides or on neither, and its model and concurrency.

A disagreement means the static side is wrong until shown otherwise (a stand-in limit).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.launches.launch import Launch
from bot.repo.facts import Facts
from bot.repo.load.configs import Entry
from bot.serve.model import MARK, Command
from bot.trace.run import Traced

CLIENT_KEYS = ("model", "max_concurrency")


@dataclass(frozen=True)
class Disagreement:
    part: str  # "script" | "server" | "client"
    key: str  # what differs ("script", an argument name, "engine", "model", "present")
    static: Any
    traced: Any

    def text(self) -> str:
        return f"{self.part} {self.key}: static {self.static!r}, traced {self.traced!r}"


Key = tuple[int, int, "str | None", str]


def static_launches(facts: Facts, entries: Sequence[Entry], all_points: bool = False) -> dict[Key, Launch]:
    """``serve``'s answer for ``entries``, by (entry, point, concurrency, launcher), from the
    lint's facts with the serve sinks on (``serve_facts``)."""
    from bot.launches.gather import gather as gather_serve
    from bot.launches.gather import serve_facts

    twin = serve_facts(facts)
    unique = list({id(e): e for e in entries}.values())
    return {(id(launch.entry), id(launch.point), launch.conc, launch.launcher): launch
            for launch in gather_serve(twin, unique, all_points=all_points)}


def verdict(served: Mapping[Key, Launch], t: Traced) -> list[Disagreement]:
    """``t``'s disagreements with the static answer for the same point, concurrency and launcher."""
    launch = served.get((id(t.entry), id(t.point), t.conc, t.launcher))
    if launch is None:
        return [Disagreement("script", "run", "not modelled", t.script)]
    return compare(launch, t)


def compare(static: Launch, traced: Traced) -> list[Disagreement]:
    out: list[Disagreement] = []
    if static.script != traced.script:
        out.append(Disagreement("script", "script", static.script, traced.script))
        return out  # another script: its server says nothing more
    # the static side may keep several servers apart (an ``if`` it cannot decide): the traced
    # one agrees with any of them
    found: list[list[Disagreement]] = [_server(s, traced.server) for s in (static.server, *static.others)] \
        if static.server else [_server(None, traced.server)]
    best: list[Disagreement] = sorted(found, key=len)[0]
    out.extend(best)
    out += _client(static.client, traced.client)
    return out


def _known(value: Any) -> bool:
    """A value the static side knows: no unknown part (None is a value it could not read)."""
    if value is None:
        return False
    if isinstance(value, str):
        return MARK not in value
    if isinstance(value, Mapping):
        return all(_known(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_known(v) for v in value)
    return True


def _opaque(cmd: Command) -> bool:
    return any(u.startswith("unknown words") for u in cmd.unknown)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return all(k in b and _same(v, b[k]) for k, v in a.items() if _known(v)) and (
            set(b) <= set(a) or not all(_known(v) for v in a.values()))
    if not _known(a):
        return True
    if isinstance(a, str) and isinstance(b, str) and "/" in a and posixpath.normpath(a) == posixpath.normpath(b):
        return True  # ``./benchmarks/x/../t.jinja`` is ``benchmarks/t.jinja``: $0 as ./path or path
    return bool(a == b)


def _server(static: Command | None, traced: Command | None) -> list[Disagreement]:
    if static is None or traced is None:
        if (static is None) != (traced is None):
            return [Disagreement("server", "present", static is not None, traced is not None)]
        return []
    out: list[Disagreement] = []
    if static.engine != traced.engine:
        return [Disagreement("server", "engine", static.engine, traced.engine)]
    if static.model is not None and _known(static.model) and static.model != traced.model:
        out.append(Disagreement("server", "model", static.model, traced.model))
    for key, value in static.args.items():
        if key not in traced.args:
            if _known(value):
                out.append(Disagreement("server", key, value, None))
        elif not _same(value, traced.args[key]):
            out.append(Disagreement("server", key, value, traced.args[key]))
    if not _opaque(static):
        for key, value in traced.args.items():
            if key not in static.args:
                out.append(Disagreement("server", key, None, value))
    return out


def _client(static: Command | None, traced: Command | None) -> list[Disagreement]:
    if (static is None) != (traced is None):
        return [Disagreement("client", "present", static is not None, traced is not None)]
    if static is None or traced is None:
        return []
    out = []
    for key in CLIENT_KEYS:
        a, b = static.args.get(key), traced.args.get(key)
        if a is not None and b is not None and _known(a) and str(a) != str(b):
            out.append(Disagreement("client", key, a, b))
    return out
