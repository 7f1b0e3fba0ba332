"""How many benchmark jobs a ``/bench`` selection starts, and about how many GPUs they hold.

The count is the size of the matrix InferenceX's generator (``utils/matrix_logic/
generate_sweep_configs.py``, subcommand ``test-config``, which the default dispatch inputs use)
expands the entries to, read from the entries' search space (pure; nothing is run):

- every ``fixed-seq-len`` block (isl/osl) and every ``agentic-coding`` block of ``scenarios``
  (the older ``seq-len-configs`` list counts as fixed-seq-len), every search-space row in it;
- the row's concurrencies: ``conc-list`` as given, else ``conc-start`` doubling up to
  ``conc-end`` (the last step capped at the end: 4..48 is 4, 8, 16, 32, 48);
- a single-node row is one job per concurrency; a multinode fixed-seq-len row is ONE job (its
  whole concurrency list runs in one allocation); a multinode agentic row is one job per
  concurrency (one per allocation, as the generator's batch size of 1);
- the e2e workflow adds an eval job for each distinct multinode 8k1k topology (prefill, decode,
  spec-decoding) with a concurrency of at least 16 (``mark_eval_entries``; its other eval marks
  do not add jobs).

A row whose concurrency cannot be read (a missing or non-integer bound) counts as one job and is
named in ``unknown``: the reply says the count is a lower bound then.

GPUs per job: single-node ``tp * pp * pcp-size`` (the generator's ``effective_gpu_count``);
multinode the sum over prefill and decode of ``num-worker * tp * pp * pcp-size``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.repo.load.configs import AGENTIC, FIXED, Entry

MIN_EVAL_CONC = 16  # the generator's MIN_EVAL_CONC
EVAL_SEQ = (8192, 1024)  # multinode evals run on 8k1k only
MAX_CONCS = 4096  # a conc range longer than this (a typo) is counted, not expanded further


@dataclass
class Count:
    jobs: int = 0
    gpus: int = 0  # the sum over jobs of the GPUs one job holds
    per_entry: dict[str, int] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # entries with a row whose size is unknown

    @property
    def exact(self) -> bool:
        return not self.unknown

    def text(self) -> str:
        """``10 benchmark jobs (about 80 GPU-jobs)``; "at least" when a row could not be read."""
        least = "" if self.exact else "at least "
        jobs = f"{least}{self.jobs} benchmark job{'' if self.jobs == 1 else 's'}"
        return f"{jobs} (about {least}{self.gpus} GPU-jobs)" if self.gpus else jobs


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def concurrencies(row: Mapping[str, Any], *, agentic: bool = False) -> list[int] | None:
    """The row's concurrencies as the generator expands them; None when they cannot be read."""
    given = row.get("conc-list")
    if (given if agentic else "conc-list" in row) and given is not None:
        if not isinstance(given, list) or any(_int(c) is None for c in given):
            return None
        return list(given)
    start, end = _int(row.get("conc-start")), _int(row.get("conc-end"))
    if start is None or end is None or start <= 0:
        return None
    out: list[int] = []
    conc = start
    while conc <= end and len(out) < MAX_CONCS:
        out.append(conc)
        if conc == end:
            break
        conc = min(conc * 2, end)
    return out


def _gpus_of(worker: Any) -> int:
    if not isinstance(worker, Mapping):
        return 0
    tp, pp, pcp = (_int(worker.get(k, d)) for k, d in (("tp", 0), ("pp", 1), ("pcp-size", 1)))
    return max(tp or 0, 0) * max(pp or 1, 1) * max(pcp or 1, 1)


def gpus_per_job(row: Mapping[str, Any], multinode: bool) -> int:
    if not multinode:
        return _gpus_of(row)
    total = 0
    for role in ("prefill", "decode"):
        worker = row.get(role)
        workers = _int(worker.get("num-worker", 1)) if isinstance(worker, Mapping) else 0
        total += max(workers or 0, 0) * _gpus_of(worker)
    return total


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def count(entries: Iterable[Entry]) -> Count:
    out = Count()
    for entry in entries:
        jobs = 0
        evals: set[str] = set()
        for point in entry.points:
            row = point.fields
            agentic = point.scenario == AGENTIC
            if point.scenario not in (FIXED, AGENTIC):
                continue
            concs = concurrencies(row, agentic=agentic)
            if concs is None:
                n = 1
                if entry.name not in out.unknown:
                    out.unknown.append(entry.name)
            elif entry.multinode and not agentic:
                n = 1  # the whole list in one allocation (an empty list too: the generator keeps the row)
                seq = (_int(point.seq.get("isl")), _int(point.seq.get("osl")))
                if seq == EVAL_SEQ and any(c >= MIN_EVAL_CONC for c in concs):
                    evals.add(json.dumps([_plain(row.get("prefill")), _plain(row.get("decode")),
                                          str(row.get("spec-decoding", "none")), seq], sort_keys=True))
            else:
                n = len(concs)
            jobs += n
            out.gpus += n * gpus_per_job(row, entry.multinode)
        if evals:
            jobs += len(evals)
            out.gpus += sum(_eval_gpus(key) for key in evals)
        out.per_entry[entry.name] = jobs
        out.jobs += jobs
    return out


def _eval_gpus(key: str) -> int:
    prefill, decode, _, _ = json.loads(key)
    return gpus_per_job({"prefill": prefill, "decode": decode}, True)
