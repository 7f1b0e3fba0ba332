"""``/bench``: from a claimed command to one dispatch (see :mod:`bot.github.comments`; the label
trigger, :mod:`bot.github.labels`, comes this way as ``/bench <target> @<head>``).

Order: the switch and the per-PR hourly limit; the head, bound to the command
(:mod:`bot.github.bind`: named with ``@<sha>``, or proven from the timeline and the workflow
runs); the head and base trees; the selection; refuse what lint says would run the wrong or an
unknown script, with the head's own suppressions not obeyed (unless ``--force``); refuse entry
names or config paths that do not match the strict patterns, and more entries than one dispatch
takes; over ``bench.max-jobs`` jobs (:mod:`bot.github.jobs_count`; the count is in the answer and in
every refusal from the selection on) unless ``--yes``; re-read the PR and refuse if its head
moved; note the run title on the claim; one dispatch; 🚀; the answer with the entries, the label,
the pinned SHA and a link to the run.

``--all`` selecting more than :data:`bot.github.bench.MAX_DISPATCH` entries is refused (not
split): one command is one run, and the reply says how many there are and to name entries.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot import rules
from bot.findings import Finding
from bot.github import bench, bind, claim, commands, jobs_count, markers
from bot.github.port import GitHubError, RunInfo
from bot.github.review import own
from bot.lint import LintResult, lint
from bot.repo.facts import Facts, gather
from bot.repo.files.git import GitTree
from bot.repo.files.tree import Tree, TreeError
from bot.report import markdown as md
from bot.settings import Config

if TYPE_CHECKING:
    from bot.github.answer import Ctx

_DISPATCH = re.compile(r"<!-- benchbot:dispatch ((?:label-)?\d+) -->")
_SHA40 = re.compile(r"[0-9a-f]{40}")


def _tree(workspace: str, sha: str) -> Tree | None:
    try:
        return GitTree(workspace, sha)
    except TreeError:
        return None


def _short(key: int | str) -> str:
    """The command's key in a run title: ``c<comment id>`` or ``l<labeled event id>``."""
    return f"c{key}" if isinstance(key, int) else "l" + key.removeprefix("label-")


def _retry(cmd: commands.Bench, sha: str, *, yes: bool = False) -> str:
    """The command to type to run ``sha`` (every part already passed the grammar)."""
    parts = ["/bench", cmd.target, *cmd.entries, *(["--all"] if cmd.all else []), *(["--force"] if cmd.force else []),
             *(["--yes"] if yes or cmd.yes else [])]
    return md.code(" ".join(parts) + f" @{sha}")


def unsuppressed(facts: Facts, conf: Config) -> list[Finding]:
    """The findings with the tree's own inline suppressions turned off."""
    saved = facts.suppressions
    facts.suppressions = {}
    try:
        return rules.run(facts, conf)
    finally:
        facts.suppressions = saved


def _gate(ctx: Ctx, head: LintResult, base_tree: Tree | None, entries: list[str]) -> list[bench.Blocker]:
    raw = unsuppressed(head.facts, ctx.conf)
    kept = {f.fingerprint for f in head.findings}
    hidden = [f for f in raw if f.fingerprint not in kept]
    base_hidden: frozenset[str] = frozenset()
    if base_tree is not None and any(f.rule in bench.BLOCKING + bench.UNKNOWN for f in hidden):
        base = lint(base_tree, ctx.conf)
        base_kept = {f.fingerprint for f in base.findings}
        base_hidden = frozenset(f.fingerprint for f in unsuppressed(base.facts, ctx.conf)
                                if f.fingerprint not in base_kept)
    return bench.blockers(head.facts, head.findings, entries, raw, base_hidden)


def run(ctx: Ctx, cmd: commands.Bench, note: str) -> None:
    conf, port = ctx.conf, ctx.port
    if conf.bench.max_per_hour == 0:
        ctx.refuse("`/bench` is turned off in this repository (`bench.max-per-hour: 0`).", log="/bench is off")
        return
    recent = [c for c in ctx.previous if own(c.author, ctx.bot_login) and markers.search(_DISPATCH, c.body)
              and ctx.now() - c.created_at < 3600]
    if len(recent) >= conf.bench.max_per_hour:
        ctx.refuse(f"This pull request had {len(recent)} benchmark dispatches in the last hour (the limit is "
                   f"{conf.bench.max_per_hour}); try again later.", log="hourly limit reached")
        return
    pr = port.pull(ctx.number)
    sha = pr.head_sha  # pinned now; checked again right before the dispatch
    if not _SHA40.fullmatch(sha):
        ctx.refuse(f"The pull request's head {md.code(sha)} is not a commit SHA; nothing was run.", log="bad head sha")
        return
    events = None
    runs: list[RunInfo] | None = None
    if bind.needs_proof(cmd.sha):
        try:
            events = port.timeline(ctx.number)
        except GitHubError as exc:
            ctx.out.logs.append(f"benchbot: cannot read the timeline: {exc}")
        try:
            runs = port.head_runs(sha, bind.MAX_RUNS)
        except GitHubError as exc:
            ctx.out.logs.append(f"benchbot: cannot read the workflow runs for {sha[:12]}: {exc}")
    bound = bind.bind(sha, cmd.sha, ctx.comment_at, events, _retry(cmd, sha), runs=runs,
                      head_repo=pr.head_repo, head_ref=pr.head_ref)
    if bound.sha is None:
        ctx.refuse(f"Not dispatched: {bound.how}", log=f"head {sha[:12]} not bound to the command")
        return
    head_tree = _tree(ctx.workspace, sha)
    if head_tree is None:
        ctx.refuse(f"The checkout does not have the pull request's head `{sha[:12]}`: the commands workflow must "
                   "fetch `refs/pull/<n>/head` (see workflows/benchbot-commands.yml). Nothing was run.",
                   log=f"head {sha} not in the checkout")
        return
    base_tree = _tree(ctx.workspace, pr.base_sha)
    head = lint(head_tree, conf)
    base = gather(base_tree, conf.profile) if base_tree is not None else None
    files = port.pull_files(ctx.number)
    changed = {f.path for f in files} | {f.previous_path for f in files if f.previous_path}
    sel = bench.select(head.facts, base, changed, cmd.target, cmd.entries, cmd.all)
    if sel.problem:
        ctx.refuse(f"Nothing to run for {md.code(cmd.target)}: {sel.problem}", log=f"empty selection: {sel.problem}")
        return
    by_name = {e.name: e for e in head.facts.entries}
    jobs = jobs_count.count(by_name[n] for n in sel.entries if n in by_name)
    size = f"\n\nThe selection: {len(sel.entries)} entr{'y' if len(sel.entries) == 1 else 'ies'}, {jobs.text()}."

    def refuse(text: str, log: str) -> None:
        ctx.refuse(text + size, log=log)

    config_files = bench.config_files(head.facts, sel.entries)
    unsafe = bench.unsafe_inputs(sel.entries, config_files)
    if unsafe:
        lines = "\n".join(f"- {u}" for u in unsafe)
        refuse(f"Not dispatched: these inputs would reach the benchmark workflow, and they are not plain "
                   f"names:\n\n{lines}\n\nRename them in the pull request; `--force` does not lift this.",
                   log="refused: unsafe dispatch inputs")
        return
    if len(sel.entries) > bench.MAX_DISPATCH:
        refuse(f"Not dispatched: {len(sel.entries)} entries on {md.code(cmd.target)}, more than the "
                   f"{bench.MAX_DISPATCH} one dispatch takes. Name up to {bench.MAX_DISPATCH} entries "
                   f"(`/bench {cmd.target} <entry> ...`).", log=f"refused: {len(sel.entries)} entries")
        return
    blocked = _gate(ctx, head, base_tree, sel.entries)
    if blocked and not cmd.force:
        lines = "\n".join(f"- {md.code(f'{b.path}:{b.line}') if b.path else '(no launcher)'}: "
                          f"{'suppressed by this pull request: ' if b.suppressed else ''}{md.escape(b.message)}"
                          for b in blocked)
        refuse(f"Not dispatched: benchbot says these entries would not run what this pull request means "
                   f"them to run, or cannot tell what they would run:\n\n{lines}\n\nFix the launcher (see the "
                   f"review), or comment {md.code(f'/bench {cmd.target} --force @{sha}')} to run them anyway.",
                   log="refused: lint blockers")
        return
    if jobs.jobs > conf.bench.max_jobs and not cmd.yes:
        refuse(f"Not dispatched: this selection starts {jobs.text()}, more than the {conf.bench.max_jobs} "
               f"one command may start without confirmation (`bench.max-jobs: {conf.bench.max_jobs}`). To run "
               f"them anyway, comment {_retry(cmd, sha, yes=True)}; or name fewer entries.",
               log=f"refused: {jobs.jobs} jobs > max-jobs {conf.bench.max_jobs}")
        return
    now = port.pull(ctx.number)
    if now.head_sha != sha:
        refuse(f"The pull request's head moved from `{sha[:12]}` to {md.code(now.head_sha[:12])} while this "
                   "command was read; new commits are never run automatically. Comment again to run the new head.",
                   log="head moved")
        return
    values = {"entries": " ".join(sel.entries), "config_files": " ".join(config_files),
              "sha": sha, "pr": str(ctx.number), "label": cmd.target,
              "test_name": f"benchbot #{ctx.number} {cmd.target} {sha[:7]} {_short(ctx.comment_id)}"}
    inputs = {name: bench.render(t, values) for name, t in conf.bench.inputs}
    title = bench.render(conf.bench.run_name, values)
    ctx.note(claim.dispatching_marker(title), f"\u23f3 Dispatching {md.code(title)}\u2026")
    started = ctx.now()
    try:
        if conf.bench.repository_dispatch:
            port.repository_dispatch(conf.bench.repository_dispatch, inputs)
        else:
            ref = conf.bench.ref or port.default_branch()
            port.dispatch_workflow(conf.bench.workflow, ref, inputs,
                                   landed=lambda: port.find_run(conf.bench.workflow, title, started) is not None)
    except GitHubError as exc:
        ctx.out.code = 2
        refuse(f"The dispatch failed ({md.escape(str(exc.status))} {md.escape(exc.message)}); nothing is "
                   "running. Comment again to retry.", log=f"dispatch failed: {exc}")
        return
    ctx.dispatched = True
    ctx.react("rocket")
    url = None
    if not conf.bench.repository_dispatch:
        deadline = ctx.now() + conf.bench.poll_seconds
        while url is None:
            url = port.find_run(conf.bench.workflow, title, started)
            if url is not None or ctx.now() >= deadline:
                break
            ctx.sleep(min(2.0, max(0.1, conf.bench.poll_seconds / 10)))
    entries = "\n".join(f"- {md.code(n)}: {md.escape(sel.why.get(n, ''))}" for n in sel.entries)
    forced = f"\n\n\u26a0\ufe0f Forced past {len(blocked)} lint finding(s)." if blocked else ""
    link = f"[{md.escape(title)}]({md.safe_url(url)})" if url else f"{md.code(title)} (not listed yet)"
    ctx.reply(f"\U0001f680 Dispatched {len(sel.entries)} entr{'y' if len(sel.entries) == 1 else 'ies'} on "
              f"{md.code(cmd.target)} ({', '.join(md.code(x) for x in sel.label_family)}) at pinned head `{sha}` "
              f"({'named in the command' if bound.how.startswith('named') else 'the head when you commented'}):\n\n"
              f"{entries}\n\nThat is {jobs.text()}.\n\nRun: {link}{forced}{note}",
              extra_marker=f"<!-- benchbot:dispatch {ctx.comment_id} -->{claim.run_marker(title)}")
    ctx.out.logs.append(f"benchbot: dispatched {', '.join(sel.entries)} at {sha[:12]}")
