"""``benchbot eval-compare BASE CANDIDATE...``: lm_eval accuracy of a base run against candidates.

Reads each argument (a file, or ``-`` for stdin) as lm_eval results (:mod:`bot.external.lmeval`),
compares (:mod:`bot.report.evals`) and prints the report. Exit 0: no drop beyond two combined
standard errors; 1: at least one drop; 2: an argument that cannot be read or parsed (its file and
line named). Nothing read is executed.
"""

from __future__ import annotations

import argparse
import json
import sys

from bot.external import lmeval
from bot.report import evals, visible

EXIT_OK, EXIT_DROP, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "markdown")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval-compare",
                       help="compare lm_eval accuracy results: a base run against candidate runs (docs/evals.md)")
    p.add_argument("base", metavar="BASE",
                   help="the base run's lm_eval results: a results JSON, its markdown table or a tab-separated "
                        "copy; - reads stdin")
    p.add_argument("candidates", metavar="CANDIDATE", nargs="+",
                   help="a candidate run's lm_eval results, in any of the same forms (repeatable; - reads stdin)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text: one line per pair; json: docs/evals.md; markdown: a table (default: text)")


def _read(path: str, stdin_used: list[bool]) -> lmeval.Results:
    """One argument's results; :class:`lmeval.EvalError` for anything that cannot be read."""
    if path == "-":
        if stdin_used:
            raise lmeval.EvalError("-", 1, "stdin can be read only once")
        stdin_used.append(True)
        raw = sys.stdin.buffer.read(lmeval.MAX_BYTES + 1)
        source = "<stdin>"
    else:
        try:
            with open(path, "rb") as fh:
                raw = fh.read(lmeval.MAX_BYTES + 1)
        except OSError as exc:
            raise lmeval.EvalError(path, 0, f"cannot read: {exc.strerror or exc}") from None
        source = path
    if len(raw) > lmeval.MAX_BYTES:
        raise lmeval.EvalError(source, 1, f"larger than the {lmeval.MAX_BYTES // (1024 * 1024)} MiB budget "
                                          "for results")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise lmeval.EvalError(source, line, "not UTF-8 text") from None
    return lmeval.parse(text, source)


def run(args: argparse.Namespace) -> int:
    if [args.base, *args.candidates].count("-") > 1:
        print("benchbot: eval-compare: - (stdin) can be given only once", file=sys.stderr)
        return EXIT_USAGE
    stdin_used: list[bool] = []
    try:
        base = _read(args.base, stdin_used)
        cands = [_read(path, stdin_used) for path in args.candidates]
    except lmeval.EvalError as exc:
        where = f"{exc.source}:{exc.line}" if exc.line else exc.source
        print(f"benchbot: {visible(where)}: {visible(exc.message)}", file=sys.stderr)
        return EXIT_USAGE
    labels = [f"candidate {i + 1}" for i in range(len(cands))]
    result = evals.compare(base, cands, labels)
    if args.format == "json":
        print(json.dumps(evals.as_json(result), indent=2))
    elif args.format == "markdown":
        sys.stdout.write(evals.as_markdown(result))
    else:
        sys.stdout.write(evals.as_text(result))
    return EXIT_DROP if result.drops else EXIT_OK
