"""``/bench status`` and ``/bench cancel``: the runs this pull request's commands started.

The runs are found by title: every dispatch answer of the bot on this pull request carries the
title of the run it started (``<!-- benchbot:run <b64 title> -->``, :func:`bot.github.claim.run_title`),
and the run is looked up among the benchmark workflow's newest :data:`LIMIT` workflow_dispatch runs
by that title, as ``find_run`` does. Only these titles are used, so another pull request's runs are
never listed or cancelled. ``cancel`` cancels the ones still queued or running (a run that finished
meanwhile, a 409, is reported as finished). The command itself is claimed like every command
(:mod:`bot.github.claim`): one answer, one round of cancels per comment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.github import claim, commands
from bot.github.port_bench import BenchRun
from bot.github.review import own
from bot.report import markdown as md

if TYPE_CHECKING:
    from bot.github.answer import Ctx

LIMIT = 300  # runs of the benchmark workflow read (three pages)


def _titles(ctx: Ctx) -> list[str]:
    seen: dict[str, None] = {}
    for c in sorted(ctx.previous, key=lambda c: c.id):
        title = claim.run_title(c.body) if own(c.author, ctx.bot_login) else None
        if title:
            seen.setdefault(title, None)
    return list(seen)


def _line(run: BenchRun, state: str = "") -> str:
    shown = state or (run.status if run.conclusion is None else f"{run.status}, {run.conclusion}")
    return f"- [{md.escape(run.title)}]({md.safe_url(run.html_url)}): {md.code(shown)}"


def runs(ctx: Ctx, cmd: commands.Runs, note: str) -> None:
    conf, port = ctx.conf, ctx.port
    if conf.bench.repository_dispatch:
        ctx.refuse("`/bench status` and `/bench cancel` need the benchmark to run as a workflow_dispatch "
                   "(`bench.repository-dispatch` is set, so the bot cannot tell which runs are this pull "
                   "request's).", log="runs: repository_dispatch")
        return
    titles = _titles(ctx)
    found = port.bench_runs(conf.bench.workflow, frozenset(titles), LIMIT) if titles else []
    by_title: dict[str, list[BenchRun]] = {}
    for run in found:
        by_title.setdefault(run.title, []).append(run)
    missing = [t for t in titles if t not in by_title]
    gone = "".join(f"\n- {md.code(t)}: not among the workflow's newest {LIMIT} runs" for t in missing)
    if not titles:
        ctx.reply("No benchmark runs were started by commands on this pull request." + note)
        ctx.react("rocket")
        return
    if cmd.action == "status":
        lines = "\n".join(_line(r) for r in found)
        ctx.reply(f"Benchmark runs started on this pull request ({len(titles)}):\n\n{lines}{gone}{note}")
        ctx.react("rocket")
        ctx.out.logs.append(f"benchbot: listed {len(found)} runs")
        return
    active = [r for r in found if r.active]
    cancelled: list[BenchRun] = []
    finished: list[BenchRun] = []
    for run in active:
        (cancelled if port.cancel_run(run.id) else finished).append(run)
    if not active:
        ctx.reply("Nothing to cancel: every benchmark run this pull request started has finished.\n\n"
                  + "\n".join(_line(r) for r in found) + gone + note)
    else:
        text = [f"Cancelled {len(cancelled)} benchmark run{'' if len(cancelled) == 1 else 's'}:"]
        text += [_line(r, "cancel requested") for r in cancelled]
        text += [_line(r, "had finished already") for r in finished]
        ctx.reply("\n".join(text) + note)
    ctx.react("rocket")
    ctx.out.logs.append(f"benchbot: cancelled {len(cancelled)} runs ({', '.join(str(r.id) for r in cancelled)})")
