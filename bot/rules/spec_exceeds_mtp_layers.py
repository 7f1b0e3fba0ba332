"""spec-exceeds-mtp-layers: MTP drafts more tokens than the model has native MTP layers (they are reused).

What it does:
    For every server that speculates with the model's own MTP heads (vLLM ``method: mtp`` and
    its ``*_mtp`` aliases, SGLang EAGLE/NEXTN without a draft model, TRT-LLM
    ``decoding_type: MTP``, ATOM ``--method mtp``), compares the tokens drafted per step
    (``num_speculative_tokens``, SGLang ``--speculative-num-steps``, TRT-LLM
    ``num_nextn_predict_layers`` / ``max_draft_len``) with the number of MTP layers the
    checkpoint ships. The model is the entry's ``model`` field (a served path such as
    ``/data/models/X`` names no model), else the command's. The layer counts ship as data
    (``bot/serve/tables/models.json``: model id globs, the count, and its source: a model card
    or the ``config.json`` key such as ``num_nextn_predict_layers``); the repo's speculator
    policy overrides them per model (``mtp_layers`` and ``source``). A model with no known
    count is not judged; a model known to have none (Kimi-K2.5) is noted whatever the count.
    One note per setting (a multinode recipe's workers: one per recipe), naming the entries
    and points.

Why is this bad?
    It is legal: the engine runs the model's MTP layers again for the extra draft steps (layer
    ``i mod n``). But the checkpoint was not trained for that: every step past the last native
    layer drafts with a layer trained to predict a nearer token, acceptance drops, and the
    published MTP number is not what the model can do with its own heads. vLLM 0.25.1, for
    one, extended MiMo-V2.5 MTP to several tokens while loading only its first layer; the
    review asked for accuracy evidence before approving. A model without native MTP layers
    has nothing to reuse at all.

Example:
    ```bash
    # file: benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh
    #!/usr/bin/env bash
    # Kimi-K2.5 ships no MTP module: "mtp" has no layer to draft with (DeepSeek-R1, with one
    # MTP layer, would get the note for reusing it three times)
    source "$(dirname "$0")/../../benchmark_lib.sh"
    check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN
    vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$MAX_MODEL_LEN" --port 8888 \\
        --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' > server.log 2>&1 &
    wait_for_server 8888
    run_client
    ```

Fix:
    Nothing needs fixing when the extra tokens are meant: keep the note as the record that the
    number reuses MTP layers, and show accuracy evidence (lm_eval with and without MTP). To
    measure what the checkpoint was trained for, draft as many tokens as it has MTP layers.
    When the shipped count is wrong for your checkpoint, set ``mtp_layers`` (with its
    ``source``) for the model in the speculator policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bot.findings import Finding, Related, Severity
from bot.launches.specview import Site
from bot.repo.facts import Facts
from bot.repo.load.configs import Point
from bot.rules import _spec
from bot.rules.spec_config_invalid import value_line, yaml_line
from bot.serve import specdata
from bot.serve.model import MARK, Command
from bot.settings import Config

ID = "spec-exceeds-mtp-layers"
CODE = "BB204"
SEVERITY = Severity.INFO
SUMMARY = "MTP with more speculative tokens than the model has native MTP layers (the layers are reused)"

# where each engine sets the number of tokens drafted per step
_TOKENS_AT = {
    "vllm": ("speculative_config",),
    "sglang": ("speculative_num_steps", "speculative_algorithm"),
    "trtllm": ("speculative_config",),
    "atom": ("num_speculative_tokens", "method"),
}


@dataclass(frozen=True)
class Layers:
    """The native MTP layers of a model and where that fact comes from."""

    count: int
    source: str
    policy: bool = False  # from the repo's speculator policy


def check(facts: Facts, conf: Config) -> Iterator[Finding]:
    # (path, line, model, tokens) -> sites and the lines (a recipe's workers: one group per recipe)
    groups: dict[tuple[str, int, str, int], tuple[list[Site], dict[int, str]]] = {}
    layers: dict[str, Layers] = {}
    for site in _spec.judged(facts):
        for role, cmd in site.servers:
            tokens = _mtp_tokens(cmd)
            if tokens is None:
                continue
            model = _model_of(site, cmd)
            if model is None:
                continue
            known = layers.get(model) or _layers(conf, model)
            if known is None or tokens <= known.count:
                continue
            layers[model] = known
            at = _tokens_at(facts, cmd) or _spec.command_at(cmd, site)
            sites, lines = groups.setdefault((at[0], 0 if site.script is None else at[1], model, tokens), ([], {}))
            if site not in sites:
                sites.append(site)
            lines.setdefault(at[1], role)
    for (path, _, model, tokens), (sites, lines) in groups.items():
        yield _finding(path, lines, model, tokens, layers[model], sites)


def _tokens_at(facts: Facts, cmd: Command) -> tuple[str, int] | None:
    """The line that sets the token count (inside the JSON or the heredoc when it can be found)."""
    at = _spec.setting_at(cmd, *_TOKENS_AT.get(cmd.engine, ()))
    if at is None:
        return None
    if cmd.engine == "vllm":
        return value_line(facts, at, "num_speculative_tokens")
    if cmd.engine == "trtllm":
        sc = cmd.args.get("speculative_config")
        key = "max_draft_len" if isinstance(sc, dict) and "max_draft_len" in sc else "num_nextn_predict_layers"
        return yaml_line(facts, at, key)
    return at


def _mtp_tokens(cmd: Command) -> int | None:
    """Tokens drafted per step when the command speculates with the model's own MTP heads."""
    spec = cmd.spec
    if not spec or spec.get("kind") != "mtp":
        return None
    tokens = spec.get("num_speculative_tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        return None
    return tokens


def _model_of(site: Site, cmd: Command) -> str | None:
    """The model id: the entry's ``model`` field, else the command's model."""
    field = site.entry.fields.get("model")
    if isinstance(field, str) and field.strip() and MARK not in field:
        return field.strip()
    if cmd.model and MARK not in cmd.model:
        return cmd.model
    return None


def _layers(conf: Config, model: str) -> Layers | None:
    """The repo's policy (``mtp_layers``) first, else the shipped table."""
    policy = conf.speculators
    if policy is not None:
        mine = policy.for_model(model)
        if mine is not None and mine.mtp_layers is not None:
            where = f"{policy.path}:{mine.line}"
            source = f"{mine.source} (speculator policy, {where})" if mine.source else f"speculator policy, {where}"
            return Layers(mine.mtp_layers, source, policy=True)
    fact = specdata.native_mtp(model)
    if fact is None:
        return None
    return Layers(fact.mtp_layers, fact.source)


def _finding(path: str, lines: dict[int, str], model: str, tokens: int, known: Layers, sites: list[Site]) -> Finding:
    entries = tuple(dict.fromkeys(s.entry.name for s in sites))
    shown = []
    for name in entries[:3]:
        mine = [s for s in sites if s.entry.name == name]
        shown.append(f"{name} ({_spec.sites_text(mine, 3)})")
    more = f" and {len(entries) - 3} more entries" if len(entries) > 3 else ""
    n = known.count
    if n == 0:
        what = (f"MTP drafts {tokens} token{'s' if tokens != 1 else ''} per step, but {model} has no native MTP "
                f"layers [{known.source}]: there is no layer to reuse, so the server either fails to load MTP "
                "weights or drafts with weights the checkpoint does not have")
    else:
        what = (f"MTP drafts {tokens} tokens per step with {model}, which has {n} native MTP "
                f"layer{'s' if n != 1 else ''} [{known.source}]: the engine reuses "
                f"{'it' if n == 1 else 'them'} for the other {tokens - n} draft step{'s' if tokens - n != 1 else ''}; "
                "legal, but not what the checkpoint was trained for (expect lower acceptance than with "
                f"{tokens} trained layers)")
    line = min(lines)
    roles = [lines[n] for n in sorted(lines)]
    workers = f" ({', '.join(roles)} workers)" if len(lines) > 1 or roles != ["server"] else ""
    msg = f"{'; '.join(shown)}{more}{workers}: {what}"
    related = [Related(path, n, f"the {lines[n]} workers' setting") for n in sorted(lines) if n != line]
    related += [Related(*_spec.point_at(s.entry, p)[:2], f"{s.entry.name}: spec-decoding: {s.wanted}")
                for s in sites for p in _first_of_each_group(s.points)]
    return Finding(ID, CODE, SEVERITY, path, line, 1, msg, tuple(dict.fromkeys(related))[:8], entries,
                   key=f"{path}|{model.lower()}|{entries[0]}")


def _first_of_each_group(points: tuple[Point, ...]) -> list[Point]:
    """A site's first point of each group (scenario, sequence lengths): a site may stand for several."""
    seen: dict[tuple[str, str, str], Point] = {}
    for p in points:
        seen.setdefault((p.scenario, str(p.seq.get("isl")), str(p.seq.get("osl"))), p)
    return list(seen.values())
