#!/usr/bin/env bash
# benchbot bench entrypoint: run ONE config entry through the repo's own launcher.
#
# Run by workflows/benchbot-bench.yml on the self-hosted runner, from the checkout of the commit
# to benchmark (it also runs by hand: `ENTRY=... RUNNER_LABEL=... bash runners/entrypoint.sh`).
#
# Environment:
#   ENTRY         config entry name (a top-level key of a *-master.yaml)
#   CONFIG_FILE   master config holding it; empty: search configs/*-master.yaml and
#                 .github/configs/*-master.yaml
#   RUNNER_LABEL  the runner label the job runs on (a key of configs/runners.yaml)
#   RUNNER_NAME   set by the GitHub runner to this machine's name; used as the node when
#                 runners.yaml lists it under RUNNER_LABEL, else the label's first node is
#
# It exports what an InferenceX-style launcher reads, from the first search-space point of the
# entry's first fixed-seq-len item (or of its older seq-len-configs list): IMAGE, MODEL,
# MODEL_PREFIX, PRECISION, FRAMEWORK, SPEC_DECODING, DISAGG, EXP_NAME, ISL, OSL, SCENARIO_TYPE,
# SCENARIO_SUBDIR, IS_AGENTIC, CONC, KV_OFFLOADING, TP, EP_SIZE, DP_ATTENTION, PP_SIZE,
# DCP_SIZE, PCP_SIZE, RUNNER_NAME (the node) and RUNNER_TYPE (the label): the same table as
# benchbot's default profile (bot/repo/profile.py), so what runs is what benchbot analysed.
# Then it runs `runners/launch_<node up to its first '_'>.sh` (mi325x-amds_0 ->
# runners/launch_mi325x-amds.sh) with exec.
#
# Needs bash and python3 with PyYAML. Exit 2, with a message, when an input is malformed or the
# entry, the label or the launcher is missing.
set -euo pipefail

die() {
    printf 'entrypoint: %s\n' "$*" >&2
    exit 2
}

# Whether $1 matches the extended regex $2, in the C locale (so [A-Za-z] means ASCII letters).
matches() {
    local LC_ALL=C
    [[ $1 =~ $2 ]]
}

ENTRY="${ENTRY:-}"
CONFIG_FILE="${CONFIG_FILE:-}"
RUNNER_LABEL="${RUNNER_LABEL:-}"

# Inputs are checked before anything else runs. printf %q keeps a bad value on one line.
matches "$ENTRY" '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' \
    || die "ENTRY must be a config entry name ([A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters), got $(printf %q "$ENTRY")"
matches "$RUNNER_LABEL" '^(cluster:)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' \
    || die "RUNNER_LABEL must be a runner label, got $(printf %q "$RUNNER_LABEL")"
if [[ -n "$CONFIG_FILE" ]]; then
    if ! matches "$CONFIG_FILE" '^[A-Za-z0-9._][A-Za-z0-9._/-]*\.ya?ml$' || [[ "$CONFIG_FILE" == *..* ]]; then
        die "CONFIG_FILE must be a relative .yaml/.yml path without '..', got $(printf %q "$CONFIG_FILE")"
    fi
fi

# Paths are relative to the repository root: the parent of this script's folder.
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

command -v python3 >/dev/null 2>&1 || die "python3 is not installed (it reads the configs with PyYAML)"

# Python prints shell assignments whose values are quoted with shlex.quote; eval runs nothing else.
# It sets these three (and exports the launcher's environment).
config_path="" node="" launcher=""
settings="$(python3 - "$CONFIG_FILE" "$ENTRY" "$RUNNER_LABEL" "${RUNNER_NAME:-}" <<'PY'
import glob
import re
import shlex
import sys


def fail(message):
    print(f"entrypoint: {message}", file=sys.stderr)
    sys.exit(2)


try:
    import yaml
except ImportError:
    fail("python3 has no PyYAML (pip install pyyaml)")

config_arg, entry_name, label, runner_name = sys.argv[1:5]


def read(path, strict=True):
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except OSError as exc:
        problem = f"cannot read {path} ({exc.strerror})"
    except yaml.YAMLError as exc:
        problem = f"{path} is not valid YAML: {' '.join(str(exc).split())}"
    if strict:
        fail(problem)
    print(f"entrypoint: warning: skipping {problem}", file=sys.stderr)
    return None


# --- the entry ---------------------------------------------------------------------------------
if config_arg:
    doc = read(config_arg)
    if not isinstance(doc, dict) or not isinstance(doc.get(entry_name), dict):
        fail(f"no entry {entry_name!r} in {config_arg}")
    config_path = config_arg
else:
    candidates = sorted(glob.glob("configs/*-master.yaml")) + sorted(glob.glob(".github/configs/*-master.yaml"))
    found = []
    for path in candidates:
        doc = read(path, strict=False)
        if isinstance(doc, dict) and isinstance(doc.get(entry_name), dict):
            found.append((path, doc))
    if not found:
        searched = ", ".join(candidates) or "no configs/*-master.yaml or .github/configs/*-master.yaml"
        fail(f"no entry {entry_name!r} in the master configs (searched: {searched})")
    if len(found) > 1:
        fail(f"entry {entry_name!r} is in more than one master config ({', '.join(p for p, _ in found)}): "
             "set CONFIG_FILE")
    config_path, doc = found[0]
entry = doc[entry_name]

if entry.get("multinode") is True:
    fail(f"entry {entry_name!r} is multinode; this entrypoint runs single-node entries only")

scenarios = entry.get("scenarios")
if isinstance(scenarios, dict):
    items = scenarios.get("fixed-seq-len")
else:
    items = entry.get("seq-len-configs")
seq = point = None
for item in items if isinstance(items, list) else []:
    space = item.get("search-space") if isinstance(item, dict) else None
    if isinstance(space, list) and space and isinstance(space[0], dict):
        seq, point = item, space[0]
        break
if point is None:
    fail(f"entry {entry_name!r} in {config_path} has no fixed-seq-len search-space point "
         "(scenarios: fixed-seq-len: or seq-len-configs:)")


def lookup(key, default=None, required=False):
    """The point's value, else its sequence-length item's, else the entry's (as benchbot reads them)."""
    for source in (point, seq, entry):
        if key in source and source[key] is not None:
            return source[key]
    if required:
        fail(f"entry {entry_name!r} in {config_path} has no {key!r}")
    return default


def text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


isl, osl = lookup("isl", required=True), lookup("osl", required=True)


def kilo(n):
    """1024 -> '1k', 8192 -> '8k'; None when n is not a positive multiple of 1024."""
    try:
        n = int(n)
    except (TypeError, ValueError):
        return None
    return f"{n // 1024}k" if n > 0 and n % 1024 == 0 else None


prefix = text(lookup("model-prefix", required=True))
if kilo(isl) and kilo(osl):
    exp_name = f"{prefix}_{kilo(isl)}{kilo(osl)}"
else:
    exp_name = f"{prefix}_{isl}_{osl}"

conc = None
for key in ("conc-start", "conc", "conc-end"):
    if point.get(key) is not None:
        conc = point[key]
        break
if conc is None and isinstance(point.get("conc-list"), list) and point["conc-list"]:
    conc = point["conc-list"][0]

# --- the runner node and its launcher ----------------------------------------------------------
runners_path = next((p for p in ("configs/runners.yaml", ".github/configs/runners.yaml") if glob.glob(p)), None)
if runners_path is None:
    fail("no configs/runners.yaml or .github/configs/runners.yaml (it maps runner labels to nodes)")
runners = read(runners_path)
table = runners.get("labels") if isinstance(runners, dict) and isinstance(runners.get("labels"), dict) else runners
if not isinstance(table, dict):
    fail(f"{runners_path} is not a mapping of runner labels to node names")
nodes = table.get(label)
if not isinstance(nodes, list) or not nodes:
    known = ", ".join(str(k) for k in table) or "none"
    fail(f"runner label {label!r} is not in {runners_path} (labels: {known})")
nodes = [str(n) for n in nodes]
if runner_name in nodes:
    node = runner_name
else:
    node = nodes[0]
    if runner_name:
        print(f"entrypoint: note: this runner ({runner_name!r}) is not listed under {label!r} in {runners_path}; "
              f"using the label's first node {node!r}", file=sys.stderr)
if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", node, re.ASCII):
    fail(f"node name {node!r} under {label!r} in {runners_path} is not a plain name")
launcher = f"runners/launch_{node.split('_', 1)[0]}.sh"

entry_runner = entry.get("runner")
if entry_runner is not None and str(entry_runner) != label:
    print(f"entrypoint: warning: entry {entry_name!r} names runner {entry_runner!r}, running it on {label!r}",
          file=sys.stderr)

env = {
    "IMAGE": text(lookup("image", required=True)),
    "MODEL": text(lookup("model", required=True)),
    "MODEL_PREFIX": prefix,
    "PRECISION": text(lookup("precision", required=True)),
    "FRAMEWORK": text(lookup("framework", required=True)),
    "SPEC_DECODING": text(lookup("spec-decoding", "none")),
    "DISAGG": text(lookup("disagg", False)),
    "EXP_NAME": exp_name,
    "ISL": text(isl),
    "OSL": text(osl),
    "SCENARIO_TYPE": "fixed-seq-len",
    "SCENARIO_SUBDIR": "fixed_seq_len/",
    "IS_AGENTIC": "0",
    "CONC": text(conc),
    "KV_OFFLOADING": text(lookup("kv-offloading", "")),
    "TP": text(lookup("tp", required=True)),
    "EP_SIZE": text(lookup("ep", 1)),
    "DP_ATTENTION": text(lookup("dp-attn", False)),
    "PP_SIZE": text(lookup("pp", 1)),
    "DCP_SIZE": text(lookup("dcp-size", 1)),
    "PCP_SIZE": text(lookup("pcp-size", 1)),
    "RUNNER_NAME": node,
    "RUNNER_TYPE": label,
}
lines = [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
lines += [f"config_path={shlex.quote(config_path)}", f"node={shlex.quote(node)}",
          f"launcher={shlex.quote(launcher)}"]
print("\n".join(lines))
PY
)" || exit "$?"
eval "$settings"
[[ -n "$config_path" && -n "$node" && -n "$launcher" ]] || die "internal error: the config reader printed no launcher"

[[ -f "$launcher" ]] \
    || die "no launcher $launcher for node $node (runner label $RUNNER_LABEL); add it or fix configs/runners.yaml"

printf 'benchbot entrypoint: entry %s from %s\n' "$ENTRY" "$config_path"
printf 'benchbot entrypoint: runner label %s, node %s, launcher %s\n' "$RUNNER_LABEL" "$node" "$launcher"
for name in IMAGE MODEL PRECISION FRAMEWORK SPEC_DECODING EXP_NAME ISL OSL TP EP_SIZE DP_ATTENTION CONC \
    SCENARIO_SUBDIR RUNNER_NAME RUNNER_TYPE; do
    printf '  %s=%q\n' "$name" "${!name}"
done

exec bash "$launcher"
