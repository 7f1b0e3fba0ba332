"""unknown-runner-label: an entry's runner label is not in runners.yaml.

What it does:
    Checks every entry's ``runner:`` against the labels of ``configs/runners.yaml``
    (both the flat and the ``labels:`` format) and suggests the closest label.

Why is this bad?
    The sweep cannot schedule the job: no self-hosted runner carries the label, so the
    entry never runs (or the workflow waits for a runner forever).

Example:
    ```yaml
    # file: configs/runners.yaml
    labels:
      mi300x-amds:         # renamed; the configs still say runner: mi300x
        - mi300x-amds_0
        - mi300x-amds_1
    ```

    All entries with the same unknown label are one finding (one cause: the label), with
    the entries it strands and, as consequences, the launchers that would have run them
    and that no node runs now (unreachable-launcher).

Fix:
    Use an existing label, or add the label and its nodes to runners.yaml. Where one
    declared label is the clear successor (``h200-dgxc`` -> ``cluster:h200-dgxc``: the
    same name in another namespace, or the only label that extends it), the fix rewrites
    the entries' ``runner:`` values (unsafe: it changes where the jobs run).
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.config import Config
from bot.findings import Edit, Finding, Fix, Related, Severity
from bot.repo.configs import Entry
from bot.repo.facts import Facts
from bot.rules import unreachable_launcher
from bot.rules._edits import replace_scalars
from bot.rules._variants import closest, entries_text

ID = "unknown-runner-label"
CODE = "BB104"
SEVERITY = Severity.ERROR
SUMMARY = "an entry's runner label is not declared in runners.yaml"


def _bare(label: str) -> str:
    return label.split(":", 1)[-1]


def successor(label: str, declared: list[str]) -> str | None:
    """The one declared label that clearly replaces ``label``: the same name in another
    namespace (``cluster:``), else the only label that extends it (``mi300x`` ->
    ``mi300x-amds``)."""
    same = [d for d in declared if _bare(d) == _bare(label) and d != label]
    if len(same) == 1:
        return same[0]
    if same:
        return None
    longer = [d for d in declared if _bare(d).startswith(_bare(label) + "-")]
    return longer[0] if len(longer) == 1 else None


def stranded_launchers(facts: Facts, label: str) -> list[str]:
    """Launchers named for the label's nodes that no node runs now."""
    bare = _bare(label)
    out = []
    for path in unreachable_launcher.unreachable(facts):
        prefix = facts.profile.prefix_of_launcher(path) or ""
        if prefix == bare or prefix.startswith(bare + "-"):
            out.append(path)
    return out


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    runners = facts.runners
    if runners.path is None or runners.error is not None:
        return
    labels = list(runners.labels)
    groups: dict[str, list[Entry]] = {}
    for entry in facts.entries:
        label = entry.runner
        if label is not None and label not in runners.labels:
            groups.setdefault(label, []).append(entry)
    for label, entries in groups.items():
        first = entries[0]
        pos = first.field_pos("runner")
        names = [e.name for e in entries]
        near = closest(label, labels)
        heir = successor(label, labels)
        hint = f"; did you mean {heir}?" if heir else f"; did you mean {' or '.join(near)}?" if near else ""
        what = (f"{first.name}: runner label {label!r}" if len(entries) == 1 else
                f"runner label {label!r} of {len(entries)} entries ({entries_text(names)})")
        message = f"{what} is not in {runners.path}, so {'it never runs' if len(entries) == 1 else 'they never run'}"
        message += hint
        related = [Related(e.path, e.field_pos("runner").line, f"{e.name} (runner: {label})") for e in entries[1:]]
        launchers = stranded_launchers(facts, label)
        related += [Related(p, 1, "would run these entries; no node runs it now", unreachable_launcher.ID,
                            unreachable_launcher.subject(p)) for p in launchers]
        if launchers:
            message += f"; consequence: {', '.join(launchers)} is run by no node"
        related.append(Related(runners.path, 1, "declared labels"))
        fix = _fix(facts, entries, heir) if heir else None
        yield Finding(ID, CODE, SEVERITY, first.path, pos.line, pos.col, message, tuple(related), tuple(names),
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
