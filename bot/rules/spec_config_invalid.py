"""spec-config-invalid: a speculative config the engine would reject or misread.

What it does:
    Reads the speculative settings of every server a point's script starts (as ``serve``
    reads them, ``bot.launches.specview``) and holds them against what the engine version in the
    entry's ``image`` accepts. The method names, config keys and requirements come from shipped
    tables (``bot/serve/tables/spec_methods.json``), each read from a named file of the engine
    at a named tag; an image whose tag names no version (``nightly-<sha>``) is judged by the
    newest table. Reported, at the line that sets the value:

    - vLLM: ``--speculative-config`` JSON that does not parse after shell unquoting (or is not
      an object); a ``method`` the version does not know (``deepseek_mtp``, ``qwen3_5_mtp``
      and the other ``*_mtp`` names are deprecated aliases of ``mtp``, not errors); a key
      its ``SpeculativeConfig`` does not have (the config forbids unknown keys); a
      ``rejection_sample_method`` / ``draft_sample_method`` value it does not know; neither
      ``method`` nor ``model``; ``eagle``, ``eagle3``, ``dflash``, ``draft_model`` (and the
      other draft methods) without a draft ``model``; no ``num_speculative_tokens`` without a
      ``model``. vLLM takes the token count from a draft model's config (``n_predict``, the
      MTP layers of ``{"method": "mtp", "model": <the target>}``), and ``suffix`` has a
      default, so those are not reported; without ``model`` every version in the tables
      (0.14.1 to 0.34.0) refuses to start. ``dspark`` without ``model`` is not reported: from
      0.25.1 vLLM reads DeepSeek DSpark weights from the target checkpoint.
    - SGLang: an unknown ``--speculative-algorithm`` (NEXTN is EAGLE; from 0.5.12 a plugin may
      register more names, none ships in the image); ``--speculative-num-draft-tokens`` other
      than steps + 1 with ``--speculative-eagle-topk 1`` (SGLang logs a warning and sets it to
      steps + 1); topk or draft tokens without ``--speculative-num-steps`` (an assertion);
      EAGLE3, STANDALONE or DFLASH without ``--speculative-draft-model-path``.
    - TRT-LLM: ``speculative_config`` (in the ``--extra_llm_api_options`` file) with an
      unknown or missing ``decoding_type``; ``Eagle``/``Eagle3``/``Draft_Target`` without
      ``speculative_model``; a draft-length method without ``max_draft_len``.

    ATOM is not judged (its argument parser was not read). One finding per setting, naming
    the entries and points it stands for.

Why is this bad?
    The server either refuses to start (the points produce no number, or a stale one) or
    runs with settings other than the ones the script shows, and the published MTP number
    describes a configuration nobody asked for.

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --speculative-config '{"method": "eagle3", "num_speculative_tokens": 3}' > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Write the config the engine version accepts: close the JSON (an escaped-quote variable is
    easiest checked with ``echo "$SPEC_CONFIG" | python3 -m json.tool``), use a method name of
    that version, give the draft ``model`` and ``num_speculative_tokens``, set SGLang's draft
    tokens to steps + 1, use a TRT-LLM ``decoding_type`` such as ``MTP`` or ``Eagle3``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site
from bot.repo.facts import Facts
from bot.rules import _spec
from bot.serve import specdata
from bot.serve.model import MARK, Command
from bot.settings import Config

ID = "spec-config-invalid"
CODE = "BB203"
SEVERITY = Severity.ERROR
SUMMARY = "a speculative config the engine would reject or misread"

_NOT_JSON = re.compile(r"^speculative_config: not JSON: (.*) at (\S+:\d+)$")
_SGLANG_TOKENS = ("speculative_eagle_topk", "speculative_num_draft_tokens")
# where SGLang handles the eagle family's step/topk/draft-token arguments
_SGLANG_EAGLE = "sgl-project/sglang python/sglang/srt/server_args.py, from v0.5.14 arg_groups/speculative_hook.py"

_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|local\s+|declare\s+\S*\s*)?[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")

Problem = tuple[str, int, str, str]  # path, line, stable kind, text


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    groups: dict[tuple[str, int, str], list[tuple[Site, str]]] = {}  # (path, line, text) -> (site, kind)
    for site in _spec.judged(facts):
        image = site.entry.fields.get("image")
        for role, cmd in site.servers:
            tables = specdata.methods_for(cmd.engine, image if isinstance(image, str) else None)
            if tables is None:
                continue
            for path, line, kind, text in _problems(facts, site, cmd, tables):
                prefix = f"{role} worker: " if site.script is None else ""
                groups.setdefault((path, line, prefix + text), []).append((site, kind))
    for (path, line, text), found in groups.items():
        yield _finding(path, line, text, found)


def _finding(path: str, line: int, text: str, found: list[tuple[Site, str]]) -> Finding:
    sites = [s for s, _ in found]
    entries = tuple(dict.fromkeys(s.entry.name for s in sites))
    per_entry = []
    for name in entries[:3]:
        mine = [s for s in sites if s.entry.name == name]
        per_entry.append(f"{name} ({_spec.sites_text(mine, 3)})")
    more = f" and {len(entries) - 3} more entries" if len(entries) > 3 else ""
    msg = f"{'; '.join(per_entry)}{more}: {text}"
    related = [Related(*_spec.point_at(s.entry, p)[:2], f"{s.entry.name}: spec-decoding: {s.wanted}")
               for s in sites for p in s.points[:1]]
    key = f"{path}|{found[0][1]}|{entries[0]}"
    return Finding(ID, CODE, SEVERITY, path, line, 1, msg, tuple(dict.fromkeys(related))[:8], entries, key=key)


def _problems(facts: Facts, site: Site, cmd: Command, tables: specdata.EngineMethods) -> list[Problem]:
    if cmd.engine == "vllm":
        return _vllm(facts, cmd, tables)
    if cmd.engine == "sglang":
        return _sglang(cmd, tables)
    if cmd.engine == "trtllm":
        return _trtllm(facts, cmd, tables)
    return []


def _at(cmd: Command, *keys: str) -> tuple[str, int] | None:
    return _spec.setting_at(cmd, *keys)


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and MARK in value)


def _vllm(facts: Facts, cmd: Command, t: specdata.EngineMethods) -> list[Problem]:
    out: list[Problem] = []
    for reason in cmd.unknown:
        m = _NOT_JSON.match(reason)
        got = _spec.split_src(m.group(2)) if m else None
        if m is not None and got is not None:
            out.append((*got, "json", f"the --speculative-config value does not parse as JSON after shell unquoting "
                                      f"({m.group(1)}): {t.basis} refuses to start"))
    sc = cmd.args.get("speculative_config")
    at = _at(cmd, "speculative_config")
    if at is None or "speculative_config" not in cmd.args or out:
        return out
    if not isinstance(sc, Mapping):
        if sc is not None and not (isinstance(sc, str) and MARK in sc):  # None: unknown (a reason says why)
            shown = sc if isinstance(sc, str) else type(sc).__name__
            out.append((*at, "json", f"the --speculative-config value is not a JSON object ({shown!r}): "
                                     f"{t.basis} refuses to start"))
        return out
    problems = _vllm_config(sc, t)
    if problems:
        where = value_line(facts, at, next(iter(sc), "{"))
        out.append((*where, problems[0][0], "; ".join(p for _, p in problems) + f" ({_basis(t)})"))
    return out


def _basis(t: specdata.EngineMethods) -> str:
    return f"{t.basis}: {t.sources}"


def _vllm_config(sc: Mapping[str, Any], t: specdata.EngineMethods) -> list[tuple[str, str]]:
    """(kind, text) per problem of one speculative_config object."""
    out: list[tuple[str, str]] = []
    method, model = sc.get("method"), sc.get("model")
    has_model = "model" in sc and (model is None or _known(model))  # unknown value: given
    if isinstance(method, str) and not t.known(method):
        out.append(("method", f"vLLM does not know the speculative method {method!r} "
                              f"(it knows {t.methods_text()})"))
        return out
    name = t.canonical(method) if isinstance(method, str) else None
    if "method" not in sc and "model" not in sc:
        out.append(("method", "the config names neither a 'method' nor a draft 'model'"))
    elif name is not None and t.needs_model(name) and not has_model:
        out.append(("model", f"method {method!r} needs its draft checkpoint in 'model', and the config has none"))
    if "num_speculative_tokens" not in sc and not has_model and not (name and t.tokens_default(name)):
        out.append(("tokens", "'num_speculative_tokens' is missing: vLLM takes it from a draft model's config "
                              "only, and there is no 'model'"))
    tokens = sc.get("num_speculative_tokens")
    if _known(tokens) and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0):
        out.append(("tokens", f"num_speculative_tokens {tokens!r} is not a positive integer"))
    unknown = t.unknown_keys(k for k in sc if MARK not in k)
    if unknown:
        out.append(("key", f"{t.name} has no speculative_config key {', '.join(repr(k) for k in unknown)} "
                           "(it forbids unknown keys)"))
    for key in ("rejection_sample_method", "draft_sample_method"):
        value = sc.get(key)
        if isinstance(value, str) and MARK not in value:
            allowed = t.bad_value(key, value)
            if allowed is not None:
                out.append(("value", f"{key} {value!r} is not one of {', '.join(allowed)}"))
    return out


def _sglang(cmd: Command, t: specdata.EngineMethods) -> list[Problem]:
    out: list[Problem] = []
    args = cmd.args
    alg = args.get("speculative_algorithm")
    if not isinstance(alg, str) or not _known(alg):
        return out
    at = _at(cmd, "speculative_algorithm")
    if at is None:
        return out
    if not t.known(alg):
        out.append((*at, "method", f"SGLang does not know --speculative-algorithm {alg} (it knows "
                                   f"{t.methods_text()}) ({_basis(t)})"))
        return out
    name = t.canonical(alg)
    draft = args.get("speculative_draft_model_path")
    if t.needs_model(name) and draft is None and "speculative_draft_model_path" not in args:
        out.append((*at, "model", f"--speculative-algorithm {alg} needs --speculative-draft-model-path, and the "
                                  f"command has none: SGLang has no draft to load ({_basis(t)})"))
    if not t.eagle_family(alg) or args.get("speculative_adaptive") is True:
        return out
    steps, topk, drafts = (args.get(k) for k in ("speculative_num_steps", *_SGLANG_TOKENS))
    if "speculative_num_steps" not in args and any(k in args for k in _SGLANG_TOKENS):
        where = _at(cmd, *_SGLANG_TOKENS) or at
        out.append((*where, "steps", "--speculative-eagle-topk / --speculative-num-draft-tokens without "
                                     "--speculative-num-steps: SGLang asserts that all three are given or none "
                                     f"(it chooses them itself) and refuses to start ({t.basis}: {_SGLANG_EAGLE})"))
    elif (isinstance(steps, int) and isinstance(drafts, int) and topk == 1 and not isinstance(topk, bool)
          and drafts != steps + 1):
        where = _at(cmd, "speculative_num_draft_tokens") or at
        out.append((*where, "draft-tokens", f"--speculative-num-draft-tokens {drafts} with "
                                            f"--speculative-num-steps {steps} and --speculative-eagle-topk 1: SGLang "
                                            f"replaces it with steps + 1 = {steps + 1} (a warning in the log), so the "
                                            f"server does not run with the {drafts} the script shows "
                                            f"({t.basis}: {_SGLANG_EAGLE})"))
    return out


def _trtllm(facts: Facts, cmd: Command, t: specdata.EngineMethods) -> list[Problem]:
    sc = cmd.args.get("speculative_config")
    at = _at(cmd, "speculative_config")
    if at is None or "speculative_config" not in cmd.args:
        return []
    if not isinstance(sc, Mapping):
        if sc is None:
            return []  # unknown (a MARK in the file): nothing to judge
        return [(*at, "config", f"speculative_config is not a mapping ({type(sc).__name__}): {t.basis} rejects it")]
    dtype = sc.get("decoding_type")
    where = yaml_line(facts, at, "decoding_type")
    if "decoding_type" not in sc:
        return [(*at, "method", "speculative_config has no decoding_type: TRT-LLM cannot tell which speculative "
                                f"method to build and rejects it ({_basis(t)})")]
    if not isinstance(dtype, str) or not _known(dtype):
        return []
    if not t.known(dtype):
        return [(*where, "method", f"TRT-LLM does not know decoding_type {dtype!r} (it knows {t.methods_text()}) "
                                   f"({_basis(t)})")]
    problems = []
    if t.needs_model(dtype) and not any(k in sc for k in ("speculative_model", "speculative_model_dir")):
        problems.append(f"decoding_type {dtype} needs its draft checkpoint in speculative_model, and there is none")
    if t.needs_tokens(dtype) and sc.get("max_draft_len") is None and "max_draft_len" not in sc:
        problems.append(f"decoding_type {dtype} needs max_draft_len (> 0), and there is none")
    if problems:
        return [(*where, "model", "; ".join(problems) + f": TRT-LLM rejects the config ({_basis(t)})")]
    return []


def yaml_line(facts: Facts, at: tuple[str, int], key: str) -> tuple[str, int]:
    """The line of ``key:`` in the heredoc written at ``at`` (the file's first write), else ``at``."""
    text = facts.tree.text(at[0])
    if not text:
        return at
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
    lines = text.splitlines()
    for i in range(at[1], min(len(lines), at[1] + 200)):
        if pattern.match(lines[i]):
            return at[0], i + 1
    return at


def value_line(facts: Facts, at: tuple[str, int], needle: str) -> tuple[str, int]:
    """The line that writes a JSON value holding ``needle`` for the flag at ``at``: the flag's
    own line or its continuation lines, else the nearest line above it that has ``needle``
    (``SPEC_CONFIG="{...}"`` assigned before ``--speculative-config "$SPEC_CONFIG"``), else ``at``."""
    text = facts.tree.text(at[0])
    if not text:
        return at
    lines = text.splitlines()
    i = at[1] - 1
    if not 0 <= i < len(lines):
        return at
    j = i
    while j < len(lines):
        if needle in lines[j]:
            return at[0], j + 1
        if not lines[j].rstrip().endswith("\\") or j - i >= 20:
            break
        j += 1
    for k in range(i - 1, max(-1, i - 60), -1):
        if needle in lines[k] and _ASSIGNMENT.match(lines[k]):
            return at[0], k + 1
    return at
