"""``python -m bot recipes``: each entry's serve command against the official vLLM recipe or
SGLang cookbook config (docs/recipes.md)."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.report import visible

if TYPE_CHECKING:
    from bot.recipes.model import Source
    from bot.settings import Config

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("recipes", help="compare each serve command with the official vLLM recipe / SGLang cookbook")
    p.add_argument("path", nargs="?", default=".", help="repo root (default: .; found upwards from a subfolder)")
    p.add_argument("--rev", help="a git revision of PATH instead of its work tree")
    p.add_argument("--entry", action="append", help="only these entries (repeatable; glob patterns)")
    p.add_argument("--all-points", action="store_true",
                   help="compare every search-space point (default: one per tp/ep/dp-attn/spec-decoding group)")
    p.add_argument("--source", action="append", metavar="DIR|github",
                   help="a recipe collection: a local vLLM recipes or SGLang cookbook checkout (recognised by its "
                        "layout), or 'github' for the configured repositories (repeatable; default: the "
                        "configuration's recipes)")
    p.add_argument("--offline", action="store_true", help="read GitHub sources only from the cache")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="text, json (docs/recipes.md) or markdown (the pull-request section); default: text")
    p.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")


def add_lint_option(lint: argparse.ArgumentParser) -> None:
    lint.add_argument("--recipes", action="append", metavar="DIR|github",
                      help="compare entries with the official recipes (rule recipe-mismatch): a local vLLM recipes "
                           "or SGLang cookbook checkout, or 'github' for the configured repositories (repeatable)")


def lint_sources(args: argparse.Namespace, conf: Config) -> tuple[list[Source], list[str]] | None:
    """The sources ``lint --recipes`` names (kept on ``args`` for the base of a comparison);
    None without the option. ValueError: a folder of no known layout."""
    if not getattr(args, "recipes", None):
        return None
    if getattr(args, "recipe_sources", None) is None:
        from bot.github.recipe_sources import open_sources as open_given

        args.recipe_sources = open_given(conf.recipes, args.recipes, False)
    got: tuple[list[Source], list[str]] = args.recipe_sources
    return got


def run(args: argparse.Namespace, entry_hint: Callable[[list[str], str], str]) -> int:
    from bot.cli_serve import entry_facts
    from bot.config import load_config
    from bot.github.recipe_sources import configured
    from bot.recipes.compare import comparisons
    from bot.report.recipes import markdown, text_lines, to_json

    facts = entry_facts(args, entry_hint)
    if isinstance(facts, int):
        return facts
    conf = load_config(facts.tree, args.config)
    try:
        sources, notes = configured(facts.tree, conf.recipes, args.source, args.offline)
    except ValueError as exc:  # a --source folder of no known layout
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    entries = [e for e in facts.entries if not args.entry or any(fnmatch.fnmatchcase(e.name, p) for p in args.entry)]
    found = comparisons(facts, sources, entries, all_points=args.all_points)
    for note in notes:
        print(f"benchbot: {visible(note)}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(to_json(found, notes), indent=2))
    elif args.format == "markdown":
        print("\n".join(markdown(found)))
    else:
        for line in text_lines(found):
            print(visible(line))
    return EXIT_OK
