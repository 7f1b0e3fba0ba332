"""Recipe parity facts: for each single-node vLLM or SGLang entry, the official recipe for
each group of its points and how the server its script starts differs from it.

A group is the points that ask the same of a recipe (``Query``: tensor and expert
parallelism, DP attention, speculative decoding; the model, hardware and precision are the
entry's). Each group is compared once, at its first point (``all_points``: every point),
on the first launcher the entry's runner label reaches. The server is read the way the
speculative-decoding rules read it (``bot.launches.specview``: the lint's own launcher run,
the script evaluated up to its server), so an MTP entry's script is not evaluated twice in
one lint. A recipe is rendered once per query (``render``'s memo), not per point.

Facts only: the rule ``recipe-mismatch`` and the pull-request summary judge and show them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from bot.launches.gather import engine_of
from bot.launches.specview import Site, site_at, wanted
from bot.recipes import sglang_cookbook, vllm_recipe
from bot.recipes.diff import diff, recipe_command
from bot.recipes.model import Difference, Miss, Query, Rendered, Source, SourceUnavailable
from bot.repo.facts import Facts, Run
from bot.repo.load.configs import Entry, Point

# InferenceX runner labels start with the GPU: b200, b200-dgxc, h100-dgxc-slurm, mi355x, gb300...
_GPU = re.compile(r"(gb|b|h|mi)\d{3}[a-z]*", re.I)
ENGINES = ("vllm", "sglang")
DIFFERING = ("value-differs", "missing-in-script", "extra-in-script")


@dataclass(frozen=True)
class Comparison:
    entry: Entry
    point: Point  # the point compared
    points: tuple[Point, ...]  # the points it stands for (its group)
    engine: str
    query: Query | None
    recipe: Rendered | None = None
    miss: Miss | None = None  # why there is no recipe
    differences: tuple[Difference, ...] = ()
    script: str | None = None
    launcher: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def major(self) -> list[Difference]:
        """The MAJOR and MAJOR-spec keys that certainly differ (a value not known statically, or
        a script with words not known statically that may set the key, is shown, not judged)."""
        return [d for d in self.differences if definite(d)]


def definite(d: Difference) -> bool:
    """A difference the rule may report. The model is shown, never judged: the entry's
    ``model`` chose the recipe, and a script serving a local copy of it names a path. Nor is a
    parallel setting the point's own search space asks for (``SWEPT``)."""
    return d.klass in ("MAJOR", "MAJOR-spec") and d.key != "model" and d.status in DIFFERING and not any(
        "not known statically" in n or n.startswith(SWEPT) for n in d.notes)


SWEPT = "set by the search space"
# canonical keys a point's tp / ep / dp-attn decide, per engine
_SWEEP_KEYS = {
    "tp": ("tensor_parallel_size", "tp_size"),
    "ep": ("ep_size", "enable_expert_parallel"),
    "dp-attn": ("enable_dp_attention", "dp_size", "data_parallel_size"),
}


def _swept(d: Difference, q: Query) -> Difference:
    """``d`` with a note when the script's value is what the point's search space asks for (the
    benchmark sweeps it: the recipe's own size is one choice among those), or, for the
    quantization, what the entry's checkpoint is anyway."""
    for name, keys in _SWEEP_KEYS.items():
        if d.key not in keys or d.script is None:
            continue
        asked: object = {"tp": q.tp, "ep": q.ep, "dp-attn": q.dp_attn}[name]
        ok = (d.script == asked or (d.key == "enable_expert_parallel" and d.script is (q.ep > 1))
              or (d.key in ("dp_size", "data_parallel_size") and q.dp_attn and d.script == q.tp))
        if ok:
            note = f"{SWEPT} ({name}={asked}); the recipe's is {d.recipe if d.recipe is not None else 'unset'}"
            return replace(d, notes=(*d.notes, note))
    if (d.key == "quantization" and d.status == "extra-in-script" and isinstance(d.script, str)
            and q.precision and q.precision in d.script.lower()):
        # ``--quantization fp8`` on an FP8 checkpoint: what the engine reads from its config anyway
        return replace(d, notes=(*d.notes, f"{SWEPT} and the checkpoint: the entry's precision is {q.precision}"))
    return d


def hardware_of(label: str | None) -> str | None:
    """The GPU a runner label names (``b200-dgxc`` -> ``b200``, ``cluster:mi355x-amds`` -> ``mi355x``);
    None when it names none."""
    name = (label or "").split(":", 1)[-1]  # ``cluster:mi355x-amds``: a cluster of that GPU
    m = _GPU.match(name)
    return m.group(0).lower() if m else None


def query_of(entry: Entry, point: Point) -> Query | None:
    """What ``point`` of ``entry`` asks of a recipe; None when the entry lacks a model or GPU."""
    model, hw = entry.fields.get("model"), hardware_of(entry.runner)
    if not isinstance(model, str) or not model or hw is None:
        return None
    return Query(engine=engine_of(entry), model=model, hardware=hw,
                 precision=str(entry.fields.get("precision") or "").lower(),
                 tp=_int(point.get("tp"), 1), ep=_int(point.get("ep"), 1),
                 dp_attn=point.get("dp-attn") is True or str(point.get("dp-attn")).lower() == "true",
                 spec=wanted(point))


def _int(v: object, default: int) -> int:
    try:
        return int(str(v))
    except ValueError:
        return default


def render(sources: Sequence[Source], q: Query, memo: dict[Query, Rendered | Miss]) -> Rendered | Miss:
    """The recipe for ``q`` from the first source of its engine that has one."""
    if q in memo:
        return memo[q]
    got: Rendered | Miss = Miss(f"no {'vLLM recipes' if q.engine == 'vllm' else 'SGLang cookbook'} source")
    for source in sources:
        if source.kind != q.engine:
            continue
        try:
            got = (vllm_recipe.render if q.engine == "vllm" else sglang_cookbook.render)(source, q)
        except SourceUnavailable as exc:  # a GitHub source that stopped answering (a rate limit)
            got = Miss(f"{source.name} could not be read: {exc.reason}")
        if isinstance(got, Rendered):
            break
    memo[q] = got
    return got


def comparisons(facts: Facts, sources: Sequence[Source], entries: Sequence[Entry] | None = None,
                all_points: bool = False) -> list[Comparison]:
    """The comparisons of ``entries`` (default: every entry), in entry order."""
    memo: dict[Query, Rendered | Miss] = facts.memo.setdefault("recipes.rendered", {})
    wanted_entries = list(facts.entries if entries is None else entries)
    first_run: dict[int, Run] = {}
    for run in facts.runs:
        if run.result is not None and not run.bound_hit:
            first_run.setdefault(id(run.entry), run)
    out: list[Comparison] = []
    for entry in wanted_entries:
        engine = engine_of(entry)
        if entry.multinode or engine not in ENGINES:
            continue
        entry_run = first_run.get(id(entry))
        for point, group in _groups(entry, all_points):
            q = query_of(entry, point)
            if q is None:
                out.append(Comparison(entry, point, group, engine, None,
                                      miss=Miss("the entry names no model or its runner label no GPU")))
                continue
            rendered = render(sources, q, memo)
            if isinstance(rendered, Miss):
                out.append(Comparison(entry, point, group, engine, q, miss=rendered))
                continue
            site = _site(facts, entry_run, point)
            out.append(_compare(entry, point, group, engine, q, rendered, site))
    return out


def _groups(entry: Entry, all_points: bool) -> list[tuple[Point, tuple[Point, ...]]]:
    if all_points:
        return [(p, (p,)) for p in entry.points]
    groups: dict[tuple[object, ...], list[Point]] = {}
    for p in entry.points:
        key = (p.get("tp"), p.get("ep"), str(p.get("dp-attn")), wanted(p))
        groups.setdefault(key, []).append(p)
    return [(ps[0], tuple(ps)) for ps in groups.values()]


def _site(facts: Facts, run: Run | None, point: Point) -> Site | None:
    if run is None:
        return None
    memo: dict[tuple[int, int], Site | None] = facts.memo.setdefault("recipes.sites", {})
    key = (id(run), id(point))
    if key not in memo:
        memo[key] = site_at(facts, run, point)
    return memo[key]


def _compare(entry: Entry, point: Point, group: tuple[Point, ...], engine: str, q: Query, rendered: Rendered,
             site: Site | None) -> Comparison:
    base = Comparison(entry, point, group, engine, q, recipe=rendered,
                      script=site.script if site else None, launcher=site.launcher if site else None)
    if site is None or site.server is None:
        why = "; ".join(site.reasons) if site is not None and site.reasons else "no launcher run reaches a script"
        return replace(base, notes=(f"the script's server could not be read: {why}",))
    if site.server.engine != engine:
        return replace(base, notes=(
            f"the script starts a {site.server.engine} server, the entry says {engine}",))
    image = str(entry.fields.get("image") or "")
    version = _version(image)
    found = [_swept(d, q) for d in diff(site.server, recipe_command(rendered), version)]
    return replace(base, differences=tuple(found))


def _version(image: str) -> str | None:
    """The engine version an image tag names (``lmsysorg/sglang:v0.5.14-cu130`` -> ``0.5.14``)."""
    m = re.search(r":v?(\d+\.\d+(?:\.\d+)?)", image)
    return m.group(1) if m else None
