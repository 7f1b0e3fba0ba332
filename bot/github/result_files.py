"""Benchmark result files from a run's artifacts, as a small table (pure: bytes in, rows out).

The format is InferenceX's: each benchmark job uploads an artifact ``bmk_<result name>`` holding
``agg_<result name>.json``, one object written by ``utils/process_result.py`` (``hw``, ``conc``,
``infmax_model_prefix``, ``framework``, ``precision``, ``spec_decoding``, ``isl``, ``osl``, ``tp``,
``ep`` or ``prefill_tp``/``decode_tp``, ``tput_per_gpu`` (tokens/s/GPU), ``median_ttft`` (seconds),
``median_tpot`` (seconds), ``median_intvty`` (tokens/s/user)); the collect job uploads
``results_bmk`` holding ``agg_bmk.json``, the list of them. The aggregate is read when present,
else the per-entry artifacts. Archives are read with :mod:`zipfile` and :mod:`json` only, under
budgets; anything wrong is a one-line note, never an exception.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from typing import Any

from bot.report import markdown as md

AGGREGATE_PREFIX = "results_"  # InferenceX collect-results.yml: results_<prefix>
ENTRY_PREFIX = "bmk_"  # benchmark-tmpl.yml: bmk_<RESULT_FILENAME>
SKIP_PREFIXES = ("bmk_agentic_",)  # another format (agentic aggregation)
MAX_ARTIFACTS = 20  # artifacts downloaded per run
MAX_ZIP_BYTES = 8 * 1024 * 1024  # one artifact's zip, as downloaded
MAX_ENTRIES = 200  # members of one zip
MAX_JSON_BYTES = 2 * 1024 * 1024  # one member, uncompressed
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # all members of one zip, uncompressed
MAX_DEPTH = 8  # nesting of the JSON
MAX_ROWS = 30  # rows in the table ("and N more")


@dataclass(frozen=True)
class Row:
    config: str
    isl: str
    osl: str
    parallel: str
    conc: str
    tput_per_gpu: float
    ttft_ms: float | None
    tpot_ms: float | None
    intvty: float | None


@dataclass
class Parsed:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def wanted(names: list[str]) -> list[str]:
    """The artifacts to read: the aggregate ones if any, else the per-entry ones (in order)."""
    agg = [n for n in names if n.startswith(AGGREGATE_PREFIX)]
    if agg:
        return agg
    return [n for n in names if n.startswith(ENTRY_PREFIX) and not n.startswith(SKIP_PREFIXES)]


def _depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (iterative: no recursion limit to hit)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return True
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return False


def _finite(f: float) -> float | None:
    return f if math.isfinite(f) else None


def _num(value: Any) -> float | None:
    """A finite number from a JSON value (a number or a numeric string), else None: ``NaN``,
    ``Infinity``, ``"nan"``, ``"-inf"``, ``1e400`` and integers too large for a float are not numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return _finite(float(value))
    except (ValueError, OverflowError):
        return None


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else _finite(seconds * 1000)


def _text(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value)[:80]


def row(obj: Any) -> Row | None:
    """One result object as a row; None when it is not in the format (no numeric tput_per_gpu)."""
    if not isinstance(obj, dict):
        return None
    tput = _num(obj.get("tput_per_gpu"))
    if tput is None:
        return None
    parts = [_text(obj.get(k)) for k in ("infmax_model_prefix", "hw", "framework", "precision")]
    spec = _text(obj.get("spec_decoding"))
    if spec and spec != "none":
        parts.append(spec)
    if obj.get("is_multinode"):
        par = f"P tp{_text(obj.get('prefill_tp'))} / D tp{_text(obj.get('decode_tp'))}"
    else:
        ep = _text(obj.get("ep"))
        par = f"tp{_text(obj.get('tp'))}" + (f" ep{ep}" if ep not in ("", "1") else "")
    ttft, tpot = _num(obj.get("median_ttft")), _num(obj.get("median_tpot"))
    return Row(" ".join(p for p in parts if p), _text(obj.get("isl")), _text(obj.get("osl")), par,
               _text(obj.get("conc")), tput, _ms(ttft), _ms(tpot), _num(obj.get("median_intvty")))


def parse_zip(name: str, data: bytes, out: Parsed) -> None:
    """The result rows of one artifact's zip into ``out`` (notes for what could not be read)."""
    if len(data) > MAX_ZIP_BYTES:
        out.notes.append(f"{name}: the archive is over {MAX_ZIP_BYTES // (1024 * 1024)} MB; not read")
        return
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        out.notes.append(f"{name}: not a zip archive")
        return
    if len(infos) > MAX_ENTRIES:
        out.notes.append(f"{name}: {len(infos)} files in the archive (over {MAX_ENTRIES}); not read")
        return
    total = 0
    for info in infos:
        member = info.filename
        if info.is_dir() or not member.endswith(".json"):
            continue
        if member.startswith(("/", "\\")) or ".." in member.replace("\\", "/").split("/") or ":" in member:
            out.notes.append(f"{name}: skipped a file with an unsafe name")
            continue
        if info.file_size > MAX_JSON_BYTES or total + info.file_size > MAX_TOTAL_BYTES:
            out.notes.append(f"{name}: {member[:100]} is too large ({info.file_size} bytes); not read")
            continue
        try:
            with zf.open(info) as fh:
                raw = fh.read(MAX_JSON_BYTES + 1)  # the header's size may lie: read at most the budget
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError):
            out.notes.append(f"{name}: {member[:100]} cannot be extracted")
            continue
        total += len(raw)
        if len(raw) > MAX_JSON_BYTES:
            out.notes.append(f"{name}: {member[:100]} is too large when extracted; not read")
            continue
        _parse_json(f"{name}: {member[:100]}", raw, out)


def _parse_json(where: str, raw: bytes, out: Parsed) -> None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except RecursionError:
        out.notes.append(f"{where}: nested too deeply; not read")
        return
    except (UnicodeDecodeError, ValueError) as exc:
        line = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        out.notes.append(f"{where}{line}: not valid JSON")
        return
    if _depth(value, MAX_DEPTH):
        out.notes.append(f"{where}: nested deeper than {MAX_DEPTH} levels; not read")
        return
    items = value if isinstance(value, list) else [value]
    bad = 0
    for item in items:
        r = row(item)
        if r is None:
            bad += 1
        else:
            out.rows.append(r)
    if bad:
        out.notes.append(f"{where}: {bad} result(s) without a numeric tput_per_gpu; left out")


def _fmt(v: float | None, digits: int) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def table(parsed: Parsed) -> str:
    """The markdown table, at most MAX_ROWS rows (every text cell through :mod:`bot.report.markdown`)."""
    if not parsed.rows:
        return ""
    lines = ["| config | ISL/OSL | parallel | conc | tput/GPU (tok/s) | TTFT p50 (ms) | TPOT p50 (ms) "
             "| interactivity p50 (tok/s/user) |", "|---|---|---|---|---:|---:|---:|---:|"]
    rows = sorted(parsed.rows, key=lambda r: (r.config, r.isl, r.osl, r.parallel, _num(r.conc) or 0.0))
    for r in rows[:MAX_ROWS]:
        cells = [md.escape(r.config), md.escape(f"{r.isl}/{r.osl}"), md.escape(r.parallel), md.escape(r.conc),
                 _fmt(r.tput_per_gpu, 1), _fmt(r.ttft_ms, 1), _fmt(r.tpot_ms, 2), _fmt(r.intvty, 1)]
        lines.append("| " + " | ".join(md.cell(c) for c in cells) + " |")
    if len(rows) > MAX_ROWS:
        lines.append(f"\n…and {len(rows) - MAX_ROWS} more results (in the run's artifacts).")
    return "\n".join(lines)
