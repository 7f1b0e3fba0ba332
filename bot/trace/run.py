"""``trace``: what an entry really runs, found by running it with stand-ins.

For each (entry, point, launcher) the workflow would run, the repository is copied into a
sandbox (``bot.trace.sandbox``) and the launcher runs there, as the workflow runs it
(``bash runners/launch_X.sh`` from the workspace), under the env the workflow model gives the
point (``Facts.env_for``; a value the model cannot know gets a placeholder that names it).
Every command that would reach a cluster, a container, a GPU, an engine or the network is a
stand-in (``runners/stand-ins/standin.py``) that records its argv, cwd and env. From that
record:

- the benchmark script the launcher ran: the first file under the repo's script folders
  that ``bash`` ran;
- the server and the client: the stand-in calls the serve model would call a server or a
  client (``bot.serve.engines.detect``), normalized the same way (``bot.serve.normalize``),
  with the files the script wrote read back from the sandbox's copy.

Facts only, and never on the pull-request bot's path: it runs the repository's code.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.launches.gather import SERVE_ENV
from bot.launches.launch import concurrencies
from bot.repo.env.points import representatives
from bot.repo.facts import Facts
from bot.repo.load.configs import Entry, Point
from bot.serve.client import normalize_client
from bot.serve.engines import detect
from bot.serve.model import Command, File, Tok
from bot.serve.normalize import normalize
from bot.shell.ir.values import Unk, Val
from bot.trace import sandbox


def _standins() -> Path:
    """runners/stand-ins of the checkout, or its copy installed as the package data bot._standins."""
    here = Path(__file__).resolve().parents[2] / "runners" / "stand-ins"
    if (here / "standin.py").is_file():
        return here
    from importlib import resources

    return Path(str(resources.files("bot._standins")))


STANDINS = _standins()
PLACEHOLDER = "benchbot-unknown-{name}"  # a value the workflow model cannot know
_FILE_ARG = re.compile(r"\.(ya?ml|json)$")
MAX_FILE = 4 << 20
_SANDBOX_ENV = frozenset({"HOME", "PATH", "PWD", "TMPDIR"})  # a config file larger than this is not read back


@dataclass(frozen=True)
class Traced:
    entry: Entry
    point: Point
    conc: str | None
    launcher: str
    node: str
    env: Mapping[str, str]  # what the launcher was started with
    script: str | None  # the benchmark script it ran (repo-relative), None: none
    server: Command | None
    client: Command | None
    code: int | None
    ended: str
    message: str
    calls: tuple[Mapping[str, Any], ...] = field(default=())  # the stand-in log: tool, argv, cwd, role
    others: tuple[Command, ...] = ()  # further servers


def standin_names() -> tuple[str, ...]:
    """The commands stood in (``NAMES`` of standin.py, read without running it)."""
    import ast

    tree = ast.parse((STANDINS / "standin.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "NAMES" for t in node.targets):
            value = ast.literal_eval(node.value)
            return tuple(str(v) for v in value)
    raise RuntimeError("runners/stand-ins/standin.py defines no NAMES")


_COUNTS = re.compile(r"(^|_)(COUNT|NUM|GPUS|NGPUS|NNODES|GB|MB)$")
# a count or size the workflow model cannot know (GPU_COUNT, TOTAL_CPU_DRAM_GB): scripts check it is a number
NUMBER = "8"


def placeholder(name: str) -> str:
    return NUMBER if _COUNTS.search(name) else PLACEHOLDER.format(name=name.lower())


def concrete(env: Mapping[str, Val]) -> dict[str, str]:
    """The workflow env as strings: an unknown part becomes a placeholder naming the variable
    (a count, ``GPU_COUNT``, becomes ``8``: launchers check that it is a number)."""
    out: dict[str, str] = {}
    for name, value in env.items():
        out[name] = "".join(p if not isinstance(p, Unk) else placeholder(name) for p in value)
    return out


_ABS = re.compile(r"(?<![\w$./-])/([A-Za-z][A-Za-z0-9._-]*)/")
# a literal absolute folder path (up to the last ``/``): ``/raid/squash/x.sqsh.lock`` -> /raid/squash
_ABS_DIR = re.compile(r"(?<![\w$./-])((?:/[A-Za-z0-9][A-Za-z0-9._-]*)+)/")
MAX_SCRATCH_DIRS = 256
_SYSTEM_TOPS = frozenset({"usr", "etc", "proc", "dev", "sys", "tmp", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
                          "opt", "root", "run", "boot", "trace"})


def scratch_tops(facts: Facts) -> tuple[str, ...]:
    """The top-level folders the repo's shell files name in absolute paths (``/raid/...``,
    ``/scratch/...``, ``/home/sa-shared/...``): cluster file systems a launcher makes folders
    in. The sandbox gives each as an empty writable folder of its own (never the host's)."""
    memo = facts.memo.get("trace.scratch")
    if isinstance(memo, tuple):
        return memo
    tops: set[str] = set()
    dirs: set[str] = set()
    for path in facts.shell_files():
        text = facts.tree.text(path) or ""
        tops.update(m.group(1) for m in _ABS.finditer(text))
        dirs.update(m.group(1) for m in _ABS_DIR.finditer(text))
    out = tuple(sorted(tops - _SYSTEM_TOPS))
    # the literal folders under them the files name (``exec 9>/raid/squash/x.lock`` needs
    # /raid/squash), shallowest first, bounded
    under = sorted((d for d in dirs if d.split("/")[1] in out and ".." not in d.split("/")),
                   key=lambda d: (d.count("/"), d))[:MAX_SCRATCH_DIRS]
    facts.memo["trace.scratch"] = out
    facts.memo["trace.scratch_dirs"] = tuple(under)
    return out


def scratch_dirs(facts: Facts) -> tuple[str, ...]:
    scratch_tops(facts)
    got = facts.memo.get("trace.scratch_dirs")
    return got if isinstance(got, tuple) else ()


def runs(facts: Facts, entries: Sequence[Entry], all_points: bool = False,
         launcher: str | None = None) -> Iterator[tuple[Entry, Point, str | None, str, str, str]]:
    """(entry, point, conc, launcher, node, label) as the workflow would run them: one node
    per launcher of the entry's runner label, one point per group (``all_points``: every
    point at every concurrency). Multinode entries are left out (their jobs go to a tool)."""
    labels = facts.runners.labels
    for entry in entries:
        label = entry.runner
        if entry.multinode or label is None or label not in labels:
            continue
        by_launcher: dict[str, str] = {}
        for node in labels[label]:
            by_launcher.setdefault(facts.launcher_of_node(node), node)
        for path, node in by_launcher.items():
            if launcher is not None and path != launcher:
                continue
            points = list(entry.points) if all_points else representatives(facts.profile, entry.points)
            for point in points:
                concs: list[str | None] = list(concurrencies(point) if all_points else concurrencies(point)[:1])
                for conc in concs or [None]:
                    yield entry, point, conc, path, node, label


def trace_one(facts: Facts, repo: Path, entry: Entry, point: Point, conc: str | None, launcher: str, node: str,
              label: str, *, timeout: float = 30.0, unsafe_no_sandbox: bool = False) -> Traced:
    env_vals = facts.env_for(entry, point, node, label)
    env = concrete(env_vals)
    env.update({k: v for k, v in SERVE_ENV.items() if k in env})
    conc_var = facts.profile.conc_var
    if conc is not None and conc_var in env:
        env[conc_var] = conc
    # what the runner's own environment holds (``unknown-env``: USER, HF_HUB_CACHE...): set, to
    # a placeholder, as the static model takes them (set, value unknown); the sandbox sets its own
    # HOME, PATH and PWD
    for name in facts.profile.unknown_env:
        if not any(c in name for c in "*?[") and name not in env and name not in _SANDBOX_ENV:
            env[name] = placeholder(name)
    workspace = facts.profile.workspace.rstrip("/") or "/github/workspace"
    env["GITHUB_WORKSPACE"] = workspace
    env.setdefault("RUNNER_NAME", node)
    aliases = [a for a in facts.profile.workspace_aliases if a.rstrip("/") != workspace]
    out = sandbox.run(repo, ["bash", launcher], env, standins=STANDINS, names=standin_names(), workspace=workspace,
                      timeout=timeout, unsafe_no_sandbox=unsafe_no_sandbox, keep=True, aliases=aliases,
                      label=launcher, scratch=scratch_tops(facts), scratch_dirs=scratch_dirs(facts))
    try:
        roots = _Roots(out.workdir, out.tmp, (workspace, *(a.rstrip("/") for a in aliases)))
        script = _script(facts, out.records, roots)
        servers = [_command(r, roots) for r in out.records if r.get("role") == "server"]
        clients = [r for r in out.records if r.get("role") == "client"]
        server = next((s for s in servers if s is not None), None)
        client = _client(clients[0]) if clients else None
    finally:
        if out.tempdir is not None:
            sandbox.remove(out.tempdir)
    calls = tuple({"tool": r.get("tool"), "argv": r.get("argv"), "cwd": r.get("cwd"), "role": r.get("role")}
                  for r in out.records)
    return Traced(entry, point, conc, launcher, node, env, script, server, client, out.code, out.ended, out.message,
                  calls, tuple(s for s in servers[1:] if s is not None))


@dataclass(frozen=True)
class _Roots:
    """Where the run's files are: the copy (``work``) and ``/tmp`` as kept on the host, and the
    paths the copy was seen at inside (the workspace and its aliases)."""

    work: Path | None
    tmp: Path | None
    inside: tuple[str, ...]


def _script(facts: Facts, records: Sequence[Mapping[str, Any]], roots: _Roots) -> str | None:
    scripts = set(facts.tree.glob(facts.profile.scripts))
    for r in records:
        if r.get("tool") != "bash" or r.get("role") != "script":
            continue
        args = [a for a in r.get("argv", [])[1:] if isinstance(a, str)]
        path = next((a for a in args if not a.startswith("-")), None)
        if path is None:
            continue
        rel = _relative(path, str(r.get("cwd", "")), roots)
        if rel is not None and rel in scripts:
            return rel
        # a copy of the workspace (``tar -C /tmp/inferencex-$JOB``, an sbcast'd checkout): the
        # repo's script whose path the run's ends with
        full = posixpath.normpath(posixpath.join(str(r.get("cwd", "")), path))
        hits = [s for s in scripts if full.endswith("/" + s)]
        if hits:
            return max(hits, key=len)
    return None


def _relative(path: str, cwd: str, roots: _Roots) -> str | None:
    """``path`` (as a stand-in saw it, from ``cwd``) relative to the repo, when it is inside."""
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))
    bases = [*roots.inside, str(roots.work) if roots.work is not None else ""]
    for base in (b.rstrip("/") for b in bases if b):
        if full.startswith(base + "/"):
            return full[len(base) + 1:]
    return None


def _read(base: Path, rel: str) -> str | None:
    """A file the run left under ``base``, never through a link (the repository's code made
    the copy: a planted link could point anywhere on the host)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    with os.fdopen(leaf, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(MAX_FILE + 1)
    return None if len(data) > MAX_FILE else data.decode("utf-8", "replace")


def _files(argv: Sequence[str], cwd: str, roots: _Roots) -> dict[str, File]:
    """The files a command names that the run wrote or holds (vLLM ``--config``, TRT-LLM
    ``--extra_llm_api_options``), read back from the sandbox's copy or its ``/tmp``."""
    out: dict[str, File] = {}
    for word in argv:
        value = word.split("=", 1)[-1]
        if not _FILE_ARG.search(value):
            continue
        full = posixpath.normpath(value if value.startswith("/") else posixpath.join(cwd, value))
        rel = _relative(full, "/", roots)
        text = None
        if rel is not None and roots.work is not None:
            text = _read(roots.work, rel)
        elif full.startswith("/tmp/") and roots.tmp is not None:
            text = _read(roots.tmp, full[len("/tmp/"):])
        if text is None:
            continue
        for key in {value, value.rsplit("/", 1)[-1]}:
            out[key] = File(value, text, "trace")
    return out


def _command(r: Mapping[str, Any], roots: _Roots) -> Command | None:
    argv = [str(a) for a in r.get("argv", [])]
    hit = detect(argv)
    if hit is None:
        return None
    engine, start = hit
    toks = [Tok(a, "trace") for a in argv[start:]]
    env = {str(k): str(v) for k, v in (r.get("env") or {}).items()}
    return normalize(engine, toks, _files(argv, str(r.get("cwd", "")), roots), env)


def _client(r: Mapping[str, Any]) -> Command:
    argv = [str(a) for a in r.get("argv", [])]
    start = next((i + 1 for i, a in enumerate(argv) if a.endswith(".py") or a in ("serve", "bench_serving")), 1)
    return normalize_client([Tok(a, "trace") for a in argv[start:]], {})
