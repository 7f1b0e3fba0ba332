"""``python -m bot map``: the dispatch map of a benchmark repo as one self-contained HTML page
(docs/map.md). Lints the repo (findings go on the nodes they concern) and follows each entry
into its server as ``serve`` does; it runs nothing from the repository."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Callable

from bot import cli_cache
from bot.config import ConfigError, load_config
from bot.repo.files.git import open_tree
from bot.repo.files.tree import TreeError
from bot.report import visible

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("map", help="write the dispatch map (every entry's chain, findings on it) as an HTML page")
    p.add_argument("path", nargs="?", default=".", help="repo root (default: .; found upwards from a subfolder)")
    p.add_argument("--rev", help="a git revision of PATH instead of its work tree")
    p.add_argument("--entry", action="append", help="only these entries (repeatable; glob patterns)")
    p.add_argument("--html", metavar="FILE", required=True, help="write the page to FILE")
    p.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")
    cli_cache.add_option(p)


def run(args: argparse.Namespace, entry_hint: Callable[[list[str], str], str]) -> int:
    from bot.lint import lint
    from bot.map import build, chain, html, links
    from bot.report import text as text_report

    try:
        tree = open_tree(args.path, args.rev)
        conf = load_config(tree, args.config)
    except (TreeError, ConfigError) as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = lint(tree, conf)
        facts = result.facts
    except TreeError as exc:  # git could not give a blob the tree names
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    names = [e.name for e in facts.entries]
    for pattern in args.entry or ():
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            print(visible(f"benchbot: no entry matches {pattern} ({entry_hint(names, pattern)})"), file=sys.stderr)
            return EXIT_USAGE
    entries = [e for e in facts.entries if not args.entry or any(fnmatch.fnmatchcase(e.name, p) for p in args.entry)]
    launched = chain.launches(facts, entries)
    commit = getattr(tree, "commit", None)
    remote = links.remote_of(args.path, commit, full_tree=bool(args.rev))
    title = os.path.abspath(args.path) if not args.rev else tree.root
    data = build.build(facts, result.findings, text_report.summary(result.findings, result.stats), entries,
                       launched, title, remote.commit if remote is not None else commit)
    page_dir = os.path.dirname(os.path.abspath(args.html))
    page = html.render(data, links.linker(remote, None if args.rev else os.path.abspath(args.path), page_dir))
    try:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(page)
    except OSError as exc:
        print(f"benchbot: cannot write {args.html}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(visible(f"benchbot: wrote the map of {html.entries(len(entries))} to {args.html} "
                  f"({len(page.encode()) / 1024:.0f} KB): {data.summary}"))
    return EXIT_OK
