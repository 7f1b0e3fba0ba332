"""Command line: ``python -m bot lint|dispatch|event|serve|...``: the parser, and each command handed to its
module (``cli_lint``, ``cli_rules``, ``cli_serve``...), which prints its output."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from bot import (
    cli_cache,
    cli_compare,
    cli_eval,
    cli_event,
    cli_fix,
    cli_history,
    cli_lint,
    cli_map,
    cli_recipes,
    cli_rules,
    cli_serve,
    cli_trace,
    cli_workflows,
)
from bot.config import ConfigError, load_config
from bot.findings import Severity
from bot.repo.files.git import open_tree
from bot.repo.files.tree import TreeError, find_root
from bot.report import visible

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
# stdout was closed under us (`benchbot lint | head -1`): 128 + SIGPIPE, what the shell reports for a
# C tool the signal killed; kept apart from 1 (findings) so that `set -o pipefail` scripts can tell.
EXIT_PIPE = 141
FORMATS = cli_lint.FORMATS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchbot", description="Static dispatch linter for GPU benchmark repos.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    lint = sub.add_parser("lint", help="lint a benchmark repo (work tree or git revision)")
    lint.add_argument("path", nargs="?", default=".", help="repo root (default: .)")
    lint.add_argument("--rev", help="lint this git revision of PATH instead of its work tree")
    lint.add_argument("--format", choices=FORMATS, default=None,
                      help="output format (default: github when GITHUB_ACTIONS=true, else text)")
    lint.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    lint.add_argument("--sarif-file", metavar="FILE", help="also write a SARIF 2.1.0 report to FILE")
    lint.add_argument("--frames", action=argparse.BooleanOptionalAction, default=None,
                      help="show a code frame under each finding (text; default: on when stdout is a terminal)")
    lint.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")
    lint.add_argument("--select", help="comma-separated rule ids or codes to run")
    lint.add_argument("--ignore", help="comma-separated rule ids or codes to skip")
    lint.add_argument("--fail-on", choices=("error", "warning", "info"), help="lowest severity that fails")
    lint.add_argument("--show-fixes", action="store_true", help="print proposed fixes as diffs (text)")
    lint.add_argument("--timings", action="store_true", help="print phase timings to stderr")
    lint.add_argument("--statistics", action="store_true",
                      help="print the number of findings per rule instead of the findings (text)")
    cli_compare.add_arguments(lint)  # --staged, --new-from-rev, --baseline, --write-baseline
    cli_fix.add_arguments(lint)  # --fix, --unsafe-fixes
    cli_recipes.add_lint_option(lint)  # --recipes DIR|github
    cli_workflows.add_arguments(lint)  # --workflows, --no-workflows
    dispatch = sub.add_parser("dispatch", help="show the script every (entry, launcher) pair runs")
    dispatch.add_argument("path", nargs="?", default=".",
                          help="the repo, or any folder in it (default: .; the root is found upwards)")
    dispatch.add_argument("--rev", help="a git revision of PATH instead of its work tree")
    dispatch.add_argument("--entry", action="append", help="only these entries (repeatable; glob patterns)")
    dispatch.add_argument("--format", choices=("text", "json"), default="text",
                          help="text: one line per (entry, launcher); json: the rows as a list (default: text)")
    dispatch.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml in PATH)")
    cli_event.add_parser(sub, FORMATS)  # its --help lists the GITHUB_* and BENCHBOT_* variables it reads
    cli_serve.add_parser(sub)
    cli_recipes.add_parser(sub)
    cli_trace.add_parser(sub)
    cli_map.add_parser(sub)  # --no-cache of its own
    cli_history.add_parser(sub)
    cli_eval.add_parser(sub)
    cli_cache.add_parser(sub)
    cli_cache.add_option(p, top=True)
    for name in ("lint", "dispatch", "event", "serve", "history", "recipes"):
        cli_cache.add_option(sub.choices[name])
    cli_rules.add_parsers(sub)  # rules, explain
    return p


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("benchbot")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return str(getattr(sys.modules["bot"], "__version__", "0+unknown"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. A closed stdout (the reader of a pipe went away) ends
    the command quietly with EXIT_PIPE, as the Python docs recommend for SIGPIPE."""
    try:
        code = _command(_parser().parse_args(argv))
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
    except BrokenPipeError:
        # Python flushes stdout again on exit: point it at devnull so that nothing complains.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is no real file (captured in a test)
            pass
        return EXIT_PIPE
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # a bug of ours, never "findings": one line, exit 3 (BENCHBOT_DEBUG=1: traceback)
        if os.environ.get("BENCHBOT_DEBUG"):
            raise
        where = ""
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        print(f"benchbot: internal error: {type(exc).__name__}: {str(exc)[:200]}{where} "
              "(a bug in benchbot; BENCHBOT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
    return code


def _command(args: argparse.Namespace) -> int:
    cli_cache.apply(args)
    if args.command == "cache":
        return cli_cache.run(args)
    if args.command == "history":
        code, out, summary = cli_history.run(args, cli_lint.rule_list)
        if code != EXIT_OK or args.output is None:
            sys.stdout.write(out)
            return code
        if not cli_lint.write(args.output, out):
            return EXIT_USAGE
        print(f"benchbot: wrote the {args.format} report to {args.output}: {visible(summary)}")
        return EXIT_OK
    if args.command == "eval-compare":
        return cli_eval.run(args)
    if args.command == "rules":
        return cli_rules.run_rules(args)
    if args.command == "explain":
        return cli_rules.run_explain(args)
    if args.command in ("lint", "dispatch", "serve", "recipes", "trace", "map"):
        for option in ("rev", "new_from_rev"):
            if getattr(args, option, None) == "":  # `--rev ""` (an unset variable) is no revision
                print(f"benchbot: --{option.replace('_', '-')} needs a revision (got an empty string)",
                      file=sys.stderr)
                return EXIT_USAGE
        problem = _locate(args)
        if problem is not None:
            print(f"benchbot: {visible(problem)}", file=sys.stderr)
            return EXIT_USAGE
    if args.command == "dispatch":
        return _dispatch(args)
    if args.command == "serve":
        return cli_serve.run(args, _entry_hint)
    if args.command == "recipes":
        return cli_recipes.run(args, _entry_hint)
    if args.command == "trace":
        return cli_trace.run(args, _entry_hint)
    if args.command == "map":
        return cli_map.run(args, _entry_hint)
    if args.command == "event":
        return _event(args)
    return cli_lint.run(args)


def _locate(args: argparse.Namespace) -> str | None:
    """Point ``args.path`` at the repo root (found upwards from any folder in it, as git does)
    and check that the repo has master configs: what is wrong, or None.

    With ``--rev`` or ``--staged`` PATH is the git repo and is taken as it is. A tree or a
    configuration that cannot be read is left to the command, which reports it.
    """
    from bot.repo.env.profile import Profile

    if args.command == "lint" and cli_compare.usage_error(args):
        return None  # lint reports options that do not go together first
    if not (args.rev or getattr(args, "staged", False)):
        args.path = find_root(args.path, Profile().configs)
    try:
        tree = cli_compare.open_head(args) if args.command == "lint" else open_tree(args.path, args.rev)
        profile = load_config(tree, args.config).profile
    except (TreeError, ConfigError):
        return None
    if tree.glob(profile.configs, profile.configs_exclude):
        return None
    where = f"{args.path}@{args.rev}" if args.rev else args.path
    return f"{where}: no master configs ({' or '.join(profile.configs)}) found; is this a benchmark repo?"


def _entry_hint(names: list[str], pattern: str) -> str:
    """``6 entries; e.g. a, b, c``: the entry names closest to a pattern that matched none."""
    import difflib

    count = f"{len(names)} {'entry' if len(names) == 1 else 'entries'}"
    near = difflib.get_close_matches(pattern, sorted(names), n=3, cutoff=0.0)
    return f"{count}; e.g. {', '.join(near)}" if near else count


def _dispatch(args: argparse.Namespace) -> int:
    import fnmatch
    import json

    from bot.report.dispatch import rows, text_line

    facts = cli_serve.entry_facts(args, _entry_hint)
    if isinstance(facts, int):
        return facts
    table = [r for r in rows(facts)
             if not args.entry or any(fnmatch.fnmatchcase(str(r["entry"]), pat) for pat in args.entry)]
    if args.format == "json":
        print(json.dumps(table, indent=2))
    else:
        for r in table:
            print(text_line(r))
    return EXIT_OK


def _event(args: argparse.Namespace) -> int:
    import logging

    from bot.github import event
    from bot.github.adapter import SettingsError, from_env
    from bot.github.port import GitHubError, Port

    logging.basicConfig(level=logging.WARNING, format="benchbot: %(message)s")
    logging.getLogger("github").setLevel(logging.WARNING)  # PyGithub logs every retried 403 at INFO
    env = dict(os.environ)
    try:
        name, payload = event.read_event(env)
    except ValueError as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE

    def port() -> Port:
        try:
            return from_env(env)
        except SettingsError as exc:
            raise GitHubError(0, str(exc), "connect") from None

    opts = event.Options(args.config, Severity.parse(args.fail_on) if args.fail_on else None)
    out = event.route(name, payload, env, port, opts)
    sarif = None
    if out.findings is not None and out.stats is not None:
        fmt = args.format or "github"
        sys.stdout.write(cli_lint.render(fmt, out.findings, out.stats, out.root, None, False, False))
        if out.head_findings is not None:
            sarif = cli_lint.render("sarif", out.head_findings, out.stats, out.root, None, False, False)
    for line in out.logs:
        print(line, file=sys.stderr)
    files = [(args.sarif_file, sarif, "w")]
    if env.get("GITHUB_STEP_SUMMARY"):
        files.append((env["GITHUB_STEP_SUMMARY"], out.step_summary, "a"))
    for path, text, mode in files:
        if path and text is not None:
            try:
                with open(path, mode, encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                print(f"benchbot: cannot write {path}: {exc.strerror}", file=sys.stderr)
                return EXIT_USAGE
    return out.code
