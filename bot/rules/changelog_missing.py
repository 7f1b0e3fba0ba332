"""changelog-missing: a change that can move benchmark numbers has no new perf-changelog entry.

What it does:
    Compares a change's base and head (``lint --new-from-rev REV``, and the pull-request
    review; plain ``lint`` has no base and never reports it). The affected entries are the
    config entries the change adds or changes (compared as loaded data: comments and layout
    do not count), and the entries whose launcher or dispatched benchmark script it changes
    (compared as parsed statements: a change to comments, blank lines, indentation or line
    continuations only cannot move a benchmark and is not one); removed entries need none.
    Every affected entry must be matched by a ``config-keys`` name or glob (``*`` = any
    characters, as the repo's own gate matches) of an entry the change appends to the
    changelog (the profile's ``changelog``, default ``perf-changelog.yaml``;
    ``changelog-key``, default ``config-keys``). One finding per cause: an entry whose YAML
    changed is reported at its line in the config; a script or launcher change is reported
    once, at its first changed statement, listing the entries it leaves uncovered. A launcher
    change is covered when a new changelog entry names any entry that runs that launcher
    (launchers are shared: a branch added for one model is documented under that model).
    The changelog is append-only and byte-sensitive: a deleted or edited old line (the
    profile's ``changelog-append: no-deletions``, the default, is what InferenceX's CI gate
    rejects: a line ``git diff`` removes, blank lines aside; ``tail``, its AGENTS.md
    convention, also rejects new lines anywhere but at the end), a CR, tab or NUL or a
    missing final newline in what is appended, a changelog that does not parse, a new entry
    without a usable key list, and a key that matches no entry are findings on the
    changelog. A repository whose base has no changelog (or ``changelog: null``) is not
    checked.

Why is this bad?
    The changelog drives the benchmark sweep: an entry no new changelog entry names is not
    re-run, so the published numbers keep describing the old configuration. Edited history
    breaks the gate that replays the changelog, and is rejected by it.

Example:
    A change-level rule: the ``# base:`` block is the base's file, the ``# file:`` blocks are
    what the change writes on top of it (here: four speculative tokens instead of three in
    the MTP entry's script, and no changelog entry).

    ```yaml
    # base: perf-changelog.yaml
    - config-keys:
        - kimik2.5-int4-mi300x-*
      description:
        - "Kimi K2.5 INT4 on MI300X with vLLM"
      pr-link: https://github.com/acme/bench/pull/1
    ```

    ```sh
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    # Kimi-K2.5 INT4 on MI300X with vLLM and an EAGLE3 draft model (spec-decoding: mtp).
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SPEC='{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 4}'
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --speculative-config "$SPEC" \\
        > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Append an entry at the end of the changelog, separated by one empty line, whose
    ``config-keys`` name (or glob) every affected entry, and leave the existing bytes alone.
    The proposed fix is that diff; its ``pr-link`` is the pull request's own in the review,
    and the repository's link numbered ``XXX`` in a local lint:

    ```yaml
    - config-keys:
        - kimik2.5-int4-mi300x-vllm-mtp
      description:
        - "What changed and why"
      pr-link: https://github.com/acme/bench/pull/XXX
    ```
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.findings import Edit, Finding, Fix, Related, Severity
from bot.repo.changed import changed_entries
from bot.repo.env.profile import Profile
from bot.repo.facts import Facts
from bot.repo.files.tree import Tree
from bot.repo.load import changelog as cl
from bot.repo.load.configs import Entry
from bot.rules._variants import entries_text
from bot.settings import Config
from bot.shell.front import same
from bot.shell.ir.values import known

ID = "changelog-missing"
CODE = "BB111"
SEVERITY = Severity.WARNING
SUMMARY = "a change to entries or the scripts they run has no new perf-changelog entry"
CHANGE_RULE = True  # needs a base and a head: check_change, not check

_CAUSE = re.compile(r"its (?:launcher|script) (.+) changed")


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    """A single tree has no change: nothing (see :func:`check_change`)."""
    return iter(())


def changed_paths(base: Facts, head: Facts) -> set[str]:
    """The launchers and dispatched scripts of the head's runs whose statements differ on the
    base (a change to comments or layout only is no change: :mod:`bot.shell.front.same`)."""
    candidates: set[str] = set()
    for run in head.runs:
        candidates.update((run.launcher, run.real))
        candidates.update(s for s in (known(d.target) for d in run.dispatches) if s)
    return {p for p in candidates if _difference(base, head, p) is not None}


def _difference(base: Facts, head: Facts, path: str) -> int | None:
    """None: the same script on both sides; else the head line of the first difference (0: unknown)."""
    old, new = base.tree.read(path), head.tree.read(path)
    if old == new:
        return None
    a, b = base.script(path), head.script(path)
    if old is None or new is None or a is None or b is None:
        return same.UNKNOWN_LINE
    return same.first_difference(a, b)


def check_change(base_tree: Tree, head_tree: Tree, base: Facts, head: Facts, conf: Config,
                 paths: set[str] | None = None, pr_link: str | None = None) -> list[Finding]:
    """The rule's findings for a change (enabled, per-path ignores and severity applied).
    ``pr_link``: the pull request's URL, for the ``pr-link`` of the entry the fix appends (the
    PR bot knows it; without it the fix holds a placeholder)."""
    prof = conf.profile
    if not conf.enabled(ID) or not prof.changelog:
        return []
    base_raw = base_tree.read(prof.changelog)
    if base_raw is None:
        return []
    head_raw = head_tree.read(prof.changelog) or b""
    found = list(_check(prof, base_raw, head_raw, base, head, changed_paths(base, head) if paths is None else paths,
                        pr_link))
    sev = conf.severity.get(ID, SEVERITY)
    return sorted((f if f.severity is sev else _with(f, sev) for f in found if not conf.ignored_at(ID, f.path)),
                  key=lambda f: f.sort_key())


def _with(f: Finding, sev: Severity) -> Finding:
    from dataclasses import replace

    return replace(f, severity=sev)


def _check(prof: Profile, base_raw: bytes, head_raw: bytes, base: Facts, head: Facts, paths: set[str],
           pr_link: str | None) -> Iterator[Finding]:
    path, key = prof.changelog, prof.changelog_key
    yield from _bytes(path, base_raw, head_raw, prof.changelog_corrections, prof.changelog_append)
    head_log = cl.read(path, head_raw, key)
    base_log = cl.read(path, base_raw, key)
    if head_log.error is not None:
        e = head_log.error
        yield Finding(ID, CODE, SEVERITY, path, e.line, e.col, f"{path} does not parse: {e.message}; no entry "
                      "this change affects counts as covered", key=f"{path}|parse")
        new: list[cl.LogEntry] = []
    else:
        new = cl.new_entries(base_log, head_log)
    names = [e.name for e in head.entries]
    globs: list[str] = []
    for entry in new:
        if entry.problem:
            yield Finding(ID, CODE, SEVERITY, path, entry.line, 1, f"the new {path} entry {entry.problem}",
                          key=f"{path}|entry|{entry.canon}")
        for glob, line in entry.keys:
            globs.append(glob)
            if not any(cl.glob_match(glob, n) for n in names):
                yield Finding(ID, CODE, SEVERITY, path, line, 1,
                              f"{key} {glob!r} of a new {path} entry matches no config entry (the sweep gate "
                              "rejects it)", key=f"{path}|glob|{glob}")
    if head_log.error is not None and not head_raw.startswith(base_raw):
        return  # the parse and append-only findings say it
    fix = _Appender(path, key, head_raw, pr_link or cl.link_placeholder(base_log))
    yield from _uncovered(path, key, head, changed_entries(head, base, paths), globs, head_raw, base, fix)


def _bytes(path: str, base_raw: bytes, head_raw: bytes, mutable: tuple[str, ...], mode: str) -> Iterator[Finding]:
    if base_raw == head_raw:
        return
    found = cl.hunks(base_raw, head_raw, mutable, mode)
    for h in found:
        span = f"line {h.base_start}" if h.base_end - h.base_start <= 1 else f"lines {h.base_start}-{h.base_end - 1}"
        if h.kind == "inserted":  # only with changelog-append: tail
            message = (f"{path} takes new entries at its end only (changelog-append: tail), but this change "
                       f"inserts lines before line {h.base_start} of the base; move them to the end (the CI gate "
                       "rejects only deleted lines, so it does not catch this)")
        else:
            what = f"edits {span}" if h.kind == "edited" else f"deletes {span}"
            message = (f"{path} is append-only, but this change {what} of the base (line endings and the final "
                       "newline count), which the CI gate rejects; restore the base bytes and append new entries "
                       "at the end")
        yield Finding(ID, CODE, SEVERITY, path, h.head_line, 1, message, key=f"{path}|append-only|{h.digest}")
    bad = None if found else cl.bad_bytes(base_raw, head_raw)  # an edited history says it already
    if bad is not None:
        yield Finding(ID, CODE, SEVERITY, path, bad[0], 1, f"{path} gets {bad[1]}; the changelog is "
                      "byte-sensitive (LF line endings, no tabs, a final newline)", key=f"{path}|bytes|{bad[1]}")


def _uncovered(path: str, key: str, head: Facts, affected: dict[str, str], globs: list[str], head_raw: bytes,
               base: Facts, fix: _Appender) -> Iterator[Finding]:
    by_name = {e.name: e for e in head.entries}
    causes: dict[str, list[Entry]] = {}
    documented: set[str] = set()  # launchers a new changelog entry names an entry of
    launchers = set(head.launcher_files)
    runs_of: dict[str, set[str]] = {}
    for r in head.runs:
        runs_of.setdefault(r.entry.name, set()).update({r.launcher, r.real})
    for name, why in affected.items():
        m = _CAUSE.fullmatch(why)
        cause = m.group(1) if m else ""
        if name not in by_name:
            continue
        if any(cl.glob_match(g, name) for g in globs):
            documented.update(runs_of.get(name, set()) & launchers)
            continue
        causes.setdefault(cause, []).append(by_name[name])
    # A launcher serves many models and a pull request that adds a branch for one of them documents
    # it under that model's changelog entry: the launcher's other entries are not asked for one
    # (without this, every AgentX PR that adds an `elif` is told about 20 unrelated entries).
    for cause in documented:
        causes.pop(cause, None)
    log_line = head_raw.count(b"\n") + 1 if head_raw else 1
    for cause, entries in causes.items():
        if not cause:
            for e in entries:
                how = "adds" if e.name not in {b.name for b in base.entries} else "changes"
                yield Finding(ID, CODE, SEVERITY, e.path, e.pos.line, e.pos.col,
                              f"this change {how} {e.name}, but no entry it appends to {path} has a {key} "
                              f"name or glob matching it", (Related(path, log_line, "append the entry here"),),
                              (e.name,), fix([e.name]), key=f"{path}|{e.name}")
            continue
        names = sorted(e.name for e in entries)
        related = (Related(path, log_line, "append the entry here"),
                   *(Related(e.path, e.pos.line, f"{e.name} runs {cause}") for e in entries))
        yield Finding(ID, CODE, SEVERITY, cause, _first_changed(head, base, cause), 1,
                      f"this change edits {cause}, which {entries_text(names, 3)} run"
                      f"{'s' if len(names) == 1 else ''}, but no entry it appends to {path} has a {key} name or "
                      f"glob matching {'it' if len(names) == 1 else f'these {len(names)} entries'}",
                      related, tuple(names), fix(names), key=f"{path}|{cause}")


def _first_changed(head: Facts, base: Facts, path: str) -> int:
    """The head line of the first statement that differs (its first differing byte line when unknown)."""
    line = _difference(base, head, path)
    if line:
        return line
    a = (base.tree.read(path) or b"").splitlines()
    b = (head.tree.read(path) or b"").splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + 1 if len(a) != len(b) and b else 1


class _Appender:
    """The fix: a new changelog entry appended at the head's end, as the gate wants it (after one
    empty line), naming the entries; its pr-link the pull request's, or a placeholder."""

    def __init__(self, path: str, key: str, head_raw: bytes, pr_link: str) -> None:
        self.path, self.key, self.pr_link = path, key, pr_link
        self.lines = head_raw.count(b"\n")
        try:
            self.text: str | None = head_raw.decode("utf-8")
        except UnicodeDecodeError:
            self.text = None

    def __call__(self, names: list[str]) -> Fix:
        block = "\n".join([f"- {self.key}:", *(f"    - {n}" for n in names), "  description:",
                           '    - "What changed and why"', f"  pr-link: {self.pr_link}"]) + "\n"
        what = names[0] if len(names) == 1 else f"these {len(names)} entries"
        description = f"Append an entry for {what} to the end of {self.path} (then write its description)"
        text = self.text
        if text is None:  # not UTF-8 text (its own finding): the diff only adds the entry
            lines = block.splitlines()
            end = self.lines
            return Fix(description, f"--- a/{self.path}\n+++ b/{self.path}\n@@ -{end},0 +{end + 1},{len(lines)} @@\n"
                       + "".join(f"+{line}\n" for line in lines))
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return Fix.of(description, [Edit(self.path, text, text + sep + block)])
