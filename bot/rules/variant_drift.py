"""variant-drift: an -mtp entry differs from its base sibling beyond the speculative settings.

What it does:
    Pairs every speculative variant entry (``-mtp``, ``-eagle``, ``-eagle3``, ``-spec``,
    ``-dspark`` in its name) with its base sibling (the name without that word, same config
    file) and lists what differs besides speculation:

    - entry fields: model, precision, framework, image, runner, any other (router...);
    - parallelism per scenario and sequence lengths: a search-space shape (``tp``, ``ep``,
      ``dp-attn``, ``pp``, prefill/decode workers...; concurrencies aside) only the variant
      runs, or sequence lengths the base does not run;
    - the server's engine flags and engine environment against the base's, as ``serve``
      reads them, where the two evaluated points match best (one evaluation of the base
      script per pair). Left out: the speculative settings, config-file paths (their keys
      are compared), values the command cannot know, values that follow from the points'
      own inputs (``--cuda-graph-max-bs $CONC``; at points of other sizes or concurrencies,
      a flag one side gives and the other's script writes in a branch), a parallel size of 1
      against none, and token budgets raised by at most 5% (room for the draft tokens).

    One finding per entry pair, at the variant's entry key when its config differs, else at
    the first differing flag; the message names the top differences, then how many more.

Why is this bad?
    The dashboard puts the variant's number next to the base's as "what speculation buys".
    With another image, checkpoint, parallelism or memory setting, part of the gap comes from
    those, not from speculation; a reviewer has to diff two scripts and two entries by hand
    to see it. A newer image the variant needs is a legitimate reason, but it is still a
    difference worth stating.

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    # the base script starts the same server without --gpu-memory-utilization
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SPEC='{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}'
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --gpu-memory-utilization 0.85 --speculative-config "$SPEC" > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Make the variant the base plus the speculative settings: the same image, model,
    parallelism and engine flags. When a difference is needed (an image with the MTP fix, a
    lower memory fraction for the draft), move the base to it too, or say why in the pull
    request so the comparison is read with it in mind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import Config
from bot.findings import Finding, Related, Severity
from bot.repo.configs import Entry, Point
from bot.repo.facts import Facts, Run
from bot.rules import _spec
from bot.serve import tables
from bot.serve.gather import concurrencies
from bot.serve.model import MARK, Command, engine_env
from bot.serve.specenv import table
from bot.serve.specview import Site, base_server, base_sibling
from bot.shell.values import lit, render

ID = "variant-drift"
CODE = "BB206"
SEVERITY = Severity.WARNING
SUMMARY = "an -mtp entry differs from its base sibling beyond the speculative settings"

TOP = 3  # differences named in the message
_FIRST_FIELDS = ("model", "precision", "framework", "image", "runner")
_NOT_SHAPE = frozenset({"conc-list", "conc-start", "conc-end", "spec-decoding", "additional-settings"})
_DEFAULT = re.compile(r"\{([a-z0-9.\-]+)\|([^}]+)\}")
# Args that name a config file whose keys the command already holds (TRT-LLM, vLLM ``--config``)
_FILE_ARGS = frozenset({"extra_llm_api_options", "config"})
# Token budgets a variant raises a little for the draft tokens (``ISL + (MTP + 1) * BS``)
_BUDGET = re.compile(r"tokens|context_length|model_len")
HEADROOM = 0.05
_SEP = re.compile(r"([_\-])")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ORDER = ("num-worker", "tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size")
_PARALLEL_SIZE = re.compile(r"(?:^|_)(?:tp|ep|dp|pp|tensor_parallel|pipeline_parallel|data_parallel|expert_parallel)"
                            r"_size$")


@dataclass(frozen=True)
class _Diff:
    text: str
    at: tuple[str, int] | None = None  # where the variant sets it (None: the entry key)
    base_at: tuple[str, int] | None = None  # where the base sets it
    name: str = ""  # the field, flag or variable


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    by_entry: dict[int, list[Site]] = {}
    for site in _spec.judged(facts):
        if site.server is not None and site.wanted != "none":
            by_entry.setdefault(id(site.entry), []).append(site)
    for entry in facts.entries:
        base = base_sibling(facts, entry)
        if base is None:
            continue
        config = _fields(facts, entry, base) + _parallelism(facts, entry, base)
        flags = _flags(facts, entry, base, by_entry.get(id(entry), []))
        if config or flags:
            yield _finding(entry, base, config, flags, by_entry.get(id(entry), []))


# ------------------------------------------------------------------ entry fields
def _fields(facts: Facts, entry: Entry, base: Entry) -> list[_Diff]:
    keys = [k for k in _FIRST_FIELDS if k in entry.fields or k in base.fields]
    keys += sorted((set(entry.fields) | set(base.fields)) - set(_FIRST_FIELDS) - {"scenarios"})
    known = facts.runners.labels if facts.runners.path is not None and facts.runners.error is None else None
    if "runner" in keys and known is not None and not {entry.runner, base.runner} <= set(known):
        keys.remove("runner")  # a label runners.yaml lacks: unknown-runner-label's finding (one per cause)
    return [_Diff(_image_text(str(a), str(b)) if k == "image" and a and b else f"{k} {_fmt(a)} (base {_fmt(b)})",
                  None, (base.path, base.field_pos(k).line), k)
            for k in keys for a, b in [(entry.fields.get(k), base.fields.get(k))] if _norm(a) != _norm(b)]


def _image_text(mine: str, theirs: str) -> str:
    repo, _, tag = mine.partition(":")
    base_repo, _, base_tag = theirs.partition(":")
    if repo != base_repo or not tag or not base_tag:
        return f"image {_short(mine)} (base {_short(theirs)})"
    mine_parts, base_parts = _SEP.split(tag), _SEP.split(base_tag)
    if len(mine_parts) == len(base_parts) and len(tag) > 24:
        # the parts both tags share are left out (``rocm7.2.2_..._atom0.1.2`` vs ``rocm7.2.3_..._atom20260511``)
        tag, base_tag = _differing(mine_parts, base_parts), _differing(base_parts, mine_parts)
    return f"image tag {_short(tag)} (base {_short(base_tag)})"


def _differing(parts: list[str], other: list[str]) -> str:
    """The parts of a split tag that differ from ``other``'s, runs of shared ones as one ``…``."""
    out = ""
    for i in range(0, len(parts), 2):  # even: text, odd: the separator after it
        sep = parts[i - 1] if i and out else ""
        if parts[i] != other[i]:
            out += sep + parts[i]
        elif not out.endswith("\u2026"):
            out += sep + "\u2026"
    return out


# ------------------------------------------------------------------ parallelism
def _parallelism(facts: Facts, entry: Entry, base: Entry) -> list[_Diff]:
    defaults = _defaults(facts, entry.multinode)
    mine, theirs = _shapes(entry, defaults), _shapes(base, _defaults(facts, base.multinode))
    out: list[_Diff] = []
    for seq, (shapes, point) in mine.items():
        got = theirs.get(seq)
        at = (entry.path, point.pos.line)
        if got is None:
            out.append(_Diff(f"{seq}: no base points", at, None, f"search space at {seq}"))
            continue
        extra = [s for s in shapes if s not in got[0]]
        if len(extra) == 1:
            others = "; ".join(_shape_text(s, defaults) for s in got[0][:2]) + ("; ..." if len(got[0]) > 2 else "")
            text = f"{seq}: {_shape_text(extra[0], defaults)} only in the variant (base {others})"
        elif extra:
            text = (f"{seq}: {len(extra)} of {len(shapes)} search-space shapes only in the variant "
                    f"(such as {_shape_text(extra[0], defaults)})")
        else:
            continue
        out.append(_Diff(text, at, (base.path, got[1].pos.line), f"search space at {seq}"))
    return out


def _defaults(facts: Facts, multinode: bool) -> dict[str, str]:
    """Point field -> the value the workflow uses when it is not given (the profile's
    ``{ep|1}`` templates)."""
    templates = facts.profile.env_multi if multinode else facts.profile.env_single
    return {m.group(1): m.group(2) for t in templates.values() for m in [_DEFAULT.fullmatch(t)] if m}


def _seq(point: Point) -> str:
    isl, osl = point.seq.get("isl"), point.seq.get("osl")
    return f"isl {isl} / osl {osl}" if isl is not None and osl is not None else point.scenario


def _shapes(entry: Entry, defaults: Mapping[str, str]) -> dict[str, tuple[list[tuple[tuple[str, str], ...]], Point]]:
    """Sequence lengths -> the distinct search-space shapes there (in order), and the first point."""
    out: dict[str, tuple[list[tuple[tuple[str, str], ...]], Point]] = {}
    for p in entry.points:
        shape = _shape(p, defaults)
        shapes, _ = out.setdefault(_seq(p), ([], p))
        if shape not in shapes:
            shapes.append(shape)
    return out


def _shape(point: Point, defaults: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A point's search-space fields but its concurrencies and speculation, defaults filled in."""
    flat: dict[str, str] = dict(defaults)
    for k, v in point.fields.items():
        if k in _NOT_SHAPE:
            continue
        if isinstance(v, Mapping):
            flat.update({f"{k}.{sk}": _norm(sv) or "" for sk, sv in v.items() if sk not in _NOT_SHAPE})
        else:
            flat[k] = _norm(v) or ""
    return tuple(sorted(flat.items()))


def _shape_text(shape: tuple[tuple[str, str], ...], defaults: Mapping[str, str]) -> str:
    """``tp 8 ep 8 dp-attn``; ``prefill 2x tp 4, decode tp 8`` (values at their default left out)."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for k, v in shape:
        if defaults.get(k) == v or v == "false":
            continue
        group, _, name = k.rpartition(".") if k.startswith(("prefill.", "decode.")) else ("", "", k)
        rank = _ORDER.index(name) if name in _ORDER else len(_ORDER)
        text = f"{v}x" if name == "num-worker" else name if v == "true" else f"{name} {v}"
        groups.setdefault(group, []).append((rank, text))
    order = ("", "prefill", "decode")
    parts = [(f"{g} " if g else "") + " ".join(t for _, t in sorted(items))
             for g, items in sorted(groups.items(), key=lambda kv: order.index(kv[0]))]
    return ", ".join(parts) or "defaults"


# ------------------------------------------------------------------ engine flags
def _flags(facts: Facts, entry: Entry, base: Entry, sites: list[Site]) -> list[_Diff]:
    """The server's flags and engine env against the base's, at the one scenario and sequence
    lengths where the two evaluated points match best (same parallelism, then the same first
    concurrency): one base evaluation per entry pair, made lazily by ``base_server``."""
    defaults = _defaults(facts, False)
    best: tuple[tuple[bool, bool], Site, Run] | None = None
    seen: set[tuple[str, str, str]] = set()
    for site in sites:
        key = (site.point.scenario, str(site.point.seq.get("isl")), str(site.point.seq.get("osl")))
        run = _base_run(facts, site, base)
        if key in seen or run is None or site.run is None:
            continue
        seen.add(key)
        conc = site.conc or next(iter(concurrencies(site.point)), None)
        score = (_shape(site.point, defaults) == _shape(run.point, defaults),
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
        mine[_conc_var(facts)] = lit(site.conc)
    theirs = facts.env_for(base, run.point, run.node, run.label)
    shown = {n: ("" if mine.get(n) is None else render(mine[n], MARK),
                 "" if theirs.get(n) is None else render(theirs[n], MARK)) for n in set(mine) | set(theirs)}
    return [(n, a, b) for n, (a, b) in sorted(shown.items()) if a != b]


def _compare(facts: Facts, mine: Command, theirs: Command, inputs: list[tuple[str, str, str]]) -> list[_Diff]:
    sizes = frozenset(facts.profile.env_single)  # the parallelism inputs (TP, EP_SIZE, DP_ATTENTION...)
    varied = any(name in sizes or name == _conc_var(facts) for name, _, _ in inputs)
    out: list[_Diff] = []
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
            if _norm(x) == _norm(y) or _unknown(x) or _unknown(y) or _neutral(name, x, y) or _headroom(name, x, y) \
                    or _explained(x, y, inputs):
                continue
            # a flag one side gives at a point whose sizes or concurrency differ from the other's,
            # and which the other side's script also writes (in a branch): the point decides it
            if varied and (x is None or y is None) and _mentions(facts, theirs if x is not None else mine, k, shown):
                continue
            label = shown + name[len(k):]
            out.append(_Diff(f"{label} {_fmt(x)} (base {_fmt(y)})", _spec.split_src(mine.sources.get(k)),
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


def _conc_var(facts: Facts) -> str:
    templates = {**facts.profile.env_common, **facts.profile.env_single}
    return next((n for n, t in templates.items() if t == "{@conc}"), "CONC")


def _spelling(cmd: Command, key: str) -> str | None:
    """The option as the command writes it (``--cuda-graph-max-bs``); TRT-LLM: its LLM-API key."""
    short = tables.sglang().options if cmd.engine == "sglang" else tables.vllm().short if cmd.engine == "vllm" else {}
    return next((f for f in (w.split("=", 1)[0] for w in cmd.argv)
                 if f.startswith("-") and (short.get(f) == key or f.lstrip("-").replace("-", "_") == key)),
                key if cmd.engine == "trtllm" else None)


def _compare_env(mine: Command, theirs: Command, inputs: list[tuple[str, str, str]]) -> list[_Diff]:
    spec_env = {n for rows in table().values() for n in rows}
    out: list[_Diff] = []
    for name in sorted(set(mine.env) | set(theirs.env)):
        a, b = mine.env.get(name), theirs.env.get(name)
        if not engine_env(name) or name in spec_env or _bool(a) == _bool(b) or _unknown(a) or _unknown(b) \
                or _explained(a, b, inputs):
            continue
        out.append(_Diff(f"env {name} {_fmt(a)} (base {_fmt(b)})", name=f"env {name}"))
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
    return _PARALLEL_SIZE.search(name) is not None and {_norm(a), _norm(b)} <= {"1", None}


def _headroom(name: str, a: Any, b: Any) -> bool:
    """A token budget the variant raises by a few percent (room for the draft tokens)."""
    x, y = _num(_norm(a) or ""), _num(_norm(b) or "")
    return _BUDGET.search(name) is not None and x is not None and y is not None and 0 < y <= x <= y * (1 + HEADROOM)


def _explained(a: Any, b: Any, inputs: list[tuple[str, str, str]]) -> bool:
    """Whether a value differs only because an input does: the variant's value is (or scales
    or shifts with) one input as the base's is with the base's (``$CONC``, ``$((CONC * 2))``)."""
    x, y = _norm(a), _norm(b)
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


# ------------------------------------------------------------------ values
def _norm(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (Mapping, list, tuple)):
        return json.dumps(v, sort_keys=True, default=str)
    return str(v).strip()


def _fmt(v: Any) -> str:
    if v is None:
        return "not set"
    if v == "":
        return '""'
    if isinstance(v, Mapping):
        return _short(" ".join(str(x) for x in v.values()))
    return _short(_norm(v) or "")


def _short(text: str, limit: int = 40) -> str:
    """At most ``limit`` characters; a long path keeps its end (``…/dsv4_mtp.jinja``)."""
    if len(text) <= limit:
        return text
    if "/" in text and " " not in text:
        return "\u2026/" + text.rpartition("/")[2][-(limit - 2):]
    return text[:limit - 1] + "\u2026"


# ------------------------------------------------------------------ finding
def _finding(entry: Entry, base: Entry, config: list[_Diff], flags: list[_Diff], sites: list[Site]) -> Finding:
    diffs = config + sorted(flags, key=lambda d: d.name.startswith("env "))  # flags, then the environment
    more = f" and {len(diffs) - TOP} more" if len(diffs) > TOP else ""
    msg = (f"{entry.name} differs from its base {base.name} beyond the speculative settings: "
           f"{'; '.join(d.text for d in diffs[:TOP])}{more}")
    if config:
        path, line, col = entry.path, entry.pos.line, entry.pos.col
    else:
        site = sites[0]
        assert site.server is not None
        path, line = next((d.at for d in diffs if d.at is not None), None) \
            or _spec.split_src(site.server.sources.get("model")) or _spec.command_at(site.server, site)
        col = 1
    related = [Related(base.path, base.pos.line, f"the base entry {base.name}")]
    for d in diffs[:2 * TOP]:
        if d.at is not None and d.at != (path, line):
            related.append(Related(d.at[0], d.at[1], d.text))
        if d.base_at is not None:
            related.append(Related(d.base_at[0], d.base_at[1], f"{base.name}: its {d.name}"))
    return Finding(ID, CODE, SEVERITY, path, line, col, msg, tuple(related[:10]), (entry.name, base.name),
                   key=f"{entry.name}|{base.name}")
