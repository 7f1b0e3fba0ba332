"""Entries handed to an external job tool, and the recipe files they name.

A multinode launcher often runs no benchmark script of the repo: it clones a tool's
repository, copies the repo's recipe folders into that checkout
(``cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/x" recipes/x``) and
hands the job to the tool (``srtctl apply -f "$CONFIG_FILE"``). The evaluator records both
commands as ``Ran`` events (the profile's ``external-tools``, and ``cp``) on the paths the
entry takes. For every entry whose runs dispatch nothing but hand off, this module gathers:

- the recipe references in its ``additional-settings`` (``CONFIG_FILE=recipes/x.yaml``,
  the ``:override[N]`` / ``:zip_override_...`` selector split off at the first ``:``), per
  point and worker block, with the item's YAML position. A setting counts as a recipe
  reference when the hand-off command's words derive from it (on any path of the same
  launcher) and its value names a YAML file;
- where each resolves in the repo, as the tool sees it: through a copy on the entry's
  paths (destination -> the repo folder or file copied), else, when the tool runs inside
  the repo's checkout, as written; else, when the paths copy nothing we can read, through
  the profile's ``recipe-roots`` (``recipes/`` -> ``benchmarks/multi_node/srt-slurm-recipes/``)
  or as written. Not found but its folder is in the repo (the copied folder itself, or a
  folder below a root): ``expected``. Otherwise only the tool's own repository can have
  it (``external``);
- the container the recipe states (``model.container``, also ``{image: ...}`` and a
  ``base:`` block, or the override block its selector picks), with its position, read
  with the repo's YAML reader; only files the entries name are read;
- the container alias names the launcher defines for the tool (the literal keys of the
  ``containers:`` map of a generated ``srtslurm.yaml``).

Facts only; the rules ``missing-recipe`` and ``recipe-image-mismatch`` judge them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from bot.repo.env.profile import Profile
from bot.repo.files import host
from bot.repo.load import recipefile
from bot.repo.load.configs import ConfigFile, Entry, Point
from bot.repo.load.recipefile import Container
from bot.repo.load.yamlfile import Mark, YamlError, pos_of
from bot.repo.runs import Run
from bot.shell.evaluator.evaluate import Loc, Ran
from bot.shell.ir.values import Val, known

COPIES = frozenset({"cp"})  # commands that copy repo files into the tool's checkout


class Host(host.Host, Protocol):
    """What the hand-off gatherer reads of the facts it fills (``bot.repo.facts.Facts``)."""

    @property
    def profile(self) -> Profile: ...
    @property
    def runs(self) -> list[Run]: ...
    @property
    def entries(self) -> list[Entry]: ...
    @property
    def configs(self) -> list[ConfigFile]: ...
_RECIPE_SUFFIXES = (".yaml", ".yml")
_SETTING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)\Z", re.S)


@dataclass(frozen=True)
class RecipeRef:
    """One recipe an entry names: ``CONFIG_FILE=recipes/x.yaml:zip_override_lowlat[1]``."""

    setting: str  # CONFIG_FILE
    value: str  # the value as written, selector included
    path: str  # the recipe path as the tool sees it (selector split off)
    selector: str  # after the first ``:`` ("" when none)
    point: Point
    block: str  # "prefill", "decode", or "" for the point itself
    pos: Mark  # the additional-settings item


@dataclass(frozen=True)
class Recipe:
    """Where one recipe path, as the tool sees it, is in the repo."""

    path: str  # as the tool sees it
    found: str | None  # the repo file the tool reads
    expected: str | None  # not found, but its folder is the repo's: where the repo would keep it
    via: Loc | None = None  # the copy that brings it into the tool's checkout
    containers: Mapping[str, Container] = field(default_factory=dict)  # selector ("" = base) -> container
    error: YamlError | None = None

    @property
    def external(self) -> bool:
        """Only the tool's own repository can have it (nothing of it is in this repo)."""
        return self.found is None and self.expected is None

    def container(self, selector: str = "") -> Container | None:
        return self.containers.get(selector, self.containers.get(""))


@dataclass(frozen=True)
class Copy:
    """A copy into the tool's checkout: ``dest`` (tool-relative) holds ``source`` (repo)."""

    dest: str
    source: str
    folder: bool  # source is a folder (dest its copy), else a file
    loc: Loc


@dataclass(frozen=True)
class Job:
    """An entry whose runs dispatch no script of the repo but hand it to a tool."""

    entry: Entry
    tool: str
    handoffs: tuple[Ran, ...]  # the command lines, one per distinct place
    launchers: tuple[str, ...]
    refs: tuple[RecipeRef, ...]
    recipes: Mapping[str, Recipe]  # tool path -> where it is in the repo
    copies: tuple[Copy, ...] = ()
    aliases: frozenset[str] = frozenset()  # container alias names the launchers define

    def recipe(self, ref: RecipeRef) -> Recipe:
        return self.recipes[ref.path]


@dataclass
class Jobs:
    jobs: list[Job] = field(default_factory=list)

    def of(self, entry: Entry) -> Job | None:
        for job in self.jobs:
            if job.entry is entry:
                return job
        return None


# ------------------------------------------------------------------ gathering


def gather(facts: Host) -> Jobs:
    by_entry: dict[int, list[Run]] = {}
    for run in facts.runs:
        by_entry.setdefault(id(run.entry), []).append(run)
    settings = _recipe_settings(facts.runs)
    out = Jobs()
    pending: list[tuple[Job, Val]] = []  # jobs whose recipes are still to be resolved, and the tool's cwd
    for entry in facts.entries:
        runs = by_entry.get(id(entry), [])
        handoffs = [h for r in runs for h in r.handoffs]
        if not handoffs or any(r.dispatches for r in runs):
            continue
        tool = handoffs[0].name
        mine = [r for r in runs if any(h.name == tool for h in r.handoffs)]
        names = frozenset().union(*(settings.get((r.real, tool), frozenset()) for r in mine))
        refs = tuple(recipe_refs(entry, names))
        unique = tuple(dict.fromkeys(h for h in handoffs if h.name == tool))
        # copies made where the tool then runs (the tool's checkout, after ``cd``)
        copies = tuple(dict.fromkeys(c for r in mine for ran in r.copies
                                     if any(ran.cwd == h.cwd for h in r.handoffs) for c in copies_of(facts, ran)))
        cwd = next((h.cwd for h in unique if known(h.cwd) is not None), unique[0].cwd)
        files = dict.fromkeys([*(h.loc.path for h in unique), *(r.real for r in mine)])
        aliases = frozenset().union(*(_aliases(facts, p) for p in files))
        pending.append((Job(entry, tool, unique, tuple(dict.fromkeys(r.launcher for r in mine)), refs, {},
                            copies, aliases), cwd))
    prefetch = getattr(facts.tree, "prefetch", None)
    if prefetch is not None:  # a git revision: read every recipe with one process
        prefetch(sorted({c for job, cwd in pending for ref in job.refs
                         for c, _, _ in _places(facts, ref.path, job.copies, cwd) if facts.tree.is_file(c)}))
    for job, cwd in pending:
        recipes: dict[str, Recipe] = {}
        for ref in job.refs:
            if ref.path not in recipes:
                selectors = {r.selector for r in job.refs if r.path == ref.path}
                recipes[ref.path] = resolve(facts, ref.path, job.copies, cwd, selectors)
        out.jobs.append(replace(job, recipes=recipes))
    return out


def _recipe_settings(runs: Iterable[Run]) -> dict[tuple[str, str], frozenset[str]]:
    """(launcher, tool) -> the env vars the tool's command words derive from, on any path."""
    out: dict[tuple[str, str], frozenset[str]] = {}
    for run in runs:
        for h in run.handoffs:
            out[(run.real, h.name)] = out.get((run.real, h.name), frozenset()) | h.deps
    return out


def recipe_refs(entry: Entry, names: frozenset[str]) -> Iterable[RecipeRef]:
    """The recipe references among an entry's additional-settings, for every point."""
    for point in entry.points:
        for block in ("", "prefill", "decode"):
            holder = point.fields if not block else point.fields.get(block)
            items = holder.get("additional-settings") if isinstance(holder, Mapping) else None
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                m = _SETTING.match(item.strip()) if isinstance(item, str) else None
                if m is None or m.group(1) not in names:
                    continue
                value = m.group(2).strip()
                path, _, selector = value.partition(":")
                if not path.endswith(_RECIPE_SUFFIXES):
                    continue
                yield RecipeRef(m.group(1), value, posixpath.normpath(path), selector, point, block,
                                pos_of(items, i))


def copies_of(facts: Host, ran: Ran) -> list[Copy]:
    """What a ``cp`` brings from the repo into a relative destination (the tool's checkout).
    Without ``-T`` a folder lands in the destination or below it, under its own name."""
    words = [known(v) for v in ran.argv[1:]]
    if len(words) < 2 or any(w is None for w in words):
        return []
    args = [w for w in words if w is not None]
    opts = [w for w in args if w.startswith("-")]
    plain = [w for w in args if not w.startswith("-")]
    no_target = any(o == "--no-target-directory" or (not o.startswith("--") and "T" in o) for o in opts)
    dest = plain[-1].rstrip("/") if len(plain) >= 2 else ""
    if not dest or dest.startswith(("/", "~", "$")) or ".." in dest.split("/"):
        return []
    out: list[Copy] = []
    for raw in plain[:-1]:
        source = _repo_path(facts, raw)
        if source is None:
            continue
        folder = facts.tree.is_dir(source)
        if not folder and not facts.tree.is_file(source):
            continue
        name = posixpath.basename(source)
        if folder:
            targets = [dest] if no_target else [dest, f"{dest}/{name}"]
        else:
            targets = [dest] if no_target or dest.endswith(_RECIPE_SUFFIXES) else [f"{dest}/{name}"]
        out.extend(Copy(posixpath.normpath(t), source, folder, ran.loc) for t in targets)
    return out


def _repo_path(facts: Host, raw: str) -> str | None:
    """A copy source as a repo path: only absolute paths under the workspace count."""
    for alias in dict.fromkeys((*facts.profile.workspace_aliases, facts.profile.workspace)):
        a = alias.rstrip("/")
        if raw.startswith(a + "/"):
            path = posixpath.normpath(raw[len(a) + 1:].rstrip("/"))
            return None if path.startswith("..") else path
    return None


def resolve(facts: Host, path: str, copies: Iterable[Copy] = (), cwd: Val = (),
            selectors: Iterable[str] = ()) -> Recipe:
    """Where a recipe path, as the tool sees it from ``cwd``, is in the repo (and the
    container it states, per selector)."""
    places = _places(facts, path, copies, cwd)
    tree = facts.tree
    for candidate, _, loc in places:
        if tree.is_file(candidate):
            containers, err = recipefile.containers(facts, candidate, tuple(selectors))
            return Recipe(path, candidate, None, loc, containers, err)
    for candidate, outside, loc in places:
        folder = posixpath.dirname(candidate)
        # the recipe's own folder, not the root that holds every recipe (nor the repo root)
        if folder and folder != outside and tree.is_dir(folder):
            return Recipe(path, None, candidate, loc)
    return Recipe(path, None, None)


def _places(facts: Host, path: str, copies: Iterable[Copy], cwd: Val) -> list[tuple[str, str, Loc | None]]:
    """Where in the repo the tool's path may be: (repo path, the folder it must be below to
    be the repo's own, the copy that brings it), best first."""
    places: list[tuple[str, str, Loc | None]] = []
    if path.startswith(("/", "../")) or path == "..":
        return places
    copies = list(copies)
    for c in sorted(copies, key=lambda c: -len(c.dest)):
        if c.folder and path.startswith(c.dest + "/"):
            places.append((c.source + path[len(c.dest):], posixpath.dirname(c.source), c.loc))
        elif not c.folder and path == c.dest:
            places.append((c.source, posixpath.dirname(c.source), c.loc))
    where = known(cwd)
    if not places and where is not None:
        # the tool runs inside the repo's checkout: the path is the repo's
        places.append((posixpath.normpath(posixpath.join(where, path)), "", None))
    if not places and not copies:
        # no copy we can read: the profile says where the repo keeps what the tool sees
        for prefix, root in sorted(facts.profile.recipe_roots.items(), key=lambda kv: -len(kv[0])):
            if path.startswith(prefix):
                places.append((posixpath.normpath(f"{root.rstrip('/')}/{path[len(prefix):]}"), root.rstrip("/"),
                               None))
        places.append((path, "", None))
    return places


_CONTAINERS_BLOCK = re.compile(r"(?m)^containers:[ \t]*\n((?:[ \t]+\S[^\n]*\n?)+)")


def _aliases(facts: Host, path: str) -> frozenset[str]:
    """Literal keys of ``containers:`` maps in a file (a generated srtslurm.yaml heredoc)."""
    memo = facts.memo.setdefault("jobs.aliases", {})
    if path not in memo:
        names: set[str] = set()
        for block in _CONTAINERS_BLOCK.finditer(facts.tree.text(path) or ""):
            for line in block.group(1).splitlines():
                key = _map_key(line.strip())
                if key and "$" not in key:
                    names.add(key)
        memo[path] = frozenset(names)
    result: frozenset[str] = memo[path]
    return result


def _map_key(line: str) -> str | None:
    """The key of a ``key: value`` YAML line (quoted or plain), None for a comment."""
    if not line or line.startswith("#"):
        return None
    if line[0] in "\"'":
        end = line.find(line[0], 1)
        return line[1:end] if end > 0 else None
    key = line.split(": ", 1)[0] if ": " in line else line[:-1] if line.endswith(":") else None
    return key.strip() if key else None


# ------------------------------------------------------------------ coverage


@dataclass(frozen=True)
class Coverage:
    """How far the analysis got, per entry and per recipe (counts only)."""

    analysed: int  # a benchmark script was dispatched
    handed: tuple[tuple[str, int], ...]  # (tool, entries handed to it)
    rejected: int  # every path exits before dispatching anything
    unknown: int  # nothing dispatched, not handed off, not rejected (or no launcher ran)
    recipes_checked: int  # distinct recipes found in the repo
    recipes_missing: int  # distinct recipes the repo should have and does not
    recipes_external: tuple[tuple[str, int], ...]  # (tool, recipes only its own repo can have)
    # top-level blocks of master configs that did not load while the rest of their file did
    # (``bot.repo.load.recover``): entries not read, none of the counts above; their keys where readable
    unread: int = 0
    unread_names: tuple[str, ...] = ()


def coverage(facts: Host, jobs: Jobs) -> Coverage:
    runs: dict[int, list[Run]] = {}
    for run in facts.runs:
        runs.setdefault(id(run.entry), []).append(run)
    handed: dict[str, int] = {}
    analysed = rejected = unknown = 0
    tools = {id(j.entry): j.tool for j in jobs.jobs}
    for entry in facts.entries:
        mine = runs.get(id(entry), [])
        if any(r.dispatches for r in mine):
            analysed += 1
        elif id(entry) in tools:
            handed[tools[id(entry)]] = handed.get(tools[id(entry)], 0) + 1
        elif mine and all(r.exits_early for r in mine):
            rejected += 1
        else:
            unknown += 1
    external: dict[str, set[str]] = {}
    found: set[str] = set()
    missing: set[str] = set()
    for job in jobs.jobs:
        for recipe in job.recipes.values():
            if recipe.found:
                found.add(recipe.found)
            elif recipe.expected:
                missing.add(recipe.expected)
            else:
                external.setdefault(job.tool, set()).add(recipe.path)
    broken = [b for cfg in facts.configs for b in cfg.broken]
    return Coverage(analysed, tuple(sorted(handed.items())), rejected, unknown, len(found), len(missing),
                    tuple(sorted((t, len(p)) for t, p in external.items())), len(broken),
                    tuple(b.key for b in broken if b.key is not None))
