"""Which config entries a launcher serves (shared by the rules that report a launcher)."""

from __future__ import annotations

from bot.repo.facts import Facts


def entries_of(facts: Facts, launcher: str) -> list[str]:
    """Entries whose runner label has a node that the launcher serves."""
    labels = facts.runners.labels
    out = []
    for entry in facts.entries:
        nodes = labels.get(entry.runner or "", [])
        if any(facts.launcher_of_node(n) == launcher for n in nodes):
            out.append(entry.name)
    return out
