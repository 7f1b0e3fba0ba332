"""unknown-runner-label: an entry's runner label is not in runners.yaml, or lacks the hardware the sweep needs.

What it does:
    Checks every entry's ``runner:`` against runners.yaml. The sweep generator puts the label
    straight into the job's ``runs-on``, so an entry whose label runners.yaml does not list
    still runs, on whatever runner carries it; what runners.yaml is for, and what a missing
    label breaks, is reported:

    - the label lists no nodes (warning): benchbot cannot tell which launcher runs the
      entries (they are not checked past their config; ``coverage`` says so), and sweeps
      filtered by node (``--runner-node-filter``) skip them. The launchers named for the
      label's likely nodes are offered, and the closest declared label. Where nothing is
      named for the label at all (no declared label in another namespace, no node, no
      launcher), no runner may carry it, most likely a typo, and the jobs would wait for one
      forever: an error.
    - an agentic point with ``kv-offloading: dram`` on a label with no ``hardware:`` metadata
      (``available-cpu-dram-mib``, ``gpus-per-node``; error): the generator sizes the DRAM
      offload budget from it and raises, so generating the sweep fails, for every entry.

Why is this bad?
    A label the file does not describe hides where its jobs run, so nothing checks the
    launcher they reach, and a node-filtered run leaves them out without a word; a DRAM
    agentic point without hardware metadata breaks the whole sweep.

Example:
    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x-amds:         # renamed; the configs still say runner: mi300x
        - mi300x-amds_0
        - mi300x-amds_1
    ```

    All entries with the same label are one finding (one cause: the label), with the
    entries it concerns and the launchers named for its nodes.

Fix:
    Add the label with its nodes (and, for DRAM agentic points, its ``hardware:``) to
    runners.yaml, or use a declared label. Where one declared label is the clear successor
    (``h200-dgxc`` -> ``cluster:h200-dgxc``: the same name in another namespace, or the only
    label that extends it), the fix rewrites the entries' ``runner:`` values (unsafe: it
    changes where the jobs run).
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.findings import Edit, Finding, Fix, Related, Severity
from bot.repo.facts import Facts
from bot.repo.labels import bare, launcher_candidates, missing_hardware, needs_hardware
from bot.repo.load.configs import Entry
from bot.rules import unreachable_launcher
from bot.rules._edits import replace_scalars
from bot.rules._variants import closest, entries_text
from bot.settings import Config

ID = "unknown-runner-label"
CODE = "BB104"
SEVERITY = Severity.WARNING  # error where the sweep itself fails (hardware metadata)
SUMMARY = "an entry's runner label is not in runners.yaml, or lacks the hardware the sweep needs"


def successor(label: str, declared: list[str]) -> str | None:
    """The one declared label that clearly replaces ``label``: the same name in another
    namespace (``cluster:``), else the only label that extends it (``mi300x`` ->
    ``mi300x-amds``)."""
    same = [d for d in declared if bare(d) == bare(label) and d != label]
    if len(same) == 1:
        return same[0]
    if same:
        return None
    longer = [d for d in declared if bare(d).startswith(bare(label) + "-")]
    return longer[0] if len(longer) == 1 else None


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    runners = facts.runners
    if runners.path is None or runners.error is not None:
        return
    labels = list(runners.labels)
    groups: dict[str, list[Entry]] = {}
    for entry in facts.entries:
        label = entry.runner
        if label is not None and (label not in runners.labels or _short_of_hardware(facts, entry)):
            groups.setdefault(label, []).append(entry)
    for label, entries in groups.items():
        yield _finding(facts, label, entries, labels)


def _nodes_named(facts: Facts, label: str) -> bool:
    """Whether a node of runners.yaml is named for ``label`` (``h200-dgxc`` -> ``h200-dgxc_3``)."""
    b, sep = bare(label), facts.profile.node_separator or "_"
    return any(node.startswith(b + sep) or node.startswith(b + "-") for _, node, _ in facts.runners.nodes())


def _short_of_hardware(facts: Facts, entry: Entry) -> bool:
    return entry.runner is not None and bool(needs_hardware(entry)) and bool(missing_hardware(facts, entry.runner))


def _finding(facts: Facts, label: str, entries: list[Entry], labels: list[str]) -> Finding:
    runners = facts.runners
    assert runners.path is not None
    names = [e.name for e in entries]
    first = entries[0]
    pos = first.field_pos("runner")
    whose = f"{first.name}" if len(entries) == 1 else f"{len(entries)} entries ({entries_text(names)})"
    near = closest(label, labels)
    heir = successor(label, labels)
    hint = f"; did you mean {heir}?" if heir else f"; did you mean {' or '.join(near)}?" if near else ""
    related = [Related(e.path, e.field_pos("runner").line, f"{e.name} (runner: {label})") for e in entries[1:]]
    sizing = [e for e in entries if needs_hardware(e)]
    missing = missing_hardware(facts, label)
    if sizing and missing:
        point = needs_hardware(sizing[0])[0]
        message = (f"runner label {label!r} of {whose} has no hardware metadata ({', '.join(missing)}) in "
                   f"{runners.path}, which the sweep generator needs for agentic points with kv-offloading: dram, "
                   "so generating the sweep fails")
        related.append(Related(sizing[0].path, point.pos.line, f"{sizing[0].name}: an agentic point with "
                               "kv-offloading: dram"))
        severity = Severity.ERROR
    elif label in runners.labels or heir or launcher_candidates(facts, label) or _nodes_named(facts, label):
        message = (f"runner label {label!r} of {whose} lists no nodes in {runners.path}: benchbot cannot tell "
                   f"which launcher runs them, and node-filtered sweeps skip them{hint}")
        severity = Severity.WARNING
    else:  # nothing says a runner carries it: most likely a typo, and the jobs wait for a runner forever
        message = (f"runner label {label!r} of {whose} is not in {runners.path}, and no declared label, node or "
                   f"launcher is named for it: no runner may carry it, so the jobs would wait for one{hint}")
        severity = Severity.ERROR
    if label not in runners.labels:
        # the launchers named for the label's nodes; one runners.yaml names no node for is
        # unreachable only on paper (a consequence, not a cause of its own)
        stranded = set(unreachable_launcher.unreachable(facts))
        for p in launcher_candidates(facts, label):
            note = f"named for nodes of {bare(label)}: the launcher these entries likely reach"
            related.append(Related(p, 1, note + "; runners.yaml names no node for it", unreachable_launcher.ID,
                                   unreachable_launcher.subject(p)) if p in stranded else Related(p, 1, note))
    related.append(Related(runners.path, 1, "declared labels"))
    fix = _fix(facts, entries, heir) if heir and label not in runners.labels else None
    return Finding(ID, CODE, severity, first.path, pos.line, pos.col, message, tuple(related), tuple(names),
                   fix, key=label)


def _fix(facts: Facts, entries: list[Entry], heir: str) -> Fix | None:
    by_file: dict[str, list[Entry]] = {}
    for e in entries:
        by_file.setdefault(e.path, []).append(e)
    edits = []
    for path, group in by_file.items():
        text = facts.tree.text(path)
        if text is None:
            return None
        new = replace_scalars(text, [(e.name, "runner", e.field_pos("runner")) for e in group], heir,
                              group[0].runner)
        if new is None:
            return None
        edits.append(Edit(path, text, new))
    return Fix.of(f"Use the declared label {heir!r} for {entries_text([e.name for e in entries])}", edits)
