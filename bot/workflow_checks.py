"""The repository's own workflows in the gate: zizmor and actionlint, run on the files a change
touches (or all of them), their findings made benchbot findings.

:func:`check` writes the tree's workflow and action files into a workspace, runs both tools at
once (``bot.external.tools``), reads their JSON (``bot.external.zizmor``,
``bot.external.actionlint``) and passes the findings through the same gate as our own rules:
rule selection, ``per-path-ignores``, inline suppressions (``# benchbot: ignore[zizmor/...]``
and zizmor's own ``# zizmor: ignore[...]``, both only where ``honoured`` says: a pull request's
are those its base has), configured severities. Findings whose key repeats in a file are
numbered, so that new-only counts a second copy of a problem as new.

The runs are kept in the persistent cache by tool version, options and the files' contents:
the same files are never checked twice. A tool that is not installed, or fails, or overruns its
budget gives a note (``Checked.notes``), never an error: ``pip install 'benchbot[workflows]'``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bot import cache
from bot.external import actionlint, zizmor
from bot.external.names import covers, resolve
from bot.external.places import ACTIONLINT_CONFIG, Workspace, all_files, checkable, is_workflow, texts_of
from bot.external.tools import Ran, locate, run_all, version
from bot.findings import Finding
from bot.repo.files.tree import Tree
from bot.suppress import Suppression
from bot.suppress import parse as parse_suppressions

if TYPE_CHECKING:
    from bot.settings import Config

INSTALL = "pip install 'benchbot[workflows]'"
_ZIZMOR_IGNORE = re.compile(r"#\s*zizmor:\s*ignore\[(?P<rules>[^\]\n]*)\]")


@dataclass
class Checked:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)  # tool -> the version that ran
    files: list[str] = field(default_factory=list)  # the files checked
    suppressions: dict[str, list[Suppression]] = field(default_factory=dict)  # of the files checked


def changed(base: Tree, head: Tree) -> list[str]:
    """The workflow and action files of ``head`` that ``base`` does not have as they are."""
    return [p for p in all_files(head) if head.text(p) != base.text(p)]


def check(tree: Tree, paths: Iterable[str], conf: Config, honoured: Callable[[Suppression], bool] | None = None,
          policy: Tree | None = None) -> Checked:
    """zizmor's and actionlint's findings on ``paths`` of ``tree``. ``policy``: the tree whose
    configurations of the tools count (``.github/actionlint.yaml``, ``zizmor.yml``...: the base in
    a pull request; default ``tree``)."""
    out = Checked()
    out.files = sorted(p for p in dict.fromkeys(paths) if checkable(p) and tree.is_file(p))
    if not out.files:
        return out
    texts = texts_of(tree, dict.fromkeys(out.files + all_files(tree)))
    out.files = [p for p in out.files if p in texts]
    settings = conf.workflows
    wanted = {"zizmor": settings.zizmor.enabled and _any_enabled(conf, "zizmor"),
              "actionlint": settings.actionlint.enabled and _any_enabled(conf, "actionlint")}
    exes: dict[str, str] = {}
    for tool, on in wanted.items():
        if not on:
            continue
        exe = locate(tool)
        got = version(exe) if exe else None
        if exe is None or got is None:
            out.notes.append(f"{tool} is not installed ({INSTALL}): the workflows were not checked by it")
            continue
        exes[tool], out.tools[tool] = exe, got
    if not exes:
        return out
    # the tools' own configurations, from the policy tree (the base in a pull request)
    configs = {tool: next(((p, t) for p in paths if (t := (policy or tree).text(p)) is not None), None)
               for tool, paths in (("actionlint", ACTIONLINT_CONFIG), ("zizmor", zizmor.CONFIG))}
    files = dict(texts)
    files.update(dict(c for c in configs.values() if c is not None))
    where = {tool: c[0] if c is not None else None for tool, c in configs.items()}
    raw: list[tuple[Finding, int]] = []
    with Workspace(files) as ws:
        jobs = _jobs(exes, out.files, conf, where, ws.root)
        ran = _cached_runs(jobs, out.tools, files, ws.root)
        if "zizmor" in ran:
            zconf = configs["zizmor"]
            spans, notes = zizmor.findings(ran["zizmor"], ws, texts, zizmor.ignores(zconf[1]) if zconf else None)
            raw += spans
            out.notes += notes
        if "actionlint" in ran:
            found, notes = actionlint.findings(ran["actionlint"], ws, texts)
            raw += [(f, f.line) for f in found]
            out.notes += notes
    out.suppressions = {p: sups for p in out.files if (sups := suppressions_in(p, texts[p]))}
    out.findings = _gate(_numbered(raw), out.suppressions, conf, honoured)
    return out


def _any_enabled(conf: Config, tool: str) -> bool:
    """Whether any rule of ``tool`` can be reported (a selection may leave none)."""
    if tool in conf.ignore:
        return False
    return conf.select is None or any(r == tool or r.startswith(tool + "/") for r in conf.select)


def _jobs(exes: Mapping[str, str], files: list[str], conf: Config, config: Mapping[str, str | None], root: str
          ) -> dict[str, tuple[list[str], str, float]]:
    """Each tool's argv, folder and time budget; ``config``: each tool's configuration file."""
    jobs: dict[str, tuple[list[str], str, float]] = {}
    z, a = conf.workflows.zizmor, conf.workflows.actionlint
    if "zizmor" in exes:
        jobs["zizmor"] = (zizmor.argv(exes["zizmor"], files, z.persona, z.min_severity, z.min_confidence,
                                      config.get("zizmor")), root, z.timeout)
    if "actionlint" in exes:
        shellcheck = locate("shellcheck") if a.shellcheck else None
        flows = [p for p in files if is_workflow(p)]  # actionlint reads action.yml only where a workflow uses it
        if flows:
            jobs["actionlint"] = (actionlint.argv(exes["actionlint"], flows, shellcheck, config.get("actionlint")),
                                  root, a.timeout)
    return jobs


def _cached_runs(jobs: Mapping[str, tuple[list[str], str, float]], versions: Mapping[str, str],
                 files: Mapping[str, str], root: str) -> dict[str, Ran]:
    """Each tool's run, from the persistent cache when the same version ran with the same options
    on the same files (a run that hit a budget is not kept)."""
    content = hashlib.sha256()
    for path in sorted(files):
        content.update(path.encode() + b"\0" + hashlib.sha256(files[path].encode("utf-8", "surrogatepass")).digest())
    keys = {tool: cache.key("workflow-check", tool, versions[tool], "\0".join(argv[1:]), content.hexdigest())
            for tool, (argv, _, _) in jobs.items()}
    out: dict[str, Ran] = {}
    for tool, k in keys.items():
        kept = cache.get_json("workflows", k)
        if isinstance(kept, dict) and isinstance(kept.get("code"), int) and isinstance(kept.get("stdout"), str):
            out[tool] = Ran(kept["code"], kept["stdout"], str(kept.get("stderr", "")))
    fresh = run_all({tool: job for tool, job in jobs.items() if tool not in out})
    for tool, ran in fresh.items():
        out[tool] = ran
        if ran.problem is None:
            payload = {"code": ran.code, "stdout": ran.stdout, "stderr": ran.stderr}
            cache.put("workflows", keys[tool], json.dumps(payload).encode())
    return out


def suppressions_in(path: str, text: str) -> list[Suppression]:
    """The file's ``# benchbot: ignore[...]`` comments and zizmor's ``# zizmor: ignore[...]`` (as
    suppressions of ``zizmor/<audit>`` covering the line they are on)."""
    out = parse_suppressions(path, text)
    if "zizmor:" in text:
        for i, line in enumerate(text.splitlines()):
            m = _ZIZMOR_IGNORE.search(line)
            if m is not None:
                rules = tuple(f"zizmor/{r.strip()}" for r in m.group("rules").split(",") if r.strip())
                out.append(Suppression(path, i + 1, m.start() + 1, i + 1, rules, "", not line[:m.start()].strip(),
                                       line))
    return out


def _numbered(raw: list[tuple[Finding, int]]) -> list[tuple[Finding, int]]:
    """The second and later findings with one key in a file get ``#2``, ``#3`` (in line order)."""
    seen: dict[str, int] = {}
    out = []
    for f, end in sorted(raw, key=lambda fe: fe[0].sort_key()):
        n = seen[f.key] = seen.get(f.key, 0) + 1
        out.append((replace(f, key=f"{f.key}|#{n}") if n > 1 else f, end))
    return out


def _gate(raw: list[tuple[Finding, int]], sups: Mapping[str, list[Suppression]], conf: Config,
          honoured: Callable[[Suppression], bool] | None) -> list[Finding]:
    out: list[Finding] = []
    for f, end in raw:
        if not conf.enabled(f.rule) or conf.ignored_at(f.rule, f.path):
            continue
        hit = False
        for s in sups.get(f.path, ()):
            zizmor_comment = _ZIZMOR_IGNORE.match(s.text, s.column - 1) is not None
            inside = f.line <= s.covers <= max(end, f.line) if zizmor_comment else s.covers in (0, f.line)
            if inside and any(covers(resolve(n) or "", f.rule) for n in s.rules) \
                    and (honoured is None or honoured(s)):
                hit = True
                break
        if hit:
            continue
        level = conf.severity_of(f.rule)
        out.append(replace(f, severity=level) if level is not None else f)
    return out
