"""env-not-passed's causes: one per (workflow path, variables) or (launcher line, variables).

A cause carries the entries it affects and an example of what goes wrong; the rule module
turns causes into findings. Memoized in ``facts.memo`` (launcher-rejects-entry asks which
exits are explained here, so that an exit caused by a missing variable is reported once).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from bot.repo.facts import Facts
from bot.repo.paths import PathRun
from bot.repo.workflows.wfcalls import LauncherCall
from bot.rules._envneeds import FAILS, Outcome, main_reads_unset, missing_needs, outcome, reads
from bot.rules._variants import entries_text
from bot.shell.ir.values import Val, known


@dataclass
class Cause:
    fails: bool  # the job fails or runs the wrong script (an error), else a warning
    path: str
    line: int
    message: str
    key: str
    entries: set[str] = field(default_factory=set)
    related: list[tuple[str, int, str]] = field(default_factory=list)
    launchers: list[str] = field(default_factory=list)  # the launchers it stops (unset causes)
    whats: list[str] = field(default_factory=list)  # what happens, per launcher
    runs_another: bool = False  # some entry runs another script than on the main path (else: they fail)


def causes(facts: Facts) -> list[Cause]:
    memo = facts.memo
    if "env-causes" not in memo:
        found: dict[str, Cause] = {}
        explained: set[tuple[str, int]] = set()
        _other_paths(facts, found)
        _main_paths(facts, found, explained)
        _standalone(facts, found)
        memo["env-causes"] = sorted(found.values(), key=lambda c: (c.path, c.line, c.key))
        memo["env-explained"] = explained
    out: list[Cause] = memo["env-causes"]
    return out


def explained_exits(facts: Facts) -> set[tuple[str, int]]:
    """Launcher lines where a run exits because the env lacks a variable (reported here)."""
    causes(facts)
    out: set[tuple[str, int]] = facts.memo["env-explained"]
    return out


def _base(path: str) -> str:
    return posixpath.basename(path)


def _names(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def _add(found: dict[str, Cause], key: str, make: Cause, entries: list[str] | tuple[str, ...],
         related: list[tuple[str, int, str]], limit: int = 8) -> None:
    cause = found.setdefault(key, make)
    cause.entries.update(entries)
    for r in related:
        if r not in cause.related and len(cause.related) < limit:
            cause.related.append(r)


# ------------------------------------------------------------------ other paths


def _other_paths(facts: Facts, found: dict[str, Cause]) -> None:
    for pr in facts.path_runs:
        if pr.main is None or pr.entry is None or pr.point is None:
            continue
        main = pr.main
        main_env = facts.env_for(main.entry, main.point, main.node, main.label)
        o_main = outcome(main.result) if main.result is not None else None
        o = outcome(pr.result)
        call = pr.group.call
        unset = sorted({r.name for r in reads(pr.result) if r.name not in pr.env and r.name in main_env}
                       | {n for n in pr.differs if n not in pr.env and n in main_env})
        # a literal matters where it picks a variant (SPEC_DECODING 'none' for an mtp entry);
        # other literals (EVAL_ONLY, ISL '0') are the path's own mode, judged by what fails
        variant_env = {v.env for v in facts.profile.variants if v.env}
        literal = [n for n in pr.differs if n in pr.env and n in variant_env]
        names = pr.alike or (pr.entry.name,)
        if o_main is not None and o.text(facts) != o_main.text(facts):
            what = f"{o.text(facts)}, not {_runs_of(facts, o_main)}, for {pr.entry.name}"
            if unset:
                another = any(t is None or facts.tree.is_file(t) for t in o.runs)  # not: a missing script
                _unset(facts, found, pr, call, unset, what, names, another=another)
            elif literal:
                _literal(facts, found, pr, call, literal, main_env, what, names)
        for m in missing_needs(facts, pr.result, pr.env):
            if m.in_env or m.need.name not in main_env:
                continue
            what = (f"{_base(m.script)} requires it ({m.need.how}, line {m.need.loc.line}) and fails "
                    f"for {pr.entry.name}")
            _unset(facts, found, pr, call, [m.need.name], what, names,
                   extra=[(m.script, m.need.loc.line, f"requires {m.need.name}")])


def _runs_of(facts: Facts, o: Outcome) -> str:
    return o.text(facts).removeprefix("it runs ")


def _unset(facts: Facts, found: dict[str, Cause], pr: PathRun, call: LauncherCall, unset: list[str], what: str,
           names: tuple[str, ...], extra: list[tuple[str, int, str]] | None = None, another: bool = False) -> None:
    """One cause per (path, unset names): every launcher and entry it stops. The message says what,
    where and how many; each launcher, with what happens there, is a related line."""
    key = f"{pr.group.call.name}|unset|{','.join(unset)}"
    read = next((r for r in reads(pr.result) if r.name in unset), None)
    main = (facts.envs.call_for(pr.entry, pr.point, pr.node, pr.label) if pr.entry is not None and pr.point is not None
            else None)
    cause = found.get(key)
    if cause is None:
        cause = found[key] = Cause(True, call.path, call.line, "", key)
    cause.runs_another = cause.runs_another or another
    launcher = _base(pr.launcher) + (f" (line {read.loc.line})" if read is not None else "")
    related: list[tuple[str, int, str]] = []
    if launcher not in cause.launchers:
        cause.launchers.append(launcher)
        cause.whats.append(what)
        how = f"reads {read.name} with no default ({read.kind})" if read is not None else "needs it"
        related.append((read.loc.path, read.loc.line, f"{how}: {what}") if read is not None
                       else (pr.launcher, 1, f"{how}: {what}"))
    related += extra or []
    if main is not None:
        for n in unset:
            var = main.env.get(n)
            if var is not None:
                related.append((var.path, var.line, f"the main path ({main.name}) sets {n} here"))
    _add(found, key, cause, names, related, limit=8 + len(cause.launchers))
    plural = "s" if len(unset) > 1 else ""
    count = len(cause.launchers)
    who = " and ".join(cause.launchers) if count < 3 else f"{count} launchers"
    if len(cause.entries) <= 1:
        happens = cause.whats[0]
    else:
        happens = (f"{len(cause.entries)} entries fail or run another script than on the main path"
                   if cause.runs_another else f"the job fails for {len(cause.entries)} entries")
    cause.message = (f"{pr.group.name} never sets {_names(unset)}, which {who} need{'s' if count == 1 else ''}: "
                     f"{happens} [variable{plural}: {', '.join(unset)}]")


def _literal(facts: Facts, found: dict[str, Cause], pr: PathRun, call: LauncherCall, literal: list[str],
             main_env: dict[str, Val], what: str, names: tuple[str, ...]) -> None:
    name = literal[0]
    var = call.env[name]
    path, line, shown = var.path, var.line, name
    for inp in var.inputs:
        if inp in call.passed:
            path, line = call.passed[inp]
            shown = f"{inp} ({name})"
    value = known(pr.env[name])
    before = known(main_env.get(name, ()))
    key = f"{pr.group.call.name}|literal|{name}={value}"
    message = (f"{pr.group.name} passes {shown} = {value!r} where the main path passes {before!r}: {what}"
               + (f" (and {len(names) - 1} more)" if len(names) > 1 else ""))
    _add(found, key, Cause(True, path, line, message, key), names,
         [(call.path, call.line, "the launcher this path runs")])


# ------------------------------------------------------------------ the main path


@dataclass
class _Crossing:
    """A container boundary (``docker run -e`` list, ``srun --export=``) that keeps variables out."""

    boundary: str
    path: str
    line: int
    needs: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # var -> (script, line, how)
    entries: set[str] = field(default_factory=set)
    fails: bool = False


def _boundaries(found: dict[str, Cause], crossing: dict[tuple[str, int], _Crossing]) -> None:
    """One cause per boundary line, naming every variable it keeps out."""
    for (real, line), c in sorted(crossing.items()):
        names = sorted(c.needs)
        scripts = sorted({_base(s) for s, _, _ in c.needs.values()})
        how = ", ".join(f"{n} ({c.needs[n][2]}, line {c.needs[n][1]})" for n in names)
        key = f"boundary|{real}|{line}"
        shown = sorted(c.entries)
        outcome_text = "the job fails" if c.fails else "the script runs without them"
        what = "the docker run -e allow-list" if c.boundary == "docker" else c.boundary
        message = (f"{what} at {_base(c.path)}:{line} does not pass {_names(names)} into the container, "
                   f"but {', '.join(scripts)} require{'s' if len(scripts) == 1 else ''} {how}: {outcome_text} "
                   f"for {entries_note(shown)}")
        _add(found, key, Cause(c.fails, c.path, line, message, key), shown,
             [(s, ln, f"requires {n}") for n, (s, ln, _) in sorted(c.needs.items())])


def _main_paths(facts: Facts, found: dict[str, Cause], explained: set[tuple[str, int]]) -> None:
    crossing: dict[tuple[str, int], _Crossing] = {}
    for run in facts.runs:
        env = facts.env_for(run.entry, run.point, run.node, run.label)
        main = facts.envs.call_for(run.entry, run.point, run.node, run.label)
        passed = facts.passed_vars(run.entry.multinode)
        fails = [r for r in main_reads_unset(run, env) if passed is not None]
        if fails:
            unset = sorted({r.name for r in fails})
            for r in fails:
                explained.add((r.loc.path, r.loc.line))
            where = (main.path, main.line) if main is not None else (fails[0].loc.path, fails[0].loc.line)
            who = main.name if main is not None else "the benchmark workflow"
            how = {r.name: r.kind for r in fails}
            key = f"main|{run.real}|{','.join(unset)}"
            message = (f"{_base(run.launcher)} requires {_names(unset)} ({how[unset[0]]} at line "
                       f"{fails[0].loc.line}), but {who} never sets {'them' if len(unset) > 1 else 'it'}: "
                       f"the job fails for {run.entry.name}")
            _add(found, key, Cause(True, where[0], where[1], message, key), [run.entry.name],
                 [(r.loc.path, r.loc.line, f"{r.kind}: {r.name}") for r in fails[:3]])
        for m in missing_needs(facts, run.result, env):
            h = m.handed
            if m.in_env and h.boundary:
                fatal = m.need.how in FAILS or m.need.how in ("check", "guard")
                at = crossing.setdefault((run.real, h.loc.line), _Crossing(h.boundary, h.loc.path, h.loc.line))
                at.needs.setdefault(m.need.name, (m.script, m.need.loc.line, m.need.how))
                at.fails = at.fails or fatal
                at.entries.add(run.entry.name)
            elif not m.in_env and passed is not None:
                where = (main.path, main.line) if main is not None else (m.script, m.need.loc.line)
                who = main.name if main is not None else "the benchmark workflow"
                key = f"needs|{m.script}|{m.need.name}"
                message = (f"{_base(m.script)} requires {m.need.name} ({m.need.how}, line {m.need.loc.line}), but "
                           f"{who} never sets it and {_base(run.launcher)} does not either: the job fails for "
                           f"{run.entry.name}")
                _add(found, key, Cause(True, where[0], where[1], message, key), [run.entry.name],
                     [(m.script, m.need.loc.line, f"requires {m.need.name}")])

    _boundaries(found, crossing)


# ------------------------------------------------------------------ standalone paths


def _standalone(facts: Facts, found: dict[str, Cause]) -> None:
    for pr in facts.path_runs:
        if pr.main is not None:
            continue
        call = pr.group.call
        fails = [r for r in reads(pr.result) if r.kind in FAILS and r.name not in pr.env]
        missing = [m for m in missing_needs(facts, pr.result, pr.env) if not m.in_env]
        if not fails and not missing:
            continue
        unset = sorted({r.name for r in fails} | {m.need.name for m in missing})
        key = f"{call.name}|standalone|{','.join(unset)}"
        what = outcome(pr.result).text(facts) if fails else f"{_base(missing[0].script)} fails its own check"
        message = (f"{pr.group.name} never sets {_names(unset)}, which {_base(pr.launcher)} needs on "
                   f"{pr.label}: {what}")
        related = [(r.loc.path, r.loc.line, f"{r.kind}: {r.name}") for r in fails[:3]]
        related += [(m.script, m.need.loc.line, f"requires {m.need.name}") for m in missing[:3]]
        _add(found, key, Cause(True, call.path, call.line, message, key), [], related)


def entries_note(names: list[str]) -> str:
    return entries_text(sorted(names))
