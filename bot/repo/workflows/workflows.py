"""The workflows half of the chain: which steps run a runner launcher, and with what env.

Read with PyYAML's C composer (positions kept, :mod:`bot.repo.load.yamlfile`). For every step
whose ``run:`` script runs a launcher (``bash ./runners/launch_${RUNNER_NAME%%_*}.sh``, or
the profile's launcher pattern with a literal node prefix), and for every way that step is
reached (a reusable workflow is followed from each in-repo caller, ``uses:
./.github/workflows/x.yml`` with ``with:``), this gives a :class:`LauncherCall`: the env
the launcher starts with (workflow, job and step ``env:``, ``export`` lines of the step's
script before the launcher, ``$GITHUB_ENV`` lines of earlier steps), each value a GitHub
expression template (:mod:`bot.repo.workflows.ghexpr`) with the callee's ``inputs.x`` replaced by
what the caller passes (or the input's default). A matrix that comes from a generator
step's JSON output (``${{ fromJson(needs.x.outputs.y) }}``) stands for the config entries.

Facts only (their types: :mod:`bot.repo.workflows.wfcalls`): which env is wrong is decided by the rules
(``env-not-passed``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bot.repo.load.yamlfile import Mark, YList, YMap, key_pos, load, pos_of, text_line
from bot.repo.workflows import ghexpr as gx
from bot.repo.workflows.wfcalls import EnvVar, Hop, LauncherCall, Workflows

MAX_CALL_DEPTH = 4  # reusable workflows calling reusable workflows (GitHub allows 4 levels)
MAX_CALLS = 2_000  # launcher calls over all workflows (a hostile repo cannot multiply them)
MAX_WORKFLOW_BYTES = 1_000_000

UNKNOWN_NODE = gx.Call("?", ())  # a value set at run time
MAX_WORK = 50_000  # caller chains walked (fan-out over depth is bounded)
_RUN_LAUNCHER = r"(?:\./)?{head}(\$\{{?RUNNER_NAME%%_\*\}}?|\$\{{?RUNNER_NAME\}}?|[A-Za-z0-9_.-]+){tail}"
_EXPORT = re.compile(r"^[ \t]*export[ \t]+([A-Za-z_][A-Za-z0-9_]*)=", re.M)
_GITHUB_ENV = re.compile(r"^[^\n#]*?[\"']?([A-Za-z_][A-Za-z0-9_]*)=[^\n]*>>[ \t]*\"?\$\{?GITHUB_ENV\b", re.M)
_LOCAL_USES = re.compile(r"^\./(\.github/workflows/[^@\s]+\.ya?ml)$")


def launcher_regex(launcher: str) -> re.Pattern[str]:
    """A regex for the profile's launcher pattern (``runners/launch_{node_prefix}.sh``) in a
    step's script; group 1 is the node prefix as written."""
    head, _, tail = launcher.partition("{node_prefix}")
    return re.compile(_RUN_LAUNCHER.format(head=re.escape(head), tail=re.escape(tail)))


def gather(texts: Mapping[str, str], launcher: str) -> Workflows:
    """The launcher calls of the workflows (path -> text)."""
    out = Workflows()
    docs: dict[str, YMap] = {}
    for path, text in sorted(texts.items()):
        if len(text) > MAX_WORKFLOW_BYTES:
            out.errors.append((path, 1, f"larger than {MAX_WORKFLOW_BYTES} bytes: not read"))
            continue
        doc, err = load(text)
        if err is not None:
            out.errors.append((path, err.line, err.message))
            continue
        if isinstance(doc, YMap):
            docs[path] = doc
    out.files = dict(docs)
    rx = launcher_regex(launcher)
    callers: dict[str, list[tuple[str, str, YMap]]] = {}
    for path, doc in docs.items():
        for job_id, job in _jobs(doc):
            m = _LOCAL_USES.match(str(job.get("uses", "")).strip())
            if m:
                callers.setdefault(m.group(1), []).append((path, job_id, job))
    for path, doc in docs.items():
        for job_id, job in _jobs(doc):
            for call in _job_calls(path, doc, job_id, job, rx, out):
                for chained in _through_callers(call, path, docs, callers, 0, out):
                    if len(out.calls) >= MAX_CALLS:
                        out.truncated = True
                        return out
                    out.calls.append(chained)
    return out


# ------------------------------------------------------------------ one workflow


def _jobs(doc: YMap) -> list[tuple[str, YMap]]:
    jobs = doc.get("jobs")
    return [(str(k), v) for k, v in jobs.items() if isinstance(v, YMap)] if isinstance(jobs, YMap) else []


def triggers(doc: YMap) -> tuple[str, ...]:
    on = doc.get("on", doc.get("True"))  # PyYAML reads the key ``on`` as true
    if isinstance(on, str):
        return (on,)
    if isinstance(on, YList):
        return tuple(str(x) for x in on)
    if isinstance(on, YMap):
        return tuple(str(k) for k in on)
    return ()


def inputs_of(doc: YMap, event: str = "workflow_call") -> YMap:
    on = doc.get("on", doc.get("True"))
    spec = on.get(event) if isinstance(on, YMap) else None
    ins = spec.get("inputs") if isinstance(spec, YMap) else None
    return ins if isinstance(ins, YMap) else YMap()


def _template(value: Any, path: str, line: int, out: Workflows) -> gx.Template:
    if value is None:
        return ("",)
    if value is True or value is False:
        return ("true" if value else "false",)
    if not isinstance(value, str):
        return (str(value),)
    for message in gx.parse_errors(value):
        out.errors.append((path, line, message))
    return gx.parse_template(value)


def _env_block(block: Any, path: str, origin: str, out: Workflows) -> dict[str, EnvVar]:
    env: dict[str, EnvVar] = {}
    if not isinstance(block, YMap):
        return env
    for name, value in block.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        line = pos_of(block, name).line
        t = _template(value, path, line, out)
        ins = tuple(sorted({r[1] for r in gx.refs(t) if len(r) > 1 and r[0] == "inputs"}))
        env[name] = EnvVar(name, t, path, line, origin, ins)
    return env


def _with_env(env: Mapping[str, EnvVar], layer: dict[str, EnvVar]) -> dict[str, EnvVar]:
    """A layer's values may read the env of the layers above (``${{ env.EXP_NAME }}``)."""
    merged = dict(env)
    for name, var in layer.items():
        value = gx.substitute(var.value, lambda ref: _env_ref(ref, env))
        merged[name] = EnvVar(name, value, var.path, var.line, var.origin, var.inputs)
    return merged


def _env_ref(ref: tuple[str, ...], env: Mapping[str, EnvVar]) -> gx.Node | None:
    if len(ref) == 2 and ref[0] == "env":
        var = env.get(ref[1])
        if var is None:
            return gx.Lit(None)
        return _as_node(var.value)
    return None


def _as_node(t: gx.Template) -> gx.Node:
    """A template as one expression: ``format('{0}{1}', ...)`` of its parts."""
    if len(t) == 1 and not isinstance(t[0], str):
        return t[0]
    if all(isinstance(p, str) for p in t):
        return gx.Lit("".join(p for p in t if isinstance(p, str)))
    fmt = "".join(p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{%d}" % i
                  for i, p in enumerate(t))
    return gx.Call("format", (gx.Lit(fmt), *(p if not isinstance(p, str) else gx.Lit(p) for p in t)))


def _job_calls(path: str, doc: YMap, job_id: str, job: YMap, rx: re.Pattern[str],
               out: Workflows) -> list[LauncherCall]:
    steps = job.get("steps")
    if not isinstance(steps, YList):
        return []
    env = _env_block(doc.get("env"), path, "workflow", out)
    env = _with_env(env, _env_block(job.get("env"), path, "job", out))
    matrix, kind = _matrix(job)
    runs_on = job.get("runs-on")
    runner = _template(runs_on, path, pos_of(job, "runs-on").line, out) if isinstance(runs_on, str) else ()
    calls: list[LauncherCall] = []
    later: dict[str, EnvVar] = {}  # what earlier steps wrote to $GITHUB_ENV
    for index, step in enumerate(steps):
        if not isinstance(step, YMap):
            continue
        run = step.get("run")
        step_env = _with_env({**env, **later}, _env_block(step.get("env"), path, "step", out))
        if isinstance(run, str):
            base = text_line(step, "run")
            for m in rx.finditer(run):
                before = run[: m.start()]
                line = base + before.count("\n")
                here = dict(step_env)
                indent = _indent_at(run, m.start())
                for em in _EXPORT.finditer(before):
                    here[em.group(1)] = EnvVar(em.group(1), _export_value(before, em, indent), path,
                                               base + before[: em.start()].count("\n"), "run")
                prefix = m.group(1)
                launcher = None if "RUNNER_NAME" in prefix else m.group(0).removeprefix("./")
                calls.append(LauncherCall((Hop(path, job_id, key_pos(_jobs_map(doc), job_id).line),),
                                          str(step.get("name") or f"step {index + 1}"), path, line, launcher,
                                          here, kind, matrix, runner, (path,), triggers(doc)))
            for gm in _GITHUB_ENV.finditer(run):
                line = base + run[: gm.start()].count("\n")
                later[gm.group(1)] = EnvVar(gm.group(1), (UNKNOWN_NODE,), path, line, "github-env")
    return calls


def _indent_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[start:]).group(0)  # type: ignore[union-attr]


_PLAIN_VALUE = re.compile(r"([A-Za-z0-9_./:,+@%-]*)|\"([^\"$`\\]*)\"|'([^']*)'")


def _export_value(text: str, em: re.Match[str], indent: str) -> gx.Template:
    """``export X=true`` at the launcher line's own indentation (not inside an ``if``) with a
    plain value: that literal; anything else is set at run time."""
    end = text.find("\n", em.end())
    rest = text[em.end(): end if end >= 0 else len(text)].rstrip()
    pv = _PLAIN_VALUE.fullmatch(rest)
    if pv is None or _indent_at(text, em.start() + len(em.group(0)) - 1) != indent:
        return (UNKNOWN_NODE,)
    value = next(g for g in pv.groups() if g is not None) if any(g is not None for g in pv.groups()) else ""
    return (value,) if value else ()


def _jobs_map(doc: YMap) -> YMap:
    jobs = doc.get("jobs")
    return jobs if isinstance(jobs, YMap) else YMap()


def _matrix(job: YMap) -> tuple[tuple[str, ...], str]:
    """(the context path of a generated entry's fields, what the matrix is)."""
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, YMap) else None
    if isinstance(matrix, str) and _GENERATED.search(matrix):
        return ("matrix",), "generated"
    if isinstance(matrix, YMap):
        for key, value in matrix.items():
            if isinstance(value, str) and _GENERATED.search(value):
                # ``include: ${{ fromJson(...) }}``: each object's keys are matrix.<key>
                return ("matrix",) if key == "include" else ("matrix", str(key)), "generated"
    return (), "literal"


_GENERATED = re.compile(r"\$\{\{\s*fromjson\s*\(\s*needs\.[\w-]+\.outputs\.[\w-]+", re.I)


# ------------------------------------------------------------------ reusable workflows


def _through_callers(call: LauncherCall, path: str, docs: Mapping[str, YMap],
                     callers: Mapping[str, list[tuple[str, str, YMap]]], depth: int,
                     out: Workflows) -> list[LauncherCall]:
    """The call as each in-repo caller of its workflow makes it (recursively), or as it is
    when the workflow is a root (triggered by an event, or called from outside)."""
    doc = docs[path]
    events = triggers(doc)
    results: list[LauncherCall] = []
    out.work += 1
    if out.work > MAX_WORK or out.made >= MAX_CALLS:
        out.truncated = True
        return results
    own = [e for e in events if e != "workflow_call"]
    ins = inputs_of(doc)
    if own or "workflow_call" not in events:
        # a root: inputs are whatever the user dispatches (unknown), or the event's
        results.append(_bind_inputs(call, ins, None, path, out))
        out.made += 1
    if "workflow_call" in events:
        found = callers.get(path, [])
        if not found:
            kind = call.entries if call.entries == "generated" else "external"
            results.append(_bind_inputs(_replace(call, entries=kind), ins, None, path, out, external=True))
            out.made += 1
        elif depth < MAX_CALL_DEPTH:
            for caller_path, job_id, job in found:
                if out.made >= MAX_CALLS:
                    out.truncated = True
                    break
                caller_doc = docs[caller_path]
                bound = _bind_inputs(call, ins, job, caller_path, out)
                matrix, kind = _matrix(job)
                if call.entries == "generated":
                    matrix, kind = call.matrix, "generated"  # the callee's own generated matrix
                runs_on = job.get("runs-on")
                runner = _template(runs_on, caller_path, pos_of(job, "runs-on").line, out) \
                    if isinstance(runs_on, str) else call.runner
                if call.runner and not isinstance(runs_on, str):
                    runner = _subst_inputs(call.runner, ins, job, caller_path, out)
                hop = Hop(caller_path, job_id, key_pos(_jobs_map(caller_doc), job_id).line)
                passed = bound.passed
                with_ = job.get("with")
                if not passed and isinstance(with_, YMap):
                    passed = {str(k): (caller_path, pos_of(with_, str(k)).line) for k in with_}
                chained = _replace(bound, chain=(hop, *bound.chain), entries=kind, matrix=matrix, runner=runner,
                                   templates=(caller_path, *bound.templates), triggers=triggers(caller_doc),
                                   passed=passed)
                results.extend(_through_callers(chained, caller_path, docs, callers, depth + 1, out))
    return results


def _replace(call: LauncherCall, **changes: Any) -> LauncherCall:
    from dataclasses import replace

    return replace(call, **changes)


def _bind_inputs(call: LauncherCall, ins: YMap, caller: YMap | None, caller_path: str, out: Workflows,
                 external: bool = False) -> LauncherCall:
    env = {name: EnvVar(name, _subst_inputs(v.value, ins, caller, caller_path, out, external), v.path, v.line,
                        v.origin, v.inputs)
           for name, v in call.env.items()}
    runner = _subst_inputs(call.runner, ins, caller, caller_path, out, external) if call.runner else call.runner
    return _replace(call, env=env, runner=runner)


def _subst_inputs(t: gx.Template, ins: YMap, caller: YMap | None, caller_path: str, out: Workflows,
                  external: bool = False) -> gx.Template:
    passed = caller.get("with") if caller is not None else None
    passed = passed if isinstance(passed, YMap) else YMap()

    def resolve(ref: tuple[str, ...]) -> gx.Node | None:
        if len(ref) < 2 or ref[0] != "inputs":
            return None
        name = ref[1]
        if caller is None:
            if external:
                return gx.Ref(("external-inputs", *ref[1:]))
            return gx.Ref(("dispatch-inputs", *ref[1:]))
        if name in passed:
            line = pos_of(passed, name).line
            return _as_node(_template(passed[name], caller_path, line, out))
        spec = ins.get(name)
        if isinstance(spec, YMap) and "default" in spec:
            d = spec["default"]
            return gx.Lit(d if isinstance(d, (str, bool, float)) or d is None else str(d))
        typ = spec.get("type") if isinstance(spec, YMap) else None
        return gx.Lit(False if typ == "boolean" else 0.0 if typ == "number" else "")

    return gx.substitute(t, resolve)


def input_default(doc: YMap, name: str, event: str) -> Any:
    spec = inputs_of(doc, event).get(name)
    return spec.get("default") if isinstance(spec, YMap) else None


def where(call: LauncherCall) -> Mark:
    return Mark(call.line, 1)
