"""``issue_comment`` on a pull request: the comment commands ``/bench``, ``/lint``, ``/help``.

Order of a ``/bench``: ignore bots; skip a comment already answered (the bot's reply carries
a hidden marker naming the comment: a redelivered event dispatches nothing); 👀; check the
commenter's permission through the collaborator API (admin, maintain, write, or the
configured allow-list: the event's actor alone is never trusted); pin the PR head; select
entries; refuse what lint says would run the wrong script (unless ``--force``); keep the
per-PR hourly limit; re-read the PR and refuse if its head moved; one dispatch; 🚀 and a
reply with the entries, the label, the pinned SHA and a link to the run.

The configuration comes from the checkout, which the commands workflow makes of the
default branch: a pull request cannot change who may dispatch or what.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.config import Config, ConfigError, load_config
from bot.github import bench, commands
from bot.github.event import EXIT_ERROR, EXIT_OK, Options, Outcome, PortFactory, bot_login, pull_request
from bot.github.port import Comment, GitHubError, Port
from bot.github.review import own
from bot.lint import lint
from bot.repo.facts import gather
from bot.repo.git import GitTree
from bot.repo.tree import Tree, TreeError, WorkTree
from bot.report import markdown as md

WRITE_ROLES = frozenset({"admin", "maintain", "write"})
_DISPATCH = re.compile(r"<!-- benchbot:dispatch (\d+) -->")
Sleep = Callable[[float], None]


def reply_marker(comment_id: int) -> str:
    return f"<!-- benchbot:reply {comment_id} -->"


def issue_comment(payload: dict[str, Any], workspace: str, make_port: PortFactory, opts: Options,
                  sleep: Sleep = time.sleep, now: Callable[[], float] = time.time) -> Outcome:
    if payload.get("action") != "created":
        return Outcome(EXIT_OK, logs=[f"benchbot: nothing to do for issue_comment {payload.get('action')}"])
    issue = payload.get("issue") or {}
    comment = payload.get("comment") or {}
    user = comment.get("user") or {}
    login, kind = str(user.get("login", "")), str(user.get("type", ""))
    if not issue.get("pull_request"):
        return Outcome(EXIT_OK, logs=["benchbot: a comment on an issue, not a pull request: nothing to do"])
    if kind == "Bot" or login.endswith("[bot]"):
        return Outcome(EXIT_OK, logs=[f"benchbot: ignoring a comment by the bot account {login}"])
    cmds = commands.parse(str(comment.get("body") or ""))
    if not cmds:
        return Outcome(EXIT_OK, logs=["benchbot: no command in the comment"])
    try:
        number, comment_id = int(issue["number"]), int(comment["id"])
    except (KeyError, TypeError, ValueError):
        return Outcome(EXIT_ERROR, logs=["benchbot: the issue_comment payload lacks the issue number or comment id"])
    try:
        conf = load_config(WorkTree(workspace), opts.config)
    except (TreeError, ConfigError) as exc:
        return Outcome(EXIT_ERROR, logs=[f"benchbot: {exc}"])
    out = Outcome(EXIT_OK)
    try:
        port = make_port()
        me = bot_login(conf, port)
        if own(login, me):
            out.logs.append("benchbot: ignoring the bot's own comment")
            return out
        marker = reply_marker(comment_id)
        previous = port.issue_comments(number)
        if any(own(c.author, me) and marker in c.body for c in previous):
            out.logs.append(f"benchbot: comment {comment_id} was answered already (a redelivered event)")
            return out
        port.react(comment_id, "eyes")
        ctx = _Ctx(port, conf, number, comment_id, marker, workspace, out, me, previous, sleep, now)
        role = port.permission(login)
        if role not in WRITE_ROLES and login.lower() not in conf.bench.allow:
            ctx.refuse(f"Sorry @{md.ZWJ}{md.escape(login)}, commands need write access to this repository "
                       f"(yours: {md.escape(role)}); nothing was run.", log=f"{login} has {role}: refused")
            return out
        cmd = cmds[0]
        more = len(cmds) - 1
        note = f"\n\n(One command per comment: the {more} after the first were not run.)" if more else ""
        if isinstance(cmd, commands.Invalid):
            ctx.refuse(f"{cmd.reason}\n\n{commands.help_text()}", log=f"invalid command: {cmd.reason}")
        elif isinstance(cmd, commands.Help):
            ctx.reply(commands.help_text() + note)
        elif isinstance(cmd, commands.Lint):
            _lint(ctx, payload, opts)
        else:
            _bench(ctx, cmd, note)
    except GitHubError as exc:
        out.logs.append(f"benchbot: GitHub error: {exc}")
        out.code = EXIT_ERROR
    return out


@dataclass
class _Ctx:
    """One command being answered: where to reply, and what is known so far."""

    port: Port
    conf: Config
    number: int
    comment_id: int
    marker: str  # the hidden marker every reply to this comment carries
    workspace: str
    out: Outcome
    bot_login: str
    previous: list[Comment]  # the PR's conversation comments when the command was read
    sleep: Sleep
    now: Callable[[], float]

    def reply(self, text: str, extra_marker: str = "") -> None:
        self.port.create_issue_comment(self.number, f"{self.marker}{extra_marker}\n{text}")

    def refuse(self, text: str, log: str) -> None:
        self.out.logs.append(f"benchbot: {log}")
        self.reply(text)
        self.port.react(self.comment_id, "confused")


def _lint(ctx: _Ctx, payload: dict[str, Any], opts: Options) -> None:
    pr = ctx.port.pull(ctx.number)
    synthetic = {"action": "synchronize", "repository": payload.get("repository") or {},
                 "pull_request": {"number": pr.number, "draft": False, "head": {"sha": pr.head_sha},
                                  "base": {"sha": pr.base_sha, "ref": pr.base_ref}}}
    result = pull_request(synthetic, ctx.workspace, lambda: ctx.port, opts)
    ctx.out.logs += result.logs
    ctx.out.findings, ctx.out.stats, ctx.out.root = result.findings, result.stats, result.root
    ctx.out.head_findings = result.head_findings
    ok = result.code != EXIT_ERROR
    ctx.reply(f"Re-ran the review of `{pr.head_sha[:12]}`." if ok else
              "Could not re-run the review: " + md.escape("; ".join(result.logs[-1:])))
    ctx.port.react(ctx.comment_id, "rocket" if ok else "confused")


def _tree(workspace: str, sha: str) -> Tree | None:
    try:
        return GitTree(workspace, sha)
    except TreeError:
        return None


def _bench(ctx: _Ctx, cmd: commands.Bench, note: str) -> None:
    conf, port = ctx.conf, ctx.port
    if conf.bench.max_per_hour == 0:
        ctx.refuse("`/bench` is turned off in this repository (`bench.max-per-hour: 0`).", log="/bench is off")
        return
    recent = [c for c in ctx.previous if own(c.author, ctx.bot_login) and _DISPATCH.search(c.body)
              and ctx.now() - c.created_at < 3600]
    if len(recent) >= conf.bench.max_per_hour:
        ctx.refuse(f"This pull request had {len(recent)} benchmark dispatches in the last hour (the limit is "
                   f"{conf.bench.max_per_hour}); try again later.", log="hourly limit reached")
        return
    pr = port.pull(ctx.number)
    sha = pr.head_sha  # pinned now; checked again right before the dispatch
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
        ctx.refuse(f"Nothing to run for `{cmd.target}`: {sel.problem}", log=f"empty selection: {sel.problem}")
        return
    blocked = bench.blockers(head.findings, sel.entries)
    if blocked and not cmd.force:
        lines = "\n".join(f"- `{f.path}:{f.line}`: {md.escape(f.message)}" for f in blocked)
        ctx.refuse(f"Not dispatched: benchbot says these entries would not run what this pull request means "
                   f"them to run:\n\n{lines}\n\nFix the launcher (see the review), or comment "
                   f"`/bench {cmd.target} --force` to run them anyway.", log="refused: lint blockers")
        return
    now = port.pull(ctx.number)
    if now.head_sha != sha:
        ctx.refuse(f"The pull request's head moved from `{sha[:12]}` to `{now.head_sha[:12]}` while this command "
                   "was read; new commits are never run automatically. Comment again to run the new head.",
                   log="head moved")
        return
    if (ctx.bot_login.lower(), "rocket") in {(u.lower(), c) for u, c in port.reactions(ctx.comment_id)}:
        # dispatched by an earlier delivery of this event whose reply never landed
        ctx.out.logs.append(f"benchbot: comment {ctx.comment_id} has the bot's rocket: dispatched already")
        ctx.reply("This command was dispatched already (an earlier run of the bot); nothing new was started.")
        return
    values = {"entries": " ".join(sel.entries), "config_files": " ".join(bench.config_files(head.facts, sel.entries)),
              "sha": sha, "pr": str(ctx.number), "label": cmd.target,
              "test_name": f"benchbot #{ctx.number} {cmd.target} {sha[:7]} c{ctx.comment_id}"}
    inputs = {name: bench.render(t, values) for name, t in conf.bench.inputs}
    title = bench.render(conf.bench.run_name, values)
    started = ctx.now()
    try:
        if conf.bench.repository_dispatch:
            port.repository_dispatch(conf.bench.repository_dispatch, inputs)
        else:
            ref = conf.bench.ref or port.default_branch()
            port.dispatch_workflow(conf.bench.workflow, ref, inputs,
                                   landed=lambda: port.find_run(conf.bench.workflow, title, started) is not None)
    except GitHubError as exc:
        ctx.out.code = EXIT_ERROR
        ctx.refuse(f"The dispatch failed ({md.escape(str(exc.status))} {md.escape(exc.message)}); nothing is "
                   "running. Comment again to retry.", log=f"dispatch failed: {exc}")
        return
    port.react(ctx.comment_id, "rocket")
    url = None
    if not conf.bench.repository_dispatch:
        deadline = ctx.now() + conf.bench.poll_seconds
        while url is None:
            url = port.find_run(conf.bench.workflow, title, started)
            if url is not None or ctx.now() >= deadline:
                break
            ctx.sleep(min(2.0, max(0.1, conf.bench.poll_seconds / 10)))
    entries = "\n".join(f"- `{n}`: {md.escape(sel.why.get(n, ''))}" for n in sel.entries)
    forced = f"\n\n\u26a0\ufe0f Forced past {len(blocked)} lint finding(s)." if blocked else ""
    link = f"[{md.escape(title)}]({md.safe_url(url)})" if url else f"`{md.escape(title)}` (not listed yet)"
    ctx.reply(f"\U0001f680 Dispatched {len(sel.entries)} entr{'y' if len(sel.entries) == 1 else 'ies'} on "
              f"`{cmd.target}` ({', '.join(f'`{x}`' for x in sel.label_family)}) at pinned head `{sha}`:\n\n"
              f"{entries}\n\nRun: {link}{forced}{note}", extra_marker=f"<!-- benchbot:dispatch {ctx.comment_id} -->")
    ctx.out.logs.append(f"benchbot: dispatched {', '.join(sel.entries)} at {sha[:12]}")
