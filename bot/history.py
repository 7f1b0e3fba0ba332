"""``benchbot history A..B``: when each root cause appeared and when it went.

Every commit of the range is linted as benchbot would have linted it then (its own
configuration, unless one is given), oldest first, with the caches on: consecutive commits
share almost every parse and evaluation. A commit is compared with its parents in the
range (with ``--first-parent``, the one before it), through the renames between them,
the way ``lint --new-from-rev`` compares a change with its base: a finding is matched by
fingerprint, and a cause that turns into another's consequence has not gone. What comes
out is one *episode* per (root cause, appearance): the commit that brought it (None: it
was there at the start of the range), the commit that removed it (None: still there at the
end), the days in between.

No printing here (``bot.cli_history`` does it) and nothing of the repo is executed: trees
are read with ``git ls-tree`` and ``git cat-file``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from bot.config import Config, ConfigError, load_config
from bot.findings import Finding
from bot.repo.files.git import GitTree, name_status_renames, run_git
from bot.repo.files.tree import TreeError

MAX_COMMITS = 100_000  # a range larger than this is refused (say a smaller one)


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]  # all of them (the first first), in the range or not
    time: int  # committer time, seconds since the epoch
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:9]


@dataclass(frozen=True)
class Episode:
    """One root cause from the commit that brought it to the one that removed it."""

    finding: Finding  # as last seen (its path and line at that commit)
    first_bad: Commit | None  # None: already there at the start of the range
    fixed_by: Commit | None = None  # None: still there at the end
    serial: int = 0  # one per appearance

    @property
    def fingerprint(self) -> str:
        return self.finding.fingerprint

    def days_open(self, start: Commit | None, end: Commit) -> float:
        """Days from the commit that brought it (or the start of the range) to the commit
        that removed it (or the end of the range)."""
        since = self.first_bad or start
        until = self.fixed_by or end
        return max(0.0, (until.time - since.time) / 86400) if since is not None else 0.0


@dataclass
class History:
    spec: str
    first_parent: bool
    start: Commit | None  # the commit the range starts after (A of A..B), linted as the starting point
    end: Commit  # B
    commits: list[Commit]  # the range, oldest first
    episodes: list[Episode] = field(default_factory=list)
    skipped: list[tuple[Commit, str]] = field(default_factory=list)  # not linted, and why
    linted: int = 0

    @property
    def open(self) -> list[Episode]:
        return [e for e in self.episodes if e.fixed_by is None]

    @property
    def fixed(self) -> list[Episode]:
        return [e for e in self.episodes if e.fixed_by is not None]


# ------------------------------------------------------------------ the range


def parse_range(spec: str) -> tuple[str | None, str]:
    """``A..B`` -> (A, B); ``B`` -> (None, B): every commit B has. ValueError for anything else."""
    if "..." in spec:
        raise ValueError(f"{spec}: a symmetric range (A...B) has no one start; use A..B")
    start, dots, end = spec.partition("..")
    if not dots:
        start, end = "", spec
    for rev in (start, end):
        if rev.startswith("-") or any(c in rev for c in "\0\n"):
            raise ValueError(f"{spec}: {rev!r} is not a revision")
    if dots and not start:
        raise ValueError(f"{spec}: say where the range starts (A..B)")
    return start or None, end or "HEAD"


def _commit(repo: str, rev: str) -> str:
    try:
        got = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        return got.decode().strip()
    except TreeError:
        raise TreeError(f"{rev}: not a commit of {repo}") from None


def _log(repo: str, *args: str) -> list[Commit]:
    raw = run_git(repo, "-c", "i18n.logOutputEncoding=UTF-8", "log", "-z", "--format=%H %P%x1f%ct%x1f%s", *args)
    out = []
    for rec in raw.split(b"\0"):
        if not rec.strip():
            continue
        shas, ct, subject = rec.decode("utf-8", "replace").strip("\n").split("\x1f", 2)
        sha, *parents = shas.split()
        out.append(Commit(sha, tuple(parents), int(ct), subject))
    return out


def commits(repo: str, spec: str, first_parent: bool) -> tuple[Commit | None, Commit, list[Commit]]:
    """(the start A, the end B, the commits of A..B oldest first: parents before children)."""
    start_rev, end_rev = parse_range(spec)
    end_sha = _commit(repo, end_rev)
    start_sha = _commit(repo, start_rev) if start_rev is not None else None
    order = ["--topo-order", "--reverse"] + (["--first-parent"] if first_parent else [])
    listed = _log(repo, *order, f"--max-count={MAX_COMMITS + 1}", *_ends(end_sha, start_sha), "--")
    if len(listed) > MAX_COMMITS:
        raise ValueError(f"{spec}: more than {MAX_COMMITS:,} commits; say a smaller range")
    end = _log(repo, "-1", end_sha, "--")[0]
    start = _log(repo, "-1", start_sha, "--")[0] if start_sha else None
    return start, end, listed


def _ends(end: str, start: str | None) -> list[str]:
    return [end] + ([f"^{start}"] if start else [])


def renames(repo: str, start: Commit | None, end: Commit, first_parent: bool) -> dict[str, dict[str, str]]:
    """Commit -> its renames (old path -> new path) from its first parent, for the whole
    range in one ``git log``; ``git diff -M``'s detection, as ``lint --new-from-rev`` uses."""
    raw = run_git(repo, "-c", "core.quotePath=false", "log", "-M", "--diff-filter=R", "--name-status", "-z",
                  "--format=%x01%H", "--diff-merges=first-parent", *(["--first-parent"] if first_parent else []),
                  *_ends(end.sha, start.sha if start else None), "--")
    out: dict[str, dict[str, str]] = {}
    for chunk in raw.split(b"\x01")[1:]:
        sha, *fields = chunk.split(b"\0")
        moved = name_status_renames([f.lstrip(b"\n") for f in fields])
        if moved:
            out[sha.decode().strip()] = moved
    return out


# ------------------------------------------------------------------ linting


@dataclass
class Linted:
    """What one commit gave: its findings (no fixes: they hold whole files), or why none."""

    sha: str
    findings: list[Finding] | None
    error: str = ""


def lint_commit(repo: str, sha: str, conf: Config | None, adjust: Callable[[Config], Config],
                known: dict[str, bytes] | None = None) -> tuple[Linted, dict[str, bytes]]:
    """One commit linted; and the blobs it read, by sha (the next commit need not read them again)."""
    from bot.lint import lint

    tree = GitTree(repo, sha, known)
    try:
        used = adjust(conf if conf is not None else load_config(tree))
    except ConfigError as exc:
        return Linted(sha, None, f"its configuration does not load: {exc}"), tree.blobs_read()
    except TreeError as exc:
        return Linted(sha, None, str(exc)), {}
    try:
        result = lint(tree, used)
    except TreeError as exc:  # git could not give a blob (a shallow or damaged clone)
        return Linted(sha, None, str(exc)), {}
    findings = [replace(f, fix=None) for f in result.findings]
    result.release()
    return Linted(sha, findings), tree.blobs_read()


def lint_all(repo: str, shas: Iterable[str], conf: Config | None,
             adjust: Callable[[Config], Config]) -> Iterator[Linted]:
    """The commits linted in this order, in this process (each reuses the last one's blobs)."""
    from bot.repo.cache import envcache

    known: dict[str, bytes] = {}
    with envcache.memory_only():
        for sha in shas:
            got, known = lint_commit(repo, sha, conf, adjust, known)
            yield got


# ------------------------------------------------------------------ episodes


class Tracker:
    """Episodes from commits fed parents first. A commit's open episodes come from its
    parents' (mapped through its renames); a cause none of them had opens an episode; an
    episode whose cause is neither a cause nor a consequence any more is closed there."""

    def __init__(self, start: Commit | None, first_parent: bool, moves: Mapping[str, dict[str, str]],
                 parent_moves: Callable[[str, str], dict[str, str]]) -> None:
        self.start = start
        self.first_parent = first_parent
        self.moves = moves  # commit -> renames from its first parent
        self.parent_moves = parent_moves  # (parent, commit) -> renames: the other parents of a merge
        self.state: dict[str, dict[str, Episode]] = {}  # commit -> its open episodes by fingerprint
        self.closed: dict[int, Episode] = {}  # serial -> the first closing of an episode
        self._serial = itertools.count(1)
        self._children: dict[str, int] = {}

    def expect(self, commit_list: list[Commit]) -> None:
        """Count each commit's children so that its state is dropped after the last."""
        for c in commit_list:
            for p in self._parents(c):
                self._children[p] = self._children.get(p, 0) + 1

    def _parents(self, c: Commit) -> tuple[str, ...]:
        return c.parents[:1] if self.first_parent else c.parents

    def boundary(self, c: Commit, findings: list[Finding]) -> None:
        """A commit the range starts from: what it has was there before the range."""
        self.state[c.sha] = {f.fingerprint: Episode(f, None, None, next(self._serial)) for f in findings}

    def feed(self, c: Commit, findings: list[Finding] | None) -> None:
        parents = [p for p in self._parents(c) if p in self.state]
        if findings is None:  # not linted: it changes nothing
            self.state[c.sha] = dict(self.state[parents[0]]) if parents else {}
            self._release(parents)
            return
        causes = {f.fingerprint: f for f in findings}
        present = set(causes) | {r.fingerprint for f in findings for r in f.consequences}
        now: dict[str, Episode] = {}
        for i, p in enumerate(parents):
            moved = self.moves.get(c.sha, {}) if i == 0 else self.parent_moves(p, c.sha)
            for ep in self.state[p].values():
                last = ep.finding.moved(moved) if moved else ep.finding
                fp = last.fingerprint
                if fp in present:
                    kept = now.get(fp)
                    if kept is None or _earlier(ep, kept):
                        now[fp] = replace(ep, finding=causes.get(fp, last))
                elif ep.serial not in self.closed:
                    self.closed[ep.serial] = replace(ep, fixed_by=c)
        for fp, f in causes.items():
            if fp not in now:
                # a root commit brought what it has; a commit whose parents were not linted, who knows
                now[fp] = Episode(f, c if parents or not c.parents else None, None, next(self._serial))
        self.state[c.sha] = now
        self._release(parents)

    def _release(self, parents: list[str]) -> None:
        for p in parents:
            self._children[p] -= 1
            if self._children[p] <= 0 and p in self.state:
                del self.state[p]
                self._children.pop(p, None)

    def episodes(self, end: Commit) -> list[Episode]:
        """Every episode: those open at ``end``, and those closed on the way (an episode
        closed on a side branch but still open at the end is open)."""
        open_now = self.state.get(end.sha, {})
        serials = {e.serial for e in open_now.values()}
        out = list(open_now.values()) + [e for s, e in self.closed.items() if s not in serials]
        return sorted(out, key=_order)


def _earlier(a: Episode, b: Episode) -> bool:
    if a.first_bad is None:
        return b.first_bad is not None
    return b.first_bad is not None and a.first_bad.time < b.first_bad.time


def _order(e: Episode) -> tuple[int, str, str, int]:
    return (e.first_bad.time if e.first_bad else 0, e.finding.rule, e.finding.key or e.finding.path, e.serial)
