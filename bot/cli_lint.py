"""``benchbot lint``: the lint of a tree, the new-only comparison, fixes, the workflow checkers,
and the report in one of ``FORMATS`` (also what ``event`` and ``history`` render with)."""

from __future__ import annotations

import argparse
import os
import sys

from bot import cli_compare, cli_fix, cli_recipes, cli_workflows, rules
from bot.config import Config, ConfigError
from bot.findings import Finding, Severity
from bot.newonly import Comparison
from bot.repo.files.tree import Tree, TreeError
from bot.report import Stats, visible

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "sarif", "github", "markdown")


def write(path: str, text: str) -> bool:
    """Write a report to ``path``; False (and why, on stderr) when it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        print(f"benchbot: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return False
    return True


def rule_list(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    out = set()
    for name in (t.strip() for t in text.split(",")):
        if not name:
            continue
        rid = rules.resolve_rule(name)
        if rid is None:
            raise ConfigError(f"unknown rule {name!r}; see 'benchbot rules'")
        out.add(rid)
    return frozenset(out)


def use_color(tty: bool) -> bool:
    """Colour on a terminal; NO_COLOR turns it off, FORCE_COLOR on (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return tty and os.environ.get("TERM") != "dumb"


def render(fmt: str, findings: list[Finding], stats: Stats, root: str, tree: Tree | None, show_fixes: bool,
            frames: bool, color: bool = False, rev: bool = False, compared: Comparison | None = None) -> str:
    """A report in one of FORMATS. ``root``: the repo root (a directory, or ``repo@rev``)."""
    from pathlib import Path

    from bot.report import github, markdown, sarif
    from bot.report import json as json_report
    from bot.report import text as text_report

    if fmt == "json":
        return json_report.render(findings, stats, root, compared=compared)
    if fmt == "sarif":
        return sarif.render(findings, stats, root_uri=Path(root).as_uri() + "/" if not rev and tree else None)
    if fmt == "github":
        return github.render(findings, stats)
    if fmt == "markdown":
        return markdown.render(findings, stats)
    return text_report.render(findings, stats, show_fixes=show_fixes, source=tree.text if tree else (lambda _: None),
                              frames=frames, color=color, compared=compared)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bot.lint import lint
    from bot.report import text as text_report

    problem = cli_compare.usage_error(args) or cli_fix.usage_error(args)
    if problem:
        print(f"benchbot: {visible(problem)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        tree: Tree = cli_compare.open_head(args)
        conf: Config = cli_compare.policy_config(args, tree)
        select = rule_list(args.select)
        ignore = rule_list(args.ignore)
        if select is not None:
            conf = replace(conf, select=select)
        if ignore:
            conf = replace(conf, ignore=conf.ignore | ignore)
        if args.fail_on:
            conf = replace(conf, fail_on=Severity.parse(args.fail_on))
    except (TreeError, ConfigError) as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    tree.limit(conf.max_file_bytes)
    try:
        result = lint(tree, conf, recipes=cli_recipes.lint_sources(args, conf))
    except ValueError as exc:  # a --recipes folder of no known layout
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except TreeError as exc:  # git could not give a blob the tree names
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    fix_report: list[str] = []
    if cli_fix.wanted(args):
        from bot.fix import FixError

        try:
            fixed = cli_fix.run(args, tree, conf, result)
        except FixError as exc:
            print(f"benchbot: cannot fix: {exc}", file=sys.stderr)
            return EXIT_USAGE
        result, tree, fix_report = fixed.result, fixed.tree, fixed.lines()
    try:  # zizmor and actionlint on the workflows asked for (--workflows) or changed (--new-from-rev, --staged)
        base_tree = cli_compare.base_tree(args)
        args.workflow_files = cli_workflows.paths(args, tree, base_tree)
        notes = cli_workflows.extend(result, tree, conf, args.workflow_files,
                                     policy=base_tree if args.new_from_rev else None)
    except TreeError as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    for note in notes:
        print(f"benchbot: {visible(note)}", file=sys.stderr)
    if args.write_baseline:
        try:
            print(cli_compare.save_baseline(args.write_baseline, result.findings), file=sys.stderr)
        except OSError as exc:
            print(f"benchbot: cannot write {args.write_baseline}: {exc.strerror}", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    try:
        compared, base_seconds = cli_compare.comparison(args, conf, result)
    except (TreeError, ValueError) as exc:
        print(f"benchbot: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    findings = result.findings if compared is None else compared.new  # only the new ones are reported
    stats = replace(result.stats, seconds=result.stats.seconds + base_seconds)
    fmt = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    to_tty = args.output is None and sys.stdout.isatty()
    frames = to_tty if args.frames is None else args.frames
    root = os.path.abspath(args.path) if not args.rev else tree.root
    out = render(fmt, findings, stats, root, tree, args.show_fixes and fmt == "text", frames,
                  color=args.output is None and use_color(sys.stdout.isatty()), rev=bool(args.rev),
                  compared=compared)
    if args.statistics and fmt == "text":
        out = text_report.statistics(findings)
    if fix_report:  # what --fix changed: before the report in text, on stderr for the machine formats
        print("\n".join(fix_report), file=sys.stdout if fmt == "text" and args.output is None else sys.stderr)
    if args.sarif_file is not None:
        # repo-relative URIs, as GitHub code scanning wants them
        if not write(args.sarif_file, render("sarif", findings, stats, root, None, False, False)):
            return EXIT_USAGE
    if args.output is not None:
        if not write(args.output, out):
            return EXIT_USAGE
        print(f"benchbot: wrote the {fmt} report to {args.output}: "
              f"{text_report.summary(findings, stats, compared=compared)}")
    else:
        sys.stdout.write(out)
    if args.timings:
        for phase, secs in result.timings.items():
            print(f"{phase:>10}: {secs:.3f}s", file=sys.stderr)
    failing = [f for f in findings if f.severity >= conf.fail_on]
    return EXIT_FINDINGS if failing else EXIT_OK
