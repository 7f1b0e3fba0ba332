"""The repo's speculator policy (``.benchbot/speculators.yml``): which speculative methods and
draft checkpoints each model may be benchmarked with, on which track, and whether synthetic
acceptance is allowed; also the model facts (native MTP layers) the repo overrides, and the
arguments the benchmark client must get in speculative runs.

```
models:                                   # first block whose glob matches the model id wins
  - model: "*Kimi-K2.5*"                  # glob on the model id, case-insensitive
    track: spec                           # main (native MTP) | spec (external drafts)
    methods: [eagle3]                     # engine-neutral kinds: mtp, eagle, eagle3, dspark, ...
    drafts: [lightseekorg/kimi-k2.5-eagle3, nvidia/Kimi-K2.5-Thinking-Eagle3]
    synthetic: never                      # never | benchmark (never in evals) | always
  - model: "deepseek-ai/DeepSeek-R1*"
    track: main
    methods: [mtp]
    mtp-layers: 1
    source: "DeepSeek-V3 README_WEIGHTS.md: num_nextn_predict_layers = 1"
client-args:                              # merged over the profile's defaults, per client
  run_benchmark_serving:
    require: [[--use-chat-template, --dsv4]]   # each item: one of these arguments
  run_agentic_replay_and_write_outputs:
    require: [--apply-chat-template]
    reads: [REPLAY_CMD]                   # variables the client runs besides its own words
```
Validated by ``schemas/speculators.schema.json``; every error names the file, line and
column. Facts only: the rules (spec-draft-not-allowed, spec-exceeds-mtp-layers,
spec-client-args) judge. Read with the bot's own configuration (``bot.config``), from the
same tree, so in pull requests from the base: a pull request cannot change its own gate.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from bot.repo.files.tree import Tree
from bot.repo.load.schema import validate
from bot.repo.load.yamlfile import YMap, load

POLICY_FILES = (".benchbot/speculators.yml", ".benchbot/speculators.yaml")
SCHEMA = "speculators.schema.json"
SYNTHETIC = ("never", "benchmark", "always")


class PolicyError(ValueError):
    """The policy file cannot be used: ``path:line:col: what`` (a configuration error, exit 2)."""


@dataclass(frozen=True)
class ModelPolicy:
    """What the policy says about the models matching ``pattern`` (a glob on the model id,
    case-insensitive: ``moonshotai/Kimi-K2.5*``)."""

    pattern: str
    line: int  # of the model's block in the policy file
    methods: tuple[str, ...] = ()  # allowed engine-neutral kinds (mtp, eagle3, dspark...); empty: any
    drafts: tuple[str, ...] = ()  # allowed draft checkpoints (globs); empty: no external draft allowed
    track: str = ""  # "main" (native MTP) or "spec" (external drafts); "" unsaid
    synthetic: str = "never"  # "never" | "benchmark" (benchmark runs only, never evals) | "always"
    mtp_layers: int | None = None  # native MTP layers (overrides the shipped table)
    source: str = ""  # where the mtp_layers fact comes from
    # the keys the block sets (``methods``, ``drafts``, ``synthetic``...): what it does not say is not judged
    says: frozenset[str] = frozenset()
    lines: Mapping[str, int] = field(default_factory=dict)  # key -> line of the key in the policy file

    def __str__(self) -> str:
        """What the block says, in one line (the summary of a pull request that changes it)."""
        parts = [f"track {self.track}"] if "track" in self.says else []
        if "methods" in self.says:
            parts.append(f"methods [{', '.join(self.methods)}]")
        if "drafts" in self.says:
            parts.append(f"drafts [{', '.join(self.drafts)}]")
        if "synthetic" in self.says:
            parts.append(f"synthetic {self.synthetic}")
        if self.mtp_layers is not None:
            parts.append(f"mtp-layers {self.mtp_layers}" + (f" ({self.source})" if self.source else ""))
        return f"{self.pattern}: {', '.join(parts) or 'nothing judged'}"

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)

    def allows_draft(self, draft: str) -> bool:
        """Whether a draft checkpoint is one of ``drafts``. A local path (``/data/models/X``)
        is matched by its last folder name against the name part of each entry
        (``Inferact/X``): scripts download the listed checkpoint and serve it from disk."""
        low = draft.lower().rstrip("/")
        local = _is_local(low)
        name = posixpath.basename(low)
        for pat in self.drafts:
            p = pat.lower().rstrip("/")
            if fnmatchcase(low, p) or (local and fnmatchcase(name, posixpath.basename(p))):
                return True
        return False


def _is_local(path: str) -> bool:
    """A filesystem path rather than a hub id (``org/name``)."""
    return path.startswith(("/", "./", "../", "~")) or path.count("/") != 1


@dataclass(frozen=True)
class SpecPolicy:
    path: str
    models: tuple[ModelPolicy, ...] = ()
    # benchmark client -> groups of arguments, one of each group required in speculative runs
    # (``run_benchmark_serving: [[--use-chat-template, --dsv4]]``); None: the profile's default
    client_args: Mapping[str, tuple[tuple[str, ...], ...]] | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    # benchmark client -> variables it runs besides its own words (``REPLAY_CMD``); merged over the profile's
    client_reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __str__(self) -> str:
        blocks = f"{len(self.models)} model block{'' if len(self.models) == 1 else 's'}"
        clients = f", client-args for {', '.join(self.client_args)}" if self.client_args else ""
        return f"{self.path}: {blocks}{clients}"

    def for_model(self, model: str) -> ModelPolicy | None:
        """The first model block whose pattern matches ``model`` (case-insensitive)."""
        low = model.lower()
        return next((m for m in self.models if fnmatchcase(low, m.pattern.lower())), None)


# ------------------------------------------------------------------ loading

def load_policy(tree: Tree, path: str | None = None, named_in: str = "") -> SpecPolicy | None:
    """The policy of ``tree``: the file ``path`` (``speculators:`` of the configuration
    ``named_in``; it must exist), else the first of POLICY_FILES there is; None without one.
    Raises PolicyError for a file that cannot be read, parsed or validated."""
    for p in [path] if path is not None else list(POLICY_FILES):
        text = tree.text(p)
        if text is not None:
            return parse_policy(p, text)
        if tree.is_file(p):
            raise PolicyError(f"{p}: {tree.problem(p) or 'unreadable'}; the speculator policy cannot be read")
        if path is not None:
            where = f" (speculators: in {named_in})" if named_in else ""
            raise PolicyError(f"{p}: no such file in the repository{where}")
    return None


def parse_policy(path: str, text: str) -> SpecPolicy:
    data, err = load(text)
    if err is not None:
        raise PolicyError(f"{path}:{err.line}:{err.col}: {err.message}")
    if data is None:
        return SpecPolicy(path)
    problems = validate(data, SCHEMA)
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PolicyError(f"{path}:{first.mark.line}:{first.mark.col}: {first.message}{more}")
    blocks = data.get("models") or ()
    models = tuple(_model(m) for m in blocks)
    seen: dict[str, int] = {}
    for m, raw in zip(models, blocks):
        if m.pattern.lower() in seen:
            at = raw.val_pos["model"] if isinstance(raw, YMap) and "model" in raw.val_pos else None
            where = f"{at.line}:{at.col}" if at is not None else f"{m.line}:1"
            raise PolicyError(f"{path}:{where}: model {m.pattern!r} has two blocks (the first, at line "
                              f"{seen[m.pattern.lower()]}, would always win)")
        seen[m.pattern.lower()] = m.line
    args: dict[str, tuple[tuple[str, ...], ...]] | None = None
    reads: dict[str, tuple[str, ...]] = {}
    clients = data.get("client-args")
    if isinstance(clients, Mapping):
        args = {}
        for name, spec in clients.items():
            args[str(name)] = tuple(_group(g) for g in spec.get("require") or ())
            if "reads" in spec:
                reads[str(name)] = tuple(str(v) for v in spec.get("reads") or ())
    extra = {k: v for k, v in data.items() if k not in ("models", "client-args")}
    return SpecPolicy(path, models, args, extra, reads)


def _group(item: Any) -> tuple[str, ...]:
    return tuple(str(a) for a in item) if isinstance(item, list) else (str(item),)


def _model(block: Mapping[str, Any]) -> ModelPolicy:
    line = block.pos.line if isinstance(block, YMap) else 0
    lines = {str(k): m.line for k, m in block.key_pos.items()} if isinstance(block, YMap) else {}
    layers = block.get("mtp-layers")
    return ModelPolicy(
        pattern=str(block["model"]),
        line=line,
        methods=tuple(str(x).lower() for x in block.get("methods") or ()),
        drafts=tuple(str(x) for x in block.get("drafts") or ()),
        track=str(block.get("track") or ""),
        synthetic=str(block.get("synthetic") or "never"),
        mtp_layers=int(layers) if isinstance(layers, int) else None,
        source=str(block.get("source") or ""),
        says=frozenset(str(k) for k in block),
        lines=lines,
    )


# ------------------------------------------------------------------ client arguments

Groups = tuple[tuple[str, ...], ...]


def client_requirements(defaults: Mapping[str, Groups], default_reads: Mapping[str, tuple[str, ...]],
                        policy: SpecPolicy | None) -> dict[str, tuple[Groups, tuple[str, ...], str]]:
    """client -> (groups of arguments, one of each required; variables it reads; where the
    requirement comes from): the profile's defaults, with the policy's ``client-args`` over
    them client by client (``require: []`` drops a client)."""
    out = {c: (g, tuple(default_reads.get(c, ())), "benchbot's default") for c, g in defaults.items()}
    if policy is not None and policy.client_args is not None:
        for client, groups in policy.client_args.items():
            reads = policy.client_reads.get(client, tuple(default_reads.get(client, ())))
            out[client] = (groups, reads, f"{policy.path} (client-args)")
    return {c: v for c, v in out.items() if v[0]}


__all__ = ["POLICY_FILES", "ModelPolicy", "PolicyError", "SpecPolicy", "client_requirements", "load_policy",
           "parse_policy"]
