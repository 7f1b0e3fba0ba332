"""``benchbot cache clear|info`` and the ``--no-cache`` option (``bot.cache``)."""

from __future__ import annotations

import argparse
import sys

from bot import cache, cachetrust

NO_CACHE_HELP = "do not read or write benchbot's persistent cache (also BENCHBOT_NO_CACHE=1)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cache", help="show or clear benchbot's persistent cache")
    p.add_argument("action", choices=("info", "clear"), help="info: where and how large; clear: empty it")


def add_option(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """``--no-cache`` on the top parser and on each analysing subcommand (either place works)."""
    parser.add_argument("--no-cache", action="store_true", default=False if top else argparse.SUPPRESS,
                        help=NO_CACHE_HELP)


def apply(args: argparse.Namespace) -> None:
    """This command's ``--no-cache`` (each ``main`` call decides for itself)."""
    cache.disable(bool(getattr(args, "no_cache", False)))
    trust = cachetrust.current()
    if trust.short_key and cache.enabled():
        print(f"benchbot: warning: {cachetrust.KEY_ENV} is shorter than {cachetrust.MIN_KEY_CHARS} characters: "
              "ignored" + (" (the cache is not read in CI without a key)" if trust.ci else ""), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.action == "clear":
        n = cache.clear()
        print(f"removed {n} cache entr{'y' if n == 1 else 'ies'} from {cache.root()}")
        return 0
    n, size = cache.size()
    if not cache.enabled():
        state = "off: --no-cache or BENCHBOT_NO_CACHE"
    elif cache.persistent():
        state = "on"
    else:
        state = "not used: a folder other users can write" if cachetrust.current().usable else "not used"
    print(f"cache: {cache.root()} ({state}): {n} entr{'y' if n == 1 else 'ies'}, {size / 2**20:.1f} MiB "
          f"(bounded at {cache.MAX_BYTES / 2**20:.0f} MiB)")
    print(f"trust: {cachetrust.current().describe()}")
    return 0
