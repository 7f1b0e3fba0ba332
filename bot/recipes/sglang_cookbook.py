"""Render the SGLang cookbook's declarative configs for a query (``render(source, q)``).

The cookbook (sgl-project/sglang ``docs_new/``) keeps one pure data literal per model family
at ``docs_new/src/snippets/configs/<org>/<model>.jsx``: ``export const config = {...}`` with
``modelNames`` (``"hw|variant|quant"`` or ``"variant|quant"`` -> HF id) and ``cells[]``, each
``{match: {hw, variant, quant, strategy, nodes}, verified?, env: ["K=V"], flags: ["--tp 4"]}``
with ``{{MODEL_NAME}}`` / ``{{HOST_IP}}`` / ``{{PORT}}`` placeholders. The site shows one cell's
flags verbatim; so does this renderer.

How a query picks a cell:

- config: the first file (sorted path order) whose ``modelNames`` has the query's model as
  a value, compared case-insensitively. Files whose text does not contain the model id are not
  parsed at all; companion files (``*-benchmarks.jsx``, ``*-srt-slurm.jsx``) export other
  names and are skipped.
- variant and quant: from the ``modelNames`` key that names the model. When several keys
  name it (DeepSeek-V4-Flash is both ``flash|fp4`` and ``flash|fp8``), the key whose quant
  fits the query's precision wins, then the key whose hardware part is the query's.
- hw: the runner type lowercased, up to its first ``-`` (``b200-dgxc`` -> ``b200``,
  ``gb300-nv`` -> ``gb300``); the cookbook spells the InferenceX GPUs the same way (h100,
  h200, b200, b300, gb200, gb300, mi300x, mi325x, mi355x); ``rtx6000pro`` -> ``rtx6000``.
  When the config has no cell at all for that hardware, b300 falls back to b200 and gb300 to
  gb200, and ``Provenance.fallback`` says so. No other fallback.
- nodes: ``single`` for one node, ``multi-N`` for N.
- strategy: a query with speculative decoding (``spec != "none"``) takes a cell whose flags
  carry ``--speculative-*``, preferring ``low-latency`` (the cookbook's MTP-on tier), then
  balanced, high-throughput, max-throughput; a cell whose algorithm fits the query (mtp ->
  EAGLE/NEXTN without a draft model, eagle3 -> EAGLE3, ...) is preferred over one that does not.
  A query without it takes the cell closest to its parallelism first (``--tp`` equal to
  ``q.tp``, ``--enable-dp-attention`` present iff ``q.dp_attn``): the cookbook offers several
  blessed operating points and the script is compared with the nearest one (Kimi-K2.6: TP8
  low-latency vs TP8+DP8 DP-attention high-throughput; DeepSeek-V4 on B200: the TP
  low-latency cell, not the DP-attention high-throughput one). Among equally near cells one
  without ``--speculative-*`` flags wins, then ``balanced``, high-throughput,
  max-throughput, low-latency. A cell with speculative flags serves a plain query with
  those flags left out, and a note says so (as a default-on spec feature is left out of a
  vLLM recipe; GLM-5.1 bakes EAGLE into every NVIDIA tier). The notes list the other
  strategies that fit. When no cell fits, the answer is a ``Miss``.

The rendering: each flag string is split with ``shlex`` (POSIX), placeholders are substituted
(``{{MODEL_NAME}}`` -> the ``modelNames`` entry for the cell, as the site resolves it;
``{{HOST_IP}}`` -> 0.0.0.0; ``{{PORT}}`` -> 8888; any other placeholder -> its
``placeholders[KEY].default``), and the model flag pair is moved to the front, so ``argv``
is what follows ``python3 -m sglang.launch_server`` / ``sglang serve`` and starts with
``--model-path <id>`` (added when the cell has none). ``--host`` / ``--port`` are kept (the
comparison classifies them as harness). A ``multi-N`` cell gets ``--nnodes N``; the site's
``--node-rank`` / ``--dist-init-addr`` are left out. ``env`` comes from the cell's ``"K=V"``
strings.
"""

from __future__ import annotations

import re
import shlex
from collections import OrderedDict
from typing import Any

from bot.recipes.jsx import JsxError, parse_export
from bot.recipes.model import Miss, Provenance, Query, Rendered, Source

CONFIG_DIR = "docs_new/src/snippets/configs"
HOST_IP = "0.0.0.0"
PORT = "8888"
HW_FALLBACK = {"b300": "b200", "gb300": "gb200"}
HW_ALIASES = {"rtx6000pro": "rtx6000", "rtxpro6000": "rtx6000"}
STP_ORDER = ("balanced", "high-throughput", "max-throughput", "low-latency")
SPEC_ORDER = ("low-latency", "balanced", "high-throughput", "max-throughput")
# query precision -> the cookbook quant ids that mean the same checkpoint format (first: exact)
PRECISION_QUANTS = {
    "fp4": ("fp4", "nvfp4", "mxfp4"),
    "nvfp4": ("nvfp4", "fp4"),
    "mxfp4": ("mxfp4", "fp4"),
    "fp8": ("fp8",),
    "bf16": ("bf16",),
    "int4": ("int4",),
}
# query spec-decoding -> the --speculative-algorithm values that implement it
SPEC_ALGORITHMS = {"mtp": ("EAGLE", "NEXTN"), "eagle": ("EAGLE",), "eagle3": ("EAGLE3",), "ngram": ("NGRAM",),
                   "dflash": ("DFLASH",), "standalone": ("STANDALONE",)}
MODEL_FLAGS = ("--model-path", "--model")
CACHE_MAX = 256  # parsed config files kept

_PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9_]+)\}\}")
_PARSED: OrderedDict[tuple[str, str, str], tuple[Any, JsxError | None]] = OrderedDict()


def _no_spec(q: Query) -> bool:
    return q.spec.strip().lower() in ("none", "")


def render(source: Source, q: Query) -> Rendered | Miss:
    """The cookbook cell for ``q`` rendered as serve arguments, or a ``Miss`` saying why not."""
    if q.engine != "sglang":
        return Miss(f"the SGLang cookbook has no {q.engine} recipes")
    found, errors = _configs_naming(source, q.model)
    if not found:
        reason = f"no SGLang cookbook config under {CONFIG_DIR} names {q.model}"
        if errors:
            reason += "; unreadable: " + "; ".join(errors)
        return Miss(reason, errors[0].split(":", 1)[0] if errors else None)
    first_miss: Miss | None = None
    for path, config, keys in found:
        out = _render_config(source, q, path, config, keys)
        if isinstance(out, Rendered):
            return out
        first_miss = first_miss or out
    assert first_miss is not None
    return first_miss


def normalize_hw(runner: str) -> str:
    """The cookbook hardware id for an InferenceX runner type (``b200-dgxc`` -> ``b200``)."""
    hw = runner.strip().lower().split("-", 1)[0]
    return HW_ALIASES.get(hw, hw)


def _parsed(source: Source, path: str, text: str) -> tuple[Any, JsxError | None]:
    """``parse_export(text)`` memoized per (source, revision, path), least recently used out."""
    key = (source.name, source.revision, path)
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
        return hit
    try:
        result: tuple[Any, JsxError | None] = (parse_export(text, "config"), None)
    except JsxError as e:
        result = (None, e)
    _PARSED[key] = result
    while len(_PARSED) > CACHE_MAX:
        _PARSED.popitem(last=False)
    return result


def _configs_naming(source: Source, model: str) -> tuple[list[tuple[str, dict[str, Any], list[str]]], list[str]]:
    """The configs whose ``modelNames`` name ``model`` (path, config, matching keys), and
    ``path:line:col: message`` for each file that mentions the model but cannot be read."""
    want = model.strip().lower()
    found: list[tuple[str, dict[str, Any], list[str]]] = []
    errors: list[str] = []
    for path in source.list(CONFIG_DIR):
        if not path.endswith(".jsx"):
            continue
        text = source.get(path)
        if text is None or want not in text.lower():
            continue
        config, err = _parsed(source, path, text)
        if err is not None:
            errors.append(f"{path}:{err.line}:{err.col}: {err.message}")
            continue
        names = config.get("modelNames") if isinstance(config, dict) else None
        if not isinstance(names, dict):
            continue
        keys = [k for k, v in names.items() if isinstance(v, str) and v.strip().lower() == want]
        if keys:
            found.append((path, config, keys))
    return found, errors


def _split_key(key: str) -> tuple[str | None, str, str] | None:
    parts = key.split("|")
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None


def _rank_keys(keys: list[str], q: Query, hw: str) -> list[tuple[str | None, str, str, bool]]:
    """(key hw, variant, quant, precision fits) for each usable key, best first: keys whose
    quant fits the precision when any does, then by how well their hardware part fits."""
    compatible = PRECISION_QUANTS.get(q.precision.lower(), (q.precision.lower(),))
    ranked: list[tuple[int, int, int, tuple[str | None, str, str, bool]]] = []
    for i, key in enumerate(keys):
        split = _split_key(key)
        if split is None:
            continue
        khw, variant, quant = split
        qscore = compatible.index(quant.lower()) if quant.lower() in compatible else len(compatible)
        hscore = 0 if khw == hw else 1 if khw is not None and khw == HW_FALLBACK.get(hw) else 2 if khw is None else 3
        ranked.append((qscore, hscore, i, (khw, variant, quant, quant.lower() in compatible)))
    ranked.sort()
    out = [r[3] for r in ranked]
    fitting = [r for r in out if r[3]]
    return fitting or out


def _tokens(cell: dict[str, Any]) -> list[str] | str:
    """The cell's flags split into words, or a reason why they cannot be."""
    flags = cell.get("flags", [])
    if not isinstance(flags, list):
        return "`flags` is not a list"
    words: list[str] = []
    for i, flag in enumerate(flags):
        if not isinstance(flag, str):
            return f"flags[{i}] is not a string"
        try:
            words.extend(shlex.split(flag, posix=True))
        except ValueError as e:
            return f"flags[{i}] {flag!r} does not split: {e}"
    return words


def _spec_algorithm(words: list[str]) -> str | None:
    """The cell's speculative algorithm ("" when spec flags give none), None without spec flags."""
    if not any(w.startswith("--speculative") for w in words):
        return None
    for i, w in enumerate(words):
        if w.startswith(("--speculative-algorithm=", "--speculative-algo=")):
            return w.split("=", 1)[1].upper()
        if w in ("--speculative-algorithm", "--speculative-algo") and i + 1 < len(words):
            return words[i + 1].upper()
    return ""


def _algorithm_fits(spec: str, algorithm: str, words: list[str]) -> bool:
    wanted = SPEC_ALGORITHMS.get(spec.lower())
    if wanted is None:
        return True  # a spec kind this table does not know: any speculative cell will do
    if spec.lower() == "mtp" and any(w.startswith("--speculative-draft-model") for w in words):
        return False  # MTP uses the model's own layers, not a draft model
    return algorithm in wanted


def _parallel_distance(words: list[str], q: Query) -> int:
    """How many of TP and DP-attention differ between the cell and the query (a tie-break:
    the cookbook's operating point closest to the script's)."""
    tp: str | None = None
    for i, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if flag in ("--tp", "--tp-size", "--tensor-parallel-size"):
            tp = value if eq else (words[i + 1] if i + 1 < len(words) else None)
    distance = 0 if tp is None or tp == str(q.tp) else 1
    return distance + (("--enable-dp-attention" in words) != q.dp_attn)


def _without_spec(words: list[str]) -> list[str]:
    """``words`` without the ``--speculative-*`` flags and their values."""
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            if not w.startswith("-"):
                continue
        if w.startswith("--speculative"):
            skip = "=" not in w
            continue
        out.append(w)
    return out


def _strategy_rank(strategy: str, order: tuple[str, ...], declared: list[str]) -> tuple[int, int]:
    if strategy in order:
        return (order.index(strategy), 0)
    return (len(order), declared.index(strategy) if strategy in declared else len(declared))


def _render_config(source: Source, q: Query, path: str, config: dict[str, Any], keys: list[str]) -> Rendered | Miss:
    qhw = normalize_hw(q.hardware)
    nodes = "single" if q.nodes <= 1 else f"multi-{q.nodes}"
    raw_cells = config.get("cells")
    cells = [c for c in raw_cells if isinstance(c, dict) and isinstance(c.get("match"), dict)] if isinstance(
        raw_cells, list) else []
    names = config.get("modelNames", {})
    raw_strategies = config.get("strategies")
    declared = [str(s.get("id")) for s in raw_strategies if isinstance(s, dict)] if isinstance(
        raw_strategies, list) else []

    chosen: tuple[str, str, str, bool, list[dict[str, Any]]] | None = None
    for _khw, variant, quant, fits in _rank_keys(keys, q, qhw):
        for hw in (qhw, HW_FALLBACK.get(qhw)):
            if hw is None:
                continue
            pool = [c for c in cells if _matches(c["match"], hw, variant, quant, nodes)]
            if pool:
                chosen = (hw, variant, quant, fits, pool)
                break
        if chosen:
            break
    if chosen is None:
        tried = ", ".join(sorted({f"{v}|{qu}" for _, v, qu, _ in _rank_keys(keys, q, qhw)}))
        hws = qhw + (f" (or {HW_FALLBACK[qhw]})" if qhw in HW_FALLBACK else "")
        return Miss(f"{path} has no {hws} cell on {nodes} node(s) for {q.model} ({tried})", path)
    hw, variant, quant, fits, pool = chosen

    candidates: list[tuple[tuple[int, int, int, int], dict[str, Any], list[str], str | None]] = []
    for cell in pool:
        words = _tokens(cell)
        if isinstance(words, str):
            return Miss(f"{path}: cell {_describe(cell)}: {words}", path)
        algorithm = _spec_algorithm(words)
        strategy = str(cell["match"].get("strategy", ""))
        distance = _parallel_distance(words, q)
        if _no_spec(q):
            # nearest parallelism first; a cell with speculative flags serves too, without them
            # (as a default-on spec feature is left out of a vLLM recipe for a plain entry)
            stripped = algorithm is not None
            rank = (distance, int(stripped)) + _strategy_rank(strategy, STP_ORDER, declared)
            candidates.append((rank, cell, _without_spec(words) if stripped else words, algorithm))
        elif algorithm is not None:
            miss = 0 if _algorithm_fits(q.spec, algorithm, words) else 1
            rank = (miss, distance) + _strategy_rank(strategy, SPEC_ORDER, declared)
            candidates.append((rank, cell, words, algorithm))
    where = f"{hw}/{variant}/{quant}/{nodes}"
    strategies = ", ".join(sorted({str(c["match"].get("strategy")) for c in pool}))
    if not candidates:  # a plain query takes any cell (``_without_spec``): only a speculative one lands here
        return Miss(f"{path}: no {where} cell ({strategies}) runs speculative decoding ({q.spec})", path)
    candidates.sort(key=lambda c: c[0])
    _, cell, words, algorithm = candidates[0]
    strategy = str(cell["match"].get("strategy", ""))

    notes: list[str] = [f"cell {'verified' if cell.get('verified') is True else 'unverified'} in the cookbook"]
    if _no_spec(q) and algorithm is not None:
        notes.append(f"the {strategy} cell's speculative flags are left out: the entry runs without speculative "
                     "decoding")
    others = [str(c[1]["match"].get("strategy")) for c in candidates[1:]]
    if others:
        notes.append("other strategies that fit: " + ", ".join(others))
    if not fits:
        notes.append(f"the recipe's quantization {quant!r} does not match the precision {q.precision!r}")
    if algorithm is not None and not _no_spec(q) and candidates[0][0][0]:
        notes.append(f"the recipe's speculative algorithm {algorithm or '(none given)'} is not the query's {q.spec}")
    model_name = _model_name(names, hw, variant, quant, q.model)
    if model_name.lower() != q.model.strip().lower():
        notes.append(f"the cookbook serves {model_name} for {hw}|{variant}|{quant}, not {q.model}")
    images = config.get("dockerImages")
    if isinstance(images, dict) and isinstance(images.get(hw), str):
        notes.append(f"docker image {images[hw]}")

    values = _placeholder_values(config, model_name)
    unresolved: set[str] = set()
    argv = _with_model_first([_substitute(w, values, unresolved) for w in words], model_name, notes)
    if nodes != "single":
        argv += ["--nnodes", nodes.split("-", 1)[1]]
        notes.append("multi-node: --nnodes added; the site's --node-rank / --dist-init-addr are left out")
    env: list[tuple[str, str]] = []
    raw_env = cell.get("env", [])
    for item in raw_env if isinstance(raw_env, list) else [raw_env]:
        if isinstance(item, str) and "=" in item:
            k, v = item.split("=", 1)
            env.append((k.strip(), _substitute(v, values, unresolved)))
        else:
            notes.append(f"env entry {item!r} is not K=V; skipped")
    if unresolved:
        notes.append("placeholders without a value: " + ", ".join(sorted(unresolved)))

    fallback = f"{qhw} -> {hw}" if hw != qhw else None
    selection = (("hw", hw), ("variant", variant), ("quant", quant), ("strategy", strategy), ("nodes", nodes))
    provenance = Provenance(source=source.name, revision=source.revision, path=path, selection=selection,
                            fallback=fallback)
    return Rendered(engine="sglang", argv=tuple(argv), env=tuple(env), provenance=provenance, notes=tuple(notes))


def _matches(match: dict[str, Any], hw: str, variant: str, quant: str, nodes: str) -> bool:
    got = (match.get("hw"), match.get("variant"), match.get("quant"), match.get("nodes"))
    return got == (hw, variant, quant, nodes)


def _describe(cell: dict[str, Any]) -> str:
    m = cell["match"]
    return "/".join(str(m.get(k)) for k in ("hw", "variant", "quant", "strategy", "nodes"))


def _model_name(names: Any, hw: str, variant: str, quant: str, fallback: str) -> str:
    """``{{MODEL_NAME}}`` as the site resolves it: ``hw|variant|quant``, then ``variant|quant``."""
    if isinstance(names, dict):
        for key in (f"{hw}|{variant}|{quant}", f"{variant}|{quant}"):
            if isinstance(names.get(key), str):
                return str(names[key])
    return fallback


def _placeholder_values(config: dict[str, Any], model_name: str) -> dict[str, str]:
    values: dict[str, str] = {}
    declared = config.get("placeholders")
    if isinstance(declared, dict):
        for key, spec in declared.items():
            if isinstance(spec, dict) and isinstance(spec.get("default"), (str, int, float)):
                values[key] = str(spec["default"])
    values.update({"MODEL_NAME": model_name, "HOST_IP": HOST_IP, "PORT": PORT})
    return values


def _substitute(word: str, values: dict[str, str], unresolved: set[str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) in values:
            return values[m.group(1)]
        unresolved.add(m.group(1))
        return m.group(0)

    return _PLACEHOLDER.sub(one, word)


def _with_model_first(words: list[str], model_name: str, notes: list[str]) -> list[str]:
    """``words`` with the model flag pair moved to the front (added when absent)."""
    for i, w in enumerate(words):
        if w in MODEL_FLAGS and i + 1 < len(words):
            return [w, words[i + 1]] + words[:i] + words[i + 2:]
        flag, eq, value = w.partition("=")
        if eq and flag in MODEL_FLAGS:
            return [flag, value] + words[:i] + words[i + 1:]
    notes.append("the cell has no --model-path; added")
    return ["--model-path", model_name] + words
