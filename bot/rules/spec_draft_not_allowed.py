"""spec-draft-not-allowed: a draft, method, track or acceptance setting the repo's speculator policy does not allow.

What it does:
    With a speculator policy (``.benchbot/speculators.yml``, or the path ``speculators:``
    names in ``.benchbot.yml``; read from the base in pull requests), looks at the server of
    every point that asks for speculative decoding, as ``serve`` reads it, and at the policy
    block of its model (the first whose glob matches the entry's ``model``, else the model
    the server starts). It reports, at the line that sets the value:

    - the speculator: a method (engine-neutral kind: ``mtp``, ``eagle3``, ``dspark``...) not
      in ``methods``; a draft checkpoint not in ``drafts`` (a local path matches by its last
      folder name); a draft on a ``main`` track (native MTP only) or native MTP on a
      ``spec`` track (external drafts);
    - synthetic acceptance (vLLM ``rejection_sample_method: synthetic``, SGLang
      ``SGLANG_SIMULATE_ACC_LEN``, TRT-LLM ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``)
      where the block says ``synthetic: never``; where it says ``benchmark``, an accuracy
      eval that still uses it: the eval-only run (``EVAL_ONLY=true``) of a script that
      reads ``EVAL_ONLY``, or, in a script that does not, ``run_eval`` against the same
      server.

    The workers of a multinode recipe are judged like a server (their eval runs are not
    read). What a block does not say is not judged; a model without a block, or a repo
    without a policy, is not judged at all. The policy's format: docs/speculators.md.

Why is this bad?
    A speculative number is comparable across submissions only when the speculator is fixed
    per model: other draft weights or another algorithm measure another system, and a draft
    on the native-MTP track mixes the two tracks. Synthetic acceptance forces the accepted
    token count: fine for a throughput run the policy allows it in, meaningless (outputs
    are not the model's) in an accuracy eval.

Example:
    ```yaml
    # file: .benchbot/speculators.yml
    models:
      - model: "*Kimi-K2.5*"
        track: spec
        methods: [eagle3]
        drafts: [nvidia/Kimi-K2.5-Thinking-Eagle3, lightseekorg/kimi-k2.5-eagle3-mla]
    ```

Fix:
    Use a draft and method the policy lists for the model, or change the policy (on the
    default branch, reviewed on its own) when the repo decides to allow another one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site, eval_site
from bot.repo.facts import Facts
from bot.repo.load.speculators import ModelPolicy, SpecPolicy
from bot.rules import _spec
from bot.serve.model import MARK, Command
from bot.settings import Config

ID = "spec-draft-not-allowed"
CODE = "BB208"
SEVERITY = Severity.WARNING
SUMMARY = "a draft model, method, track or acceptance setting the repo's speculator policy does not allow"

# Environment variables that force the accepted-token count (synthetic acceptance)
SYNTHETIC_ENV = ("SGLANG_SIMULATE_ACC_LEN", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS")
_EVAL_CALL = re.compile(r"^\s*[^#\n]*\brun_eval\b", re.M)
_EVAL_ONLY = re.compile(r"^[^#\n]*\bEVAL_ONLY\b", re.M)
_SYNTHETIC_TEXT = re.compile(r"rejection_sample_method\W+synthetic")


@dataclass(frozen=True)
class Problem:
    kind: str  # "speculator" | "synthetic" | "synthetic-eval"
    path: str
    line: int
    text: str  # what breaks the policy, one clause
    block: ModelPolicy
    subject: str = ""  # what it is about, stable (method and draft, or how acceptance is forced)


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    policy = conf.speculators
    if policy is None or not policy.models:
        return
    found: dict[tuple[str, str, str], tuple[Problem, list[Site]]] = {}
    for site in _spec.judged(facts):
        if site.wanted == "none":
            continue
        for problem in _problems(facts, site, policy):
            # one finding per cause: the same draft (or synthetic setting) in two branches of a script is one
            key = (problem.kind, problem.path, problem.subject)
            found.setdefault(key, (problem, []))[1].append(site)
    for problem, sites in found.values():
        yield _finding(problem, sites, policy)


def _block(site: Site, cmd: Command, policy: SpecPolicy) -> ModelPolicy | None:
    model = site.entry.fields.get("model")
    block = policy.for_model(str(model)) if isinstance(model, str) and model else None
    if block is None and cmd.model and MARK not in cmd.model:
        block = policy.for_model(cmd.model)
    return block


def _problems(facts: Facts, site: Site, policy: SpecPolicy) -> list[Problem]:
    out: dict[str, Problem] = {}  # kind -> the first of the site's servers
    for _, cmd in site.servers:
        block = _block(site, cmd, policy) if cmd.spec is not None else None
        if block is None or cmd.spec is None:
            continue
        reasons = _speculator(cmd.spec, block)
        if reasons and "speculator" not in out:
            path, line = _spec.spec_at(cmd) or _spec.command_at(cmd, site)
            draft = str(cmd.spec.get("draft_model") or "")
            if draft and any("draft" in r for r in reasons):
                path, line = _spec.setting_at(cmd, "speculative_draft_model_path", "draft_model") or (path, line)
                name = draft.rstrip("/").rsplit("/", 1)[-1]
                line = _written_at(facts, path, re.compile(re.escape(draft)), 0) or \
                    _written_at(facts, path, re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])"), line)
            # the draft by its name: a local copy of it (``/data/models/<name>``) is the same draft
            subject = f"{cmd.spec.get('kind')}:{draft.rstrip('/').rsplit('/', 1)[-1].lower()}"
            out["speculator"] = Problem("speculator", path, line, "; ".join(reasons), block, subject)
        how = _synthetic(cmd)
        if how is None or "synthetic" not in block.says or block.synthetic == "always":
            continue
        if block.synthetic == "never" and "synthetic" not in out:
            path, line = _synthetic_at(facts, site, cmd, how[1])
            out["synthetic"] = Problem("synthetic", path, line, how[0], block, how[1] or "synthetic")
        elif block.synthetic == "benchmark" and "synthetic-eval" not in out:
            got = _in_evals(facts, site, block)
            if got is not None:
                out["synthetic-eval"] = got
    return list(out.values())


def _speculator(spec: Mapping[str, object], block: ModelPolicy) -> list[str]:
    """What about the method, draft and track breaks the block (one clause each)."""
    kind = str(spec.get("kind") or "").lower()
    draft = spec.get("draft_model")
    draft = str(draft) if draft and MARK not in str(draft) else ""
    out: list[str] = []
    if "methods" in block.says and kind and kind not in block.methods:
        allowed = ", ".join(block.methods) or "none"
        out.append(f"method {kind} is not an allowed method ({allowed}, policy line {block.line_of('methods')})")
    if "drafts" in block.says and draft and not block.allows_draft(draft):
        allowed = ", ".join(block.drafts) if block.drafts else "no external draft"
        out.append(f"draft {draft} is not an allowed draft ({allowed}, policy line {block.line_of('drafts')})")
    if block.track == "main" and (draft or (kind and kind != "mtp")):
        what = f"draft {draft}" if draft else f"method {kind}"
        out.append(f"the {what} is an external speculator on the main track, which is for native MTP only "
                   f"(policy line {block.line_of('track')})")
    elif block.track == "spec" and kind == "mtp" and not draft:
        out.append(f"native MTP on the spec track, which is for external drafts (policy line {block.line_of('track')})")
    return out


def _synthetic(cmd: Command) -> tuple[str, str] | None:
    """(how the server forces acceptance, the source key or env name), None when it does not."""
    spec = cmd.spec or {}
    if str(spec.get("rejection_sample_method") or "").lower() == "synthetic":
        value = spec.get("synthetic_acceptance_length") or spec.get("synthetic_acceptance_rate")
        shown = f", {value}" if value is not None else ""
        return f"rejection_sample_method: synthetic{shown}", ""
    for name in SYNTHETIC_ENV:
        value = cmd.env.get(name)
        if value is not None and value.strip() not in ("", "0"):
            return f"{name}={value}", name
    return None


def _synthetic_at(facts: Facts, site: Site, cmd: Command, env_name: str) -> tuple[str, int]:
    """The line that turns synthetic acceptance on: the spec config, or the env var's assignment."""
    if not env_name:
        path, line = _spec.spec_at(cmd) or _spec.command_at(cmd, site)
        spec = cmd.spec or {}
        value = spec.get("synthetic_acceptance_length") or spec.get("synthetic_acceptance_rate")
        pat = _SYNTHETIC_TEXT if value is None else \
            re.compile(rf"{_SYNTHETIC_TEXT.pattern}.*\W{re.escape(str(value))}(?![0-9])")
        return path, _written_at(facts, path, pat, line)
    where = site.script or site.recipe
    text = facts.tree.text(where) if where else None
    if where and text:
        pat = re.compile(rf"^[^#\n]*(?<![A-Za-z0-9_]){re.escape(env_name)}\s*[=:]")
        for i, raw in enumerate(text.splitlines(), 1):
            if pat.match(raw):
                return where, i
    return _spec.command_at(cmd, site)


def _written_at(facts: Facts, path: str, pattern: re.Pattern[str], line: int) -> int:
    """The one line of ``path`` (comments aside) that writes a value the command got at ``line``
    (a flag whose value is a variable, ``--speculative-config "$SPEC_CONFIG"``, points at the
    variable's assignment); ``line`` when none or several do."""
    text = facts.tree.text(path) or ""
    hits = [i for i, raw in enumerate(text.splitlines(), 1)
            if pattern.search(raw) and not raw.lstrip().startswith("#")]
    return hits[0] if len(hits) == 1 else line


def _in_evals(facts: Facts, site: Site, block: ModelPolicy) -> Problem | None:
    """Synthetic acceptance in an accuracy eval of a script whose policy allows it in benchmark
    runs only: its eval-only run (``EVAL_ONLY=true``) when the script reads EVAL_ONLY, else
    ``run_eval`` against the same server."""
    if site.script is None:
        return None
    text = facts.tree.text(site.script) or ""
    if _EVAL_ONLY.search(text):
        evaluated = _eval_run(facts, site)
        if evaluated is None:
            return None
        for _, cmd in evaluated.servers:
            how = _synthetic(cmd)
            if how is not None:
                path, line = _synthetic_at(facts, evaluated, cmd, how[1])
                return Problem("synthetic-eval", path, line, f"eval-only runs (EVAL_ONLY=true) still use {how[0]}",
                               block, how[1] or "synthetic")
        return None
    call = _EVAL_CALL.search(text)
    how = _synthetic(site.servers[0][1]) if site.servers else None
    if call is None or how is None:
        return None
    path, line = _synthetic_at(facts, site, site.servers[0][1], how[1])
    eval_line = text.count("\n", 0, call.start()) + 1
    return Problem("synthetic-eval", path, line,
                   f"the accuracy eval (run_eval, line {eval_line}) runs against the same server, with {how[0]}", block,
                   how[1] or "synthetic")


def _eval_run(facts: Facts, site: Site) -> Site | None:
    """The site's eval-only run, for a script that reads ``EVAL_ONLY`` (made once per site,
    only for sites that use synthetic acceptance: ``specview.eval_site`` with ``always``)."""
    return eval_site(facts, site, always=True)


def _finding(problem: Problem, sites: list[Site], policy: SpecPolicy) -> Finding:
    entries = tuple(dict.fromkeys(s.entry.name for s in sites))
    names = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more entries"
    block = problem.block
    points = _spec.sites_text(sites, 3)
    if problem.kind == "speculator":
        msg = (f"{names} ({points}): the speculator breaks the policy for {block.pattern}: {problem.text}; the "
               "number measures a speculator the repo has not fixed for this model, not comparable with the others")
    elif problem.kind == "synthetic":
        msg = (f"{names} ({points}): the server uses synthetic acceptance ({problem.text}), which the policy for "
               f"{block.pattern} forbids (synthetic: never, policy line {block.line_of('synthetic')}): the number "
               "rests on a forced acceptance rate, not the model's")
    else:
        msg = (f"{names} ({points}): {problem.text}, while the policy for {block.pattern} allows synthetic "
               f"acceptance in benchmark runs only (synthetic: benchmark, policy line {block.line_of('synthetic')}): "
               "forced acceptance overwrites the verifier's result, so the eval does not measure the model")
    related = [Related(policy.path, block.line, f"policy block for {block.pattern}")]
    seen: set[tuple[str, int]] = set()
    for s in sites:
        path, line, _ = _spec.point_at(s.entry, s.point)
        if (path, line) not in seen:
            seen.add((path, line))
            related.append(Related(path, line, f"{s.entry.name}: spec-decoding: {s.wanted}"))
    return Finding(ID, CODE, SEVERITY, problem.path, problem.line, 1, msg, tuple(related[:8]), entries,
                   key=f"{problem.path}|{problem.kind}|{block.pattern}|{problem.subject}")
