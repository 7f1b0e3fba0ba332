"""The engine comparison behind variant-drift: how an -mtp variant's server differs from
its base sibling's.

The engine flags and engine environment of the server a variant point starts, against the
server the base starts where the two evaluated points match best (one evaluation of the
base script per pair, made by ``bot.launches.specview.base_server``), leaving out what the
rule does not report: the speculative settings, config-file paths, values the command
cannot know, values that follow from the points' own inputs, a parallel size of 1 against
none and token budgets raised for the draft tokens. Also the search-space shape of a point
(workflow defaults filled in) and the value spelling the rule's entry comparison shares.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.launches.launch import concurrencies
from bot.launches.specview import Site, base_server
from bot.repo.facts import Facts, Run
from bot.repo.load.configs import Entry, Point
from bot.rules import _spec
from bot.serve import tables
from bot.serve.model import MARK, Command, engine_env
from bot.serve.specenv import table
from bot.shell.ir.values import lit, render

_NOT_SHAPE = frozenset({"conc-list", "conc-start", "conc-end", "spec-decoding", "additional-settings"})
_DEFAULT = re.compile(r"\{([a-z0-9.\-]+)\|([^}]+)\}")
# Args that name a config file whose keys the command already holds (TRT-LLM, vLLM ``--config``)
_FILE_ARGS = frozenset({"extra_llm_api_options", "config"})
# Token budgets a variant raises a little for the draft tokens (``ISL + (MTP + 1) * BS``)
_BUDGET = re.compile(r"tokens|context_length|model_len")
HEADROOM = 0.05
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_PARALLEL_SIZE = re.compile(r"(?:^|_)(?:tp|ep|dp|pp|tensor_parallel|pipeline_parallel|data_parallel|expert_parallel)"
                            r"_size$")


@dataclass(frozen=True)
class Diff:
    text: str
    at: tuple[str, int] | None = None  # where the variant sets it (None: the entry key)
    base_at: tuple[str, int] | None = None  # where the base sets it
    name: str = ""  # the field, flag or variable


# ------------------------------------------------------------------ engine flags
def flag_diffs(facts: Facts, entry: Entry, base: Entry, sites: list[Site]) -> list[Diff]:
    """The server's flags and engine env against the base's, at the one scenario and sequence
    lengths where the two evaluated points match best (same parallelism, then the same first
    concurrency): one base evaluation per entry pair, made lazily by ``base_server``."""
    defaults = point_defaults(facts, False)
    best: tuple[tuple[bool, bool], Site, Run] | None = None
    seen: set[tuple[str, str, str]] = set()
    for site in sites:
        key = (site.point.scenario, str(site.point.seq.get("isl")), str(site.point.seq.get("osl")))
        run = _base_run(facts, site, base)
        if key in seen or run is None or site.run is None:
            continue
        seen.add(key)
        conc = site.conc or next(iter(concurrencies(site.point)), None)
        score = (point_shape(site.point, defaults) == point_shape(run.point, defaults),
                 conc == next(iter(concurrencies(run.point)), None))
        if best is None or score > best[0]:
            best = (score, site, run)
    if best is None:
        return []
    _, site, run = best
    other = base_server(facts, site, base)
    scripts = {at[0] for c in (site.server, other) if c for at in map(_spec.split_src, c.sources.values()) if at}
    if other is None or site.server is None or any(facts.syntax.get(p) for p in scripts):
        return []  # a script bash rejects is shell-syntax's finding; what it starts is not comparable
    inputs = _inputs(facts, entry, site, base, run)
    return _compare(facts, site.server, other, inputs) + _compare_env(site.server, other, inputs)


def _base_run(facts: Facts, site: Site, base: Entry) -> Run | None:
    """The base's run ``base_server`` evaluates for ``site`` (None: it evaluates none)."""
    p = site.point
    run = next((r for r in facts.runs if r.entry is base and r.launcher == site.launcher
                and r.point.scenario == p.scenario and r.point.seq.get("isl") == p.seq.get("isl")
                and r.point.seq.get("osl") == p.seq.get("osl") and r.result is not None), None)
    return None if run is None or run.bound_hit else run


def _inputs(facts: Facts, entry: Entry, site: Site, base: Entry, run: Run) -> list[tuple[str, str, str]]:
    """(name, variant value, base value) of every input the two evaluations start from differently."""
    assert site.run is not None
    mine = facts.env_for(entry, site.point, site.run.node, site.run.label)
    if site.conc is not None:
        mine[facts.profile.conc_var] = lit(site.conc)
    theirs = facts.env_for(base, run.point, run.node, run.label)
    shown = {n: ("" if mine.get(n) is None else render(mine[n], MARK),
                 "" if theirs.get(n) is None else render(theirs[n], MARK)) for n in set(mine) | set(theirs)}
    return [(n, a, b) for n, (a, b) in sorted(shown.items()) if a != b]


def _compare(facts: Facts, mine: Command, theirs: Command, inputs: list[tuple[str, str, str]]) -> list[Diff]:
    sizes = frozenset(facts.profile.env_single)  # the parallelism inputs (TP, EP_SIZE, DP_ATTENTION...)
    varied = any(name in sizes or name == facts.profile.conc_var for name, _, _ in inputs)
    out: list[Diff] = []
    for k in sorted(sorted(set(mine.args) | set(theirs.args)), key=_order(mine, theirs)):
        if _spec_arg(mine.engine, k) or k in _FILE_ARGS or any(c.args.get(k, 0) is None for c in (mine, theirs)):
            continue  # speculation, a config file's name, a value the command cannot know (None)
        a, b = mine.args.get(k), theirs.args.get(k)
        if isinstance(a, Mapping) or isinstance(b, Mapping):
            a = a if isinstance(a, Mapping) else {}
            b = b if isinstance(b, Mapping) else {}
            leaves = [(f"{k}.{sub}", a.get(sub), b.get(sub)) for sub in sorted(set(a) | set(b), key=str)]
        else:
            leaves = [(k, a, b)]
        shown = _spelling(mine, k) or _spelling(theirs, k) or ("--" + k.replace("_", "-"))
        for name, x, y in leaves:
            if norm(x) == norm(y) or _unknown(x) or _unknown(y) or _neutral(name, x, y) or _headroom(name, x, y) \
                    or _explained(x, y, inputs):
                continue
            # a flag one side gives at a point whose sizes or concurrency differ from the other's,
            # and which the other side's script also writes (in a branch): the point decides it
            if varied and (x is None or y is None) and _mentions(facts, theirs if x is not None else mine, k, shown):
                continue
            label = shown + name[len(k):]
            out.append(Diff(f"{label} {fmt(x)} (base {fmt(y)})", _spec.split_src(mine.sources.get(k)),
                            _spec.split_src(theirs.sources.get(k)), label))
    return out


def _mentions(facts: Facts, cmd: Command, key: str, shown: str) -> bool:
    """Whether the script that starts ``cmd`` writes the option anywhere (``--ep-size`` in an ``if``)."""
    at = _spec.split_src(cmd.sources.get("model"))
    parsed = facts.script(at[0]) if at is not None else None
    text = parsed.source.decode("utf-8", "replace") if parsed is not None else ""
    flags = {"--" + key, "--" + key.replace("_", "-")} | ({shown} if shown.startswith("-") else set())
    if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in flags):
        return True
    return cmd.engine == "trtllm" and re.search(rf"(?m)^{re.escape(key)}\s*:", text) is not None  # a top-level YAML key


def _spelling(cmd: Command, key: str) -> str | None:
    """The option as the command writes it (``--cuda-graph-max-bs``); TRT-LLM: its LLM-API key."""
    short = tables.sglang().options if cmd.engine == "sglang" else tables.vllm().short if cmd.engine == "vllm" else {}
    return next((f for f in (w.split("=", 1)[0] for w in cmd.argv)
                 if f.startswith("-") and (short.get(f) == key or f.lstrip("-").replace("-", "_") == key)),
                key if cmd.engine == "trtllm" else None)


def _compare_env(mine: Command, theirs: Command, inputs: list[tuple[str, str, str]]) -> list[Diff]:
    spec_env = {n for rows in table().values() for n in rows}
    out: list[Diff] = []
    for name in sorted(set(mine.env) | set(theirs.env)):
        a, b = mine.env.get(name), theirs.env.get(name)
        if not engine_env(name) or name in spec_env or _bool(a) == _bool(b) or _unknown(a) or _unknown(b) \
                or _explained(a, b, inputs):
            continue
        out.append(Diff(f"env {name} {fmt(a)} (base {fmt(b)})", name=f"env {name}"))
    return out


def _bool(v: str | None) -> str | None:
    """An environment value with its boolean spellings made one (``0`` / ``false`` / ``False``)."""
    low = (v or "").strip().lower()
    return "true" if low in ("1", "true", "yes", "on") else "false" if low in ("0", "false", "no", "off") else v


def _order(mine: Command, theirs: Command) -> Callable[[str], tuple[int, int, int]]:
    """Sort key of an arg: the variant's line, then its place in the command (ties on one line)."""
    def key(k: str) -> tuple[int, int, int]:
        at = _spec.split_src(mine.sources.get(k)) or _spec.split_src(theirs.sources.get(k))
        flag = _spelling(mine, k)
        place = next((i for i, w in enumerate(mine.argv) if w.split("=", 1)[0] == flag), 0)
        return (0, at[1], place) if at else (1, 0, place)
    return key


def _spec_arg(engine: str, key: str) -> bool:
    k = key.lower()
    return (key in _spec.SPEC_ARGS.get(engine, ()) or k.startswith(("speculative", "draft", "num_speculative"))
            or "spec_decode" in k or (engine == "atom" and k == "method"))


def _unknown(v: Any) -> bool:
    """A value with a part the command cannot know (MARK; a list element read as null)."""
    return MARK in json.dumps(v, default=str, ensure_ascii=False) or (isinstance(v, list) and None in v)


def _neutral(name: str, a: Any, b: Any) -> bool:
    """A parallel size of 1 against none given (every engine's default)."""
    return _PARALLEL_SIZE.search(name) is not None and {norm(a), norm(b)} <= {"1", None}


def _headroom(name: str, a: Any, b: Any) -> bool:
    """A token budget the variant raises by a few percent (room for the draft tokens)."""
    x, y = _num(norm(a) or ""), _num(norm(b) or "")
    return _BUDGET.search(name) is not None and x is not None and y is not None and 0 < y <= x <= y * (1 + HEADROOM)


def _explained(a: Any, b: Any, inputs: list[tuple[str, str, str]]) -> bool:
    """Whether a value differs only because an input does: the variant's value is (or scales
    or shifts with) one input as the base's is with the base's (``$CONC``, ``$((CONC * 2))``)."""
    x, y = norm(a), norm(b)
    if x is None or y is None:
        return False
    fx, fy = _num(x), _num(y)
    for _, mine, theirs in inputs:
        if x == mine and y == theirs:
            return True
        fm, ft = _num(mine), _num(theirs)
        if fx is not None and fy is not None and fm is not None and ft is not None \
                and ((ft != 0 and fy != 0 and fx / fy == fm / ft) or fx - fy == fm - ft):
            return True
    return False


def _num(text: str) -> float | None:
    return float(text) if _NUMBER.fullmatch(text) else None


# ------------------------------------------------------------------ points
def point_defaults(facts: Facts, multinode: bool) -> dict[str, str]:
    """Point field -> the value the workflow uses when it is not given (the profile's
    ``{ep|1}`` templates)."""
    templates = facts.profile.env_multi if multinode else facts.profile.env_single
    return {m.group(1): m.group(2) for t in templates.values() for m in [_DEFAULT.fullmatch(t)] if m}


def point_shape(point: Point, defaults: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A point's search-space fields but its concurrencies and speculation, defaults filled in."""
    flat: dict[str, str] = dict(defaults)
    for k, v in point.fields.items():
        if k in _NOT_SHAPE:
            continue
        if isinstance(v, Mapping):
            flat.update({f"{k}.{sk}": norm(sv) or "" for sk, sv in v.items() if sk not in _NOT_SHAPE})
        else:
            flat[k] = norm(v) or ""
    return tuple(sorted(flat.items()))


# ------------------------------------------------------------------ values
def norm(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (Mapping, list, tuple)):
        return json.dumps(v, sort_keys=True, default=str)
    return str(v).strip()


def fmt(v: Any) -> str:
    if v is None:
        return "not set"
    if v == "":
        return '""'
    if isinstance(v, Mapping):
        return shorten(" ".join(str(x) for x in v.values()))
    return shorten(norm(v) or "")


def shorten(text: str, limit: int = 40) -> str:
    """At most ``limit`` characters; a long path keeps its end (``…/dsv4_mtp.jinja``)."""
    if len(text) <= limit:
        return text
    if "/" in text and " " not in text:
        return "\u2026/" + text.rpartition("/")[2][-(limit - 2):]
    return text[:limit - 1] + "\u2026"
