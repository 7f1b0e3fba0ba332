"""``benchbot history A..B [--first-parent]``: the command line half of ``bot.history``
(options, the progress bar, ``--jobs``, the report). Prints only through ``run``'s return
and stderr, like the other CLI modules."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from bot import history as _history
from bot.config import Config, ConfigError, load_config
from bot.repo.files.git import open_tree, renames
from bot.repo.files.tree import TreeError
from bot.report import visible

EXIT_OK, EXIT_USAGE = 0, 2
FORMATS = ("text", "json", "markdown")
CHUNK = 8  # consecutive commits a --jobs worker lints in a row (they share most parses)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("history", help="lint every commit of a range: when each root cause appeared and went")
    p.add_argument("range", help="A..B (the commits after A up to B), or B (every commit B has)")
    p.add_argument("path", nargs="?", default=".", help="the git repo (default: .)")
    p.add_argument("--first-parent", action="store_true",
                   help="follow only the first parent of merges (the branch's own line: one commit per merged PR)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text: a table; json: every root cause with its commits; markdown: a table (default: text)")
    p.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--config", help="one configuration file for every commit (default: each commit's own)")
    p.add_argument("--select", help="comma-separated rule ids or codes to run")
    p.add_argument("--ignore", help="comma-separated rule ids or codes to skip")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="lint with N processes (default 1; each takes runs of consecutive commits)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress bar on stderr (default: when stderr is a terminal)")


@dataclass(frozen=True)
class Policy:
    """What the options change in each commit's configuration (picklable: ``--jobs``)."""

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()

    def __call__(self, conf: Config) -> Config:
        if self.select is not None:
            conf = replace(conf, select=self.select)
        if self.ignore:
            conf = replace(conf, ignore=conf.ignore | self.ignore)
        return conf


def run(args: argparse.Namespace, rule_list: Callable[[str | None], frozenset[str] | None]) -> tuple[int, str, str]:
    """(exit code, the report, its summary line); problems with the options or the range go
    to stderr. ``rule_list``: the CLI's reader of ``--select``/``--ignore`` (ConfigError)."""
    if args.jobs < 1:
        print("benchbot: --jobs needs a number of at least 1", file=sys.stderr)
        return EXIT_USAGE, "", ""
    try:
        policy = Policy(rule_list(args.select), rule_list(args.ignore) or frozenset())
        conf = load_config(open_tree(args.path), args.config) if args.config else None
        start, end, commits = _history.commits(args.path, args.range, args.first_parent)
        moves = _history.renames(args.path, start, end, args.first_parent)
    except (TreeError, ConfigError, ValueError) as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE, "", ""
    h = _history.History(args.range, args.first_parent, start, end, commits)
    tracker = _history.Tracker(start, args.first_parent, moves, lambda p, c: renames(args.path, p, c))
    tracker.expect(commits)
    in_range = {c.sha for c in commits}
    parents = (p for c in commits for p in (c.parents[:1] if args.first_parent else c.parents))
    boundary = [p for p in dict.fromkeys(parents) if p not in in_range]
    by_sha = {c.sha: c for c in commits}
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    todo = boundary + [c.sha for c in commits]
    for got in _with_bar(_lint(args.path, todo, conf, policy, args.jobs), len(todo), progress):
        if got.sha in by_sha:
            c = by_sha[got.sha]
            if got.findings is None:
                h.skipped.append((c, got.error))
            else:
                h.linted += 1
            tracker.feed(c, got.findings)
        elif got.findings is not None:  # where the range starts: what it has was there before
            h.linted += 1
            tracker.boundary(_history.Commit(got.sha, (), 0, ""), got.findings)
    h.episodes = tracker.episodes(end)
    from bot.report import history as report

    render = {"text": report.text, "json": report.as_json, "markdown": report.as_markdown}[args.format]
    return EXIT_OK, render(h), report.summary(h)


def _lint(repo: str, shas: list[str], conf: Config | None, policy: Policy, jobs: int) -> Iterator[_history.Linted]:
    if jobs == 1 or len(shas) < 2 * CHUNK:
        yield from _history.lint_all(repo, shas, conf, policy)
        return
    import multiprocessing

    chunks = [shas[i : i + CHUNK] for i in range(0, len(shas), CHUNK)]
    from bot import cache

    with multiprocessing.get_context("spawn").Pool(jobs, initializer=_worker_init,
                                                    initargs=(not cache.enabled(),)) as pool:
        for done in pool.imap(_chunk, [(repo, chunk, conf, policy) for chunk in chunks]):
            yield from done


def _worker_init(no_cache: bool) -> None:
    from bot import cache

    cache.disable(no_cache)


def _chunk(job: tuple[str, list[str], Config | None, Policy]) -> list[_history.Linted]:
    repo, shas, conf, policy = job
    return list(_history.lint_all(repo, shas, conf, policy))


def _with_bar(items: Iterator[_history.Linted], total: int, show: bool) -> Iterator[_history.Linted]:
    if not show:
        yield from items
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="commit", file=sys.stderr, dynamic_ncols=True, leave=False) as bar:
        for got in items:
            bar.set_postfix_str(got.sha[:9], refresh=False)
            bar.update(1)
            yield got
