"""``python -m bot serve``: the server (and client) command each entry really starts."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.config import ConfigError, load_config
from bot.repo.files.git import open_tree
from bot.repo.files.tree import TreeError
from bot.report import visible

if TYPE_CHECKING:
    from bot.repo.facts import Facts

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser("serve", help="show the server and client commands each entry starts")
    serve.add_argument("path", nargs="?", default=".", help="repo root (default: .; found upwards from a subfolder)")
    serve.add_argument("--rev", help="a git revision of PATH instead of its work tree")
    serve.add_argument("--entry", action="append", help="only these entries (repeatable; glob patterns)")
    serve.add_argument("--all-points", action="store_true",
                       help="every concurrency of every search-space point (default: the first of each)")
    serve.add_argument("--format", choices=("text", "json"), default="text",
                       help="text: the commands, one block per entry and point; json: docs/serve.md (default: text)")
    serve.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")


def entry_facts(args: argparse.Namespace, entry_hint: Callable[[list[str], str], str],
                **gather_options: Any) -> Facts | int:
    """The facts of ``args.path``/``args.rev`` for ``dispatch`` and ``serve``, or the exit code
    of a usage error (a tree or configuration that cannot be read, an ``--entry`` glob that
    matches no entry: its message is printed)."""
    from bot.repo.facts import gather

    try:
        tree = open_tree(args.path, args.rev)
        conf = load_config(tree, args.config)
    except (TreeError, ConfigError) as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    tree.limit(conf.max_file_bytes)
    facts = gather(tree, conf.profile, **gather_options)
    names = [e.name for e in facts.entries]
    for pattern in args.entry or ():
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            print(visible(f"benchbot: no entry matches {pattern} ({entry_hint(names, pattern)})"), file=sys.stderr)
            return EXIT_USAGE
    return facts


def run(args: argparse.Namespace, entry_hint: Callable[[list[str], str], str]) -> int:
    from bot.launches.gather import gather as gather_serve
    from bot.launches.gather import sinks
    from bot.report.serve import text_lines, to_json

    facts = entry_facts(args, entry_hint, sinks=sinks(), references=False)
    if isinstance(facts, int):
        return facts
    entries = [e for e in facts.entries if not args.entry or any(fnmatch.fnmatchcase(e.name, p) for p in args.entry)]
    launches = list(gather_serve(facts, entries, all_points=args.all_points))
    if args.format == "json":
        print(json.dumps(to_json(launches), indent=2))
    else:
        for line in text_lines(launches):
            print(line)
    return EXIT_OK
