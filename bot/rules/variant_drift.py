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

import re
from collections.abc import Iterator, Mapping

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site, base_sibling
from bot.repo.facts import Facts
from bot.repo.load.configs import POINT_BLOCKS, Entry, Point
from bot.rules import _spec
from bot.rules._drift import Diff, flag_diffs, fmt, norm, point_defaults, point_shape, shorten
from bot.settings import Config

ID = "variant-drift"
CODE = "BB206"
SEVERITY = Severity.WARNING
SUMMARY = "an -mtp entry differs from its base sibling beyond the speculative settings"

TOP = 3  # differences named in the message
_FIRST_FIELDS = ("model", "precision", "framework", "image", "runner")
_SEP = re.compile(r"([_\-])")
_ORDER = ("num-worker", "tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size")


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
        flags = flag_diffs(facts, entry, base, by_entry.get(id(entry), []))
        if config or flags:
            yield _finding(entry, base, config, flags, by_entry.get(id(entry), []))


# ------------------------------------------------------------------ entry fields
def _fields(facts: Facts, entry: Entry, base: Entry) -> list[Diff]:
    keys = [k for k in _FIRST_FIELDS if k in entry.fields or k in base.fields]
    keys += sorted((set(entry.fields) | set(base.fields)) - set(_FIRST_FIELDS) - POINT_BLOCKS)
    known = facts.runners.labels if facts.runners.path is not None and facts.runners.error is None else None
    if "runner" in keys and known is not None and not {entry.runner, base.runner} <= set(known):
        keys.remove("runner")  # a label runners.yaml lacks: unknown-runner-label's finding (one per cause)
    return [Diff(_image_text(str(a), str(b)) if k == "image" and a and b else f"{k} {fmt(a)} (base {fmt(b)})",
                 None, (base.path, base.field_pos(k).line), k)
            for k in keys for a, b in [(entry.fields.get(k), base.fields.get(k))] if norm(a) != norm(b)]


def _image_text(mine: str, theirs: str) -> str:
    repo, _, tag = mine.partition(":")
    base_repo, _, base_tag = theirs.partition(":")
    if repo != base_repo or not tag or not base_tag:
        return f"image {shorten(mine)} (base {shorten(theirs)})"
    mine_parts, base_parts = _SEP.split(tag), _SEP.split(base_tag)
    if len(mine_parts) == len(base_parts) and len(tag) > 24:
        # the parts both tags share are left out (``rocm7.2.2_..._atom0.1.2`` vs ``rocm7.2.3_..._atom20260511``)
        tag, base_tag = _differing(mine_parts, base_parts), _differing(base_parts, mine_parts)
    return f"image tag {shorten(tag)} (base {shorten(base_tag)})"


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
def _parallelism(facts: Facts, entry: Entry, base: Entry) -> list[Diff]:
    defaults = point_defaults(facts, entry.multinode)
    mine, theirs = _shapes(entry, defaults), _shapes(base, point_defaults(facts, base.multinode))
    out: list[Diff] = []
    for seq, (shapes, point) in mine.items():
        got = theirs.get(seq)
        at = (entry.path, point.pos.line)
        if got is None:
            out.append(Diff(f"{seq}: no base points", at, None, f"search space at {seq}"))
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
        out.append(Diff(text, at, (base.path, got[1].pos.line), f"search space at {seq}"))
    return out


def _seq(point: Point) -> str:
    isl, osl = point.seq.get("isl"), point.seq.get("osl")
    return f"isl {isl} / osl {osl}" if isl is not None and osl is not None else point.scenario


def _shapes(entry: Entry, defaults: Mapping[str, str]) -> dict[str, tuple[list[tuple[tuple[str, str], ...]], Point]]:
    """Sequence lengths -> the distinct search-space shapes there (in order), and the first point."""
    out: dict[str, tuple[list[tuple[tuple[str, str], ...]], Point]] = {}
    for p in entry.points:
        shape = point_shape(p, defaults)
        shapes, _ = out.setdefault(_seq(p), ([], p))
        if shape not in shapes:
            shapes.append(shape)
    return out


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


# ------------------------------------------------------------------ finding
def _finding(entry: Entry, base: Entry, config: list[Diff], flags: list[Diff], sites: list[Site]) -> Finding:
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
