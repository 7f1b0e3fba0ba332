"""spec-client-args: the benchmark client of a speculative run lacks the arguments the repo requires.

What it does:
    For every point that asks for speculative decoding (``spec-decoding`` other than
    ``none``), reads the benchmark script the point really runs (the one its launcher
    dispatches) and finds the calls of each benchmark client the repo names, in the script
    and in the functions it defines. A call passes when each required group has one of its
    arguments among the call's words, or in what a word expands (``"${CLIENT_ARGS[@]}"``,
    ``$CHAT_FLAG``: any assignment of that variable in the script, or its value in the
    environment the script gets), or in a variable the client runs besides its words
    (``REPLAY_CMD+=" --apply-chat-template"``). A call that no required argument can reach
    is reported at its line, once per script and call, naming the entries and points.

    The requirement is the profile's default, InferenceX's rule: ``run_benchmark_serving``
    gets ``--use-chat-template`` or ``--dsv4`` (which implies it). The speculator policy's
    ``client-args`` (``.benchbot/speculators.yml``) replace it client by client, or add
    clients (the agentic replay's ``--apply-chat-template``: docs/speculators.md). A script
    with no call of a named client is not judged, nor is a multinode entry handed to a job
    tool (its client is the tool's).

Why is this bad?
    Draft heads are trained on chat-formatted text. A client that sends raw random prompts
    measures an acceptance rate real traffic never sees (usually lower), so the speculative
    number is not comparable with other submissions; InferenceX's AGENTS.md: "Every
    ``*_mtp.sh`` passes ``--use-chat-template`` to ``run_benchmark_serving``".

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    # Kimi-K2.5 INT4 on MI300X with vLLM and an EAGLE3 draft model (spec-decoding: mtp).
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    SPEC_CONFIG='{"method": "eagle3", "model": "lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens": 3}'
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --speculative-config "$SPEC_CONFIG" > server.log 2>&1 &
    wait_for_server 8888
    run_benchmark_serving --model "$MODEL" --port 8888 --input-len "$ISL" --output-len "$OSL" \\
        --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME"
    ```

Fix:
    Pass the argument to the client call (``--use-chat-template``), or, when the repo's
    rule differs, set ``client-args`` in the speculator policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site
from bot.repo.facts import Facts
from bot.repo.load.speculators import client_requirements
from bot.rules import _spec
from bot.serve.model import MARK
from bot.settings import Config
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val, render

ID = "spec-client-args"
CODE = "BB207"
SEVERITY = Severity.ERROR
SUMMARY = "the benchmark client of a speculative run lacks the arguments the repo requires"

_POSITIONAL = re.compile(r"^(?:[@*]|[1-9][0-9]*)$")
MAX_DEPTH = 4  # wrapper functions followed from a client call that forwards "$@"


@dataclass(frozen=True)
class Call:
    """One call of a benchmark client: its words, and those of the wrapper calls that forward to it."""

    client: str
    line: int
    nth: int  # among the script's calls of this client (for the stable subject)
    words: tuple[ir.Word, ...]
    via: str = ""  # the function whose call this is, when the client call forwards its arguments
    client_line: int = 0  # of the client call itself


@dataclass(frozen=True)
class Shape:
    """What a script says about its client calls (made once per script)."""

    calls: tuple[Call, ...]
    # variable -> the values assigned to it: (an array, its elements) or (a scalar, (its word,))
    assigns: Mapping[str, tuple[tuple[bool, tuple[ir.Word, ...]], ...]]


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    reqs = client_requirements(facts.profile.spec_client_args, facts.profile.spec_client_reads, conf.speculators)
    if not reqs:
        return
    shapes: dict[str, Shape | None] = {}
    found: dict[tuple[str, str, int], tuple[Call, list[tuple[str, ...]], list[Site]]] = {}
    for site in _spec.judged(facts):
        if site.wanted == "none" or site.script is None:
            continue
        if site.script not in shapes:
            parsed = facts.script(site.script)
            shapes[site.script] = _shape(parsed, frozenset(reqs)) if parsed is not None else None
        shape = shapes[site.script]
        if shape is None:
            continue
        for call in shape.calls:
            groups, reads, _ = reqs[call.client]
            missing = [g for g in groups if not _reaches(g, call.words, reads, shape, site.env)]
            if missing:
                key = (site.script, call.client, call.nth)
                if key not in found:
                    found[key] = (call, missing, [])
                found[key][2].append(site)
    for (script, client, nth), (call, missing, sites) in found.items():
        yield _finding(script, client, nth, call, missing, sites, reqs[client][2], conf)


def _finding(script: str, client: str, nth: int, call: Call, missing: list[tuple[str, ...]], sites: list[Site],
             source: str, conf: Config) -> Finding:
    entries = tuple(dict.fromkeys(s.entry.name for s in sites))
    names = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more entries"
    wanted = "/".join(dict.fromkeys(s.wanted for s in sites))
    lacks = "; ".join(_group_text(g) for g in missing)
    chat = any("chat-template" in a or a == "--dsv4" for g in missing for a in g)
    why = ("the client sends raw prompts, not chat-formatted ones, so the acceptance rate (and the speculative "
           "number) is not what chat traffic gets" if chat else "the speculative run is not measured the way the "
           "repo requires")
    what = (f"the call of {call.via} here (it runs {client}, line {call.client_line})" if call.via
            else f"the {client} call here")
    msg = (f"{names}: spec-decoding: {wanted} ({_spec.sites_text(sites, 3)}), but {what} passes {lacks}, which "
           f"{source} requires in speculative runs: {why}")
    related: list[Related] = []
    policy = conf.speculators
    if policy is not None and policy.client_args is not None and client in policy.client_args:
        related.append(Related(policy.path, 1, f"the requirement: client-args of {client}"))
    seen: set[tuple[str, int]] = set()
    for s in sites:
        path, line, _ = _spec.point_at(s.entry, s.point)
        if (path, line) not in seen:
            seen.add((path, line))
            related.append(Related(path, line, f"{s.entry.name}: spec-decoding: {s.wanted}"))
    return Finding(ID, CODE, SEVERITY, script, call.line, 1, msg, tuple(related[:8]), entries,
                   key=f"{script}|{client}#{nth}")


def _group_text(group: tuple[str, ...]) -> str:
    return f"no {group[0]}" if len(group) == 1 else f"none of {', '.join(group)}"


# ------------------------------------------------------------------ reading the script

def _shape(script: ir.Script, clients: frozenset[str]) -> Shape:
    """The script's client calls (a call inside a function that forwards its arguments,
    ``"$@"``, stands for the calls of that function) and every assignment it makes."""
    assigns: dict[str, list[tuple[bool, tuple[ir.Word, ...]]]] = {}
    direct: list[tuple[str, ir.Command, str | None]] = []  # (client, command, enclosing function)
    by_name: dict[str, list[ir.Command]] = {}
    for node, func in _walk(script.body, None):
        if isinstance(node, (ir.Command, ir.Decl)):
            for a in node.assigns:
                value = a.array if a.array is not None else ((a.value,) if a.value is not None else ())
                assigns.setdefault(a.name.split("[", 1)[0], []).append((a.array is not None, value))
        if isinstance(node, ir.Command) and node.words:
            name = node.words[0].literal()
            if name is None:
                continue
            by_name.setdefault(name, []).append(node)
            if name in clients:
                direct.append((name, node, func))
    calls: list[Call] = []
    counts: dict[str, int] = {}
    for client, cmd, func in direct:
        for line, words, via in _forwarded(cmd, func, by_name, script):
            counts[client] = counts.get(client, 0) + 1
            calls.append(Call(client, line, counts[client], words, via, cmd.pos.line))
    return Shape(tuple(calls), {k: tuple(v) for k, v in assigns.items()})


def _forwarded(cmd: ir.Command, func: str | None, by_name: Mapping[str, list[ir.Command]],
               script: ir.Script, depth: int = 0) -> list[tuple[int, tuple[ir.Word, ...], str]]:
    """(line, words, function called there) of a client call; when it forwards its function's
    arguments, of each call of that function instead (with the words of both). A function
    never called here: none."""
    words = cmd.words[1:]
    if func is None or depth >= MAX_DEPTH or not any(_forwards(w) for w in words):
        return [(cmd.pos.line, words, "")]
    out: list[tuple[int, tuple[ir.Word, ...], str]] = []
    for caller in by_name.get(func, ()):
        outer = _enclosing(script.body, caller)
        for line, more, via in _forwarded(caller, outer, by_name, script, depth + 1):
            out.append((line, words + more, via or func))
    return out


def _forwards(word: ir.Word) -> bool:
    return any(isinstance(p, ir.Param) and _POSITIONAL.match(p.name) for p in word.parts)


def _enclosing(body: tuple[ir.Stmt, ...], target: ir.Command) -> str | None:
    return next((f for node, f in _walk(body, None) if node is target), None)


def _walk(stmts: tuple[ir.Stmt, ...] | list[ir.Stmt], func: str | None) -> Iterator[tuple[object, str | None]]:
    """Every statement, with the name of the function it is defined in (None: top level)."""
    for s in stmts:
        yield s, func
        if isinstance(s, ir.If):
            for cond, body in s.clauses:
                yield from _walk(cond, func)
                yield from _walk(body, func)
            yield from _walk(s.else_body or (), func)
        elif isinstance(s, ir.Case):
            for _, body in s.items:
                yield from _walk(body, func)
        elif isinstance(s, ir.AndOr):
            yield from _walk([s.first, *(r for _, r in s.rest)], func)
        elif isinstance(s, ir.Pipeline):
            yield from _walk(s.cmds, func)
        elif isinstance(s, (ir.For, ir.While)):
            yield from _walk(s.body, func)
            if isinstance(s, ir.While):
                yield from _walk(s.cond, func)
        elif isinstance(s, ir.Group):
            yield from _walk(s.body, func)
        elif isinstance(s, ir.FuncDef):
            yield from _walk(s.body, s.name)


# ------------------------------------------------------------------ what reaches a call

_ANY = "\0any"  # a value the repository cannot know: any argument may be in it


def _reaches(group: tuple[str, ...], words: tuple[ir.Word, ...], reads: tuple[str, ...], shape: Shape,
             env: Mapping[str, Val]) -> bool:
    """Whether one of ``group`` is among the words, or in what they (or ``reads``) expand."""
    tokens: set[str] = set()
    seen: set[tuple[str, bool]] = set()
    for w in words:
        _word_tokens(w, shape, env, tokens, seen, False)
    for name in reads:
        _var_tokens(name, shape, env, tokens, seen, False)
    return _ANY in tokens or any(a in tokens for a in group)


def _word_tokens(word: ir.Word, shape: Shape, env: Mapping[str, Val], out: set[str], seen: set[tuple[str, bool]],
                 single: bool) -> None:
    """The arguments a word may give. ``single``: the word is one argument whatever it expands
    to (quoted): with text of its own (``"$DIR/x"``) nothing it expands can be a bare argument,
    so what the repository cannot know there (``DIR=$(pwd)``) cannot be one either."""
    own = any(isinstance(p, ir.Lit) and p.text.strip() for p in word.parts)
    for part in word.parts:
        if isinstance(part, ir.Lit):
            _split(part.text, out)
        elif isinstance(part, ir.Param):
            if _POSITIONAL.match(part.name):
                continue  # forwarded arguments: the calls of the function are judged instead
            one = single or (part.quoted and part.index not in ("@", "*"))
            if one and own:
                continue
            if part.op in ("+", ":+", "-", ":-", "=", ":=") and part.arg is not None:
                _word_tokens(part.arg, shape, env, out, seen, one)
            if part.op not in ("+", ":+", "len"):
                _var_tokens(part.name, shape, env, out, seen, one)
        elif isinstance(part, ir.CmdSub) and not ((single or part.quoted) and own):
            out.add(_ANY)


def _var_tokens(name: str, shape: Shape, env: Mapping[str, Val], out: set[str], seen: set[tuple[str, bool]],
                single: bool) -> None:
    """Every argument a variable may hold: what the script assigns to it and the known words of
    its value in the environment the script gets (what the repo cannot know, ``RESULT_FILENAME``
    from the workflow, is no argument the repo chose)."""
    if (name, single) in seen:
        return
    seen.add((name, single))
    for is_array, value in shape.assigns.get(name, ()):
        for w in value:
            quoted = all(getattr(p, "quoted", False) for p in w.parts)
            _word_tokens(w, shape, env, out, seen, quoted if is_array else single)
    if name in env:
        _split(render(env[name], MARK), out)


def _split(text: str, out: set[str]) -> None:
    for tok in text.split():
        tok = tok.strip("'\"")
        if MARK in tok:
            continue
        out.add(tok)
        if "=" in tok:
            out.add(tok.split("=", 1)[0])
