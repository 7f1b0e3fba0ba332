"""What runners.yaml means for an entry's runner label, beyond the label's nodes.

In InferenceX the sweep generator puts an entry's ``runner:`` label straight into the job's
``runs-on`` (``utils/matrix_logic/generate_sweep_configs.py``: ``[runner]`` unless a node filter
is given), so a label runners.yaml does not list still runs, on whatever self-hosted runner
carries it. runners.yaml serves two other purposes, and those are what a missing label breaks:

- ``labels:``, the label's nodes: what ``--runner-node-filter`` sweeps pick from (an entry whose
  label lists no node is skipped there), and what benchbot reads to tell which launcher runs an
  entry (``runners/launch_<node prefix>.sh``). Without it the launcher is unknown; the launchers
  named for the label's likely nodes (:func:`launcher_candidates`) are offered.
- ``hardware:``, per label, ``available-cpu-dram-mib`` and ``gpus-per-node``: the generator sizes
  the DRAM KV-offload budget of agentic points with ``kv-offloading: dram`` from them, and raises
  (the whole sweep fails) when the entry's label has none (:func:`missing_hardware`).

Facts only; :mod:`bot.rules.unknown_runner_label` judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bot.repo.load.configs import AGENTIC, Entry, Point

if TYPE_CHECKING:
    from bot.repo.facts import Facts

HARDWARE_FIELDS = ("available-cpu-dram-mib", "gpus-per-node")


def bare(label: str) -> str:
    """The label without its namespace (``cluster:h200-dgxc`` -> ``h200-dgxc``)."""
    return label.split(":", 1)[-1]


def launcher_candidates(facts: Facts, label: str) -> list[str]:
    """The launchers named for nodes of ``label``: their node prefix is the bare label or
    extends it (``h200-dgxc`` -> ``runners/launch_h200-dgxc-slurm.sh``)."""
    b = bare(label)
    out = []
    for path in facts.tree.glob(facts.profile.launchers):
        prefix = facts.profile.prefix_of_launcher(path)
        if prefix is not None and (prefix == b or prefix.startswith(b + "-")):
            out.append(path)
    return sorted(out)


def needs_hardware(entry: Entry) -> list[Point]:
    """The entry's points the generator sizes from the label's hardware metadata: agentic
    points with DRAM KV offloading."""
    return [p for p in entry.points if p.scenario == AGENTIC and p.get("kv-offloading") == "dram"]


def missing_hardware(facts: Facts, label: str) -> list[str]:
    """The hardware fields the generator needs that runners.yaml lacks for ``label``."""
    data = facts.runners.data
    table = data.get("hardware") if isinstance(data, Mapping) else None
    have: Any = table.get(label) if isinstance(table, Mapping) else None
    if not isinstance(have, Mapping):
        return list(HARDWARE_FIELDS)
    return [f for f in HARDWARE_FIELDS if have.get(f) is None]
