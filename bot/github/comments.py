"""``issue_comment`` on a pull request: the comment commands ``/bench``, ``/lint``, ``/help``.

Order: ignore bots and the bot's own comments; read the commenter's permission through the
collaborator API (admin, maintain, write, or the configured allow-list: the event's actor alone
is never trusted). Someone without it gets no answer to a near-miss or invalid command (only
the log says why), and at most one "commands need write access" reply per pull request and
hour (:data:`REFUSAL_SECONDS`): nobody can make the bot post at will. Then the earlier replies
decide (:mod:`bot.github.claim`): an answered comment is a redelivery; an open claim is another
run's, or is completed if that run died. Then 👀, the claim, and the command; the answer is an
edit of the claim. ``/bench`` is :mod:`bot.github.benchrun`.

Any failure while answering (a GitHub error, a bug) still ends in one line on the claim and 😕;
a command is never left with 👀 alone.

The configuration comes from the checkout, which the commands workflow makes of the default
branch: a pull request cannot change who may dispatch or what.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.config import Config, ConfigError, load_config
from bot.github import claim, commands, markers
from bot.github.answer import Ctx, Sleep
from bot.github.claim import reply_marker
from bot.github.handling import EXIT_ERROR, EXIT_INTERNAL, EXIT_OK, Options, Outcome, PortFactory, bot_login
from bot.github.port import Comment, GitHubError, Port
from bot.github.pulls import pull_request
from bot.github.review import own
from bot.repo.files.tree import TreeError, WorkTree
from bot.repo.load.configs import load_runners
from bot.report import markdown as md

WRITE_ROLES = frozenset({"admin", "maintain", "write"})
REFUSAL_SECONDS = 3600

__all__ = ["issue_comment", "reply_marker"]


def _refused_marker(login: str) -> str:
    return f"<!-- benchbot:refused {''.join(ch for ch in login.lower() if ch.isalnum() or ch in '-_')} -->"


def _created_at(comment: dict[str, Any]) -> float | None:
    text = comment.get("created_at")
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


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
    ctx: Ctx | None = None
    eyes: Port | None = None  # set once 👀 is on the comment: from then on it must not stay alone
    try:
        port = make_port()
        me = bot_login(conf, port)
        if own(login, me):
            out.logs.append("benchbot: ignoring the bot's own comment")
            return out
        previous = port.issue_comments(number)
        seen = claim.state(previous, comment_id, me)
        if seen.answered is not None:
            out.logs.append(f"benchbot: comment {comment_id} was answered already (a redelivered event)")
            return out
        if seen.claim is not None:
            _open_claim(port, conf, number, comment_id, seen.claim, now(), out)
            return out
        cmd = cmds[0]
        role = port.permission(login)
        allowed = role in WRITE_ROLES or login.lower() in conf.bench.allow
        if not allowed and isinstance(cmd, commands.Invalid):
            out.logs.append(f"benchbot: {login} ({role}) wrote an invalid command; no reply: {cmd.reason}")
            return out
        refused = _refused_marker(login)
        if not allowed and any(own(c.author, me) and markers.has(c.body, refused)
                               and now() - c.created_at < REFUSAL_SECONDS for c in previous):
            out.logs.append(f"benchbot: {login} ({role}) was told within the hour that commands need write access")
            return out
        port.react(comment_id, "eyes")
        eyes = port
        mine = claim.take(port, number, comment_id, me)
        if mine is None:
            out.logs.append(f"benchbot: another run of the bot claimed comment {comment_id} first; nothing done")
            return out
        at = _created_at(comment)
        ctx = Ctx(port, conf, number, comment_id, workspace, out, me, previous, sleep, now, mine,
                  at if at is not None else now())
        if not allowed:
            ctx.refuse(f"Sorry @{md.ZWJ}{md.escape(login)}, commands need write access to this repository "
                       f"(yours: {md.escape(role)}); nothing was run.", log=f"{login} has {role}: refused",
                       extra_marker=refused)
            return out
        more = len(cmds) - 1
        note = f"\n\n(One command per comment: the {more} after the first were not run.)" if more else ""
        if isinstance(cmd, commands.Invalid):
            ctx.refuse(f"{cmd.reason}\n\n{_help(ctx)}", log=f"invalid command: {cmd.reason}")
        elif isinstance(cmd, commands.Help):
            ctx.reply(_help(ctx) + note)
            port.react(comment_id, "rocket")
        elif isinstance(cmd, commands.Runs):
            from bot.github import benchruns

            benchruns.runs(ctx, cmd, note)
        elif isinstance(cmd, commands.Lint):
            _lint(ctx, payload, opts)
        else:
            from bot.github import benchrun

            benchrun.run(ctx, cmd, note)
    except GitHubError as exc:
        out.logs.append(f"benchbot: GitHub error: {exc}")
        out.code = EXIT_ERROR
        _confused(ctx, eyes, comment_id, f"GitHub error: {exc}", out)
    except Exception as exc:  # a bug: say so on the PR in one line, then let the CLI report it (exit 3)
        _confused(ctx, eyes, comment_id, f"internal error ({type(exc).__name__}: {exc})", out)
        raise
    return out


def _confused(ctx: Ctx | None, eyes: Port | None, comment_id: int, reason: str, out: Outcome) -> None:
    """Best effort: 😕 next to 👀, and the claim says what went wrong in one line. Never raises."""
    try:
        if eyes is not None:
            eyes.react(comment_id, "confused")
        if ctx is not None and not ctx.answered and ctx.dispatched:
            ctx.reply(f"\U0001f615 The benchmark was dispatched, then this failed: {md.escape(reason[:300])}. "
                      "See the repository's Actions tab for the run; do not comment again for the same run.",
                      extra_marker=f"<!-- benchbot:dispatch {ctx.comment_id} -->")
        elif ctx is not None and not ctx.answered:
            ctx.reply(f"\U0001f615 Could not finish this command: {md.escape(reason[:300])}. Nothing was "
                      "started; comment again to retry.")
    except GitHubError as exc:
        out.logs.append(f"benchbot: could not report the failure on the pull request: {exc}")


def _open_claim(port: Port, conf: Config, number: int, comment_id: int, open_claim: Comment, now: float,
                out: Outcome) -> None:
    """A claim without an answer: another run's (recent), or a dead run's (completed here)."""
    age = now - open_claim.created_at
    if age < claim.STALE_SECONDS:
        out.logs.append(f"benchbot: comment {comment_id} is being answered by another run (claim "
                        f"{open_claim.id}, {age:.0f}s old); nothing done")
        return
    title = claim.dispatching_title(open_claim.body)
    marker = reply_marker(comment_id)
    if title is None:
        port.edit_issue_comment(open_claim.id, f"{marker}\n\U0001f615 The run of the bot that took this command "
                                "stopped before it dispatched anything. Nothing was started; comment again to retry.")
        port.react(comment_id, "confused")
        out.logs.append(f"benchbot: completed the dead claim {open_claim.id}: nothing had been dispatched")
        return
    me = bot_login(conf, port)
    rocket = (me.lower(), "rocket") in {(u.lower(), c) for u, c in port.reactions(comment_id)}
    url = None if conf.bench.repository_dispatch else port.find_run(conf.bench.workflow, title, open_claim.created_at)
    if rocket or url:
        link = f"[{md.escape(title)}]({md.safe_url(url)})" if url else md.code(title)
        port.edit_issue_comment(open_claim.id, f"{marker}<!-- benchbot:dispatch {comment_id} -->"
                                f"{claim.run_marker(title)}\n\U0001f680 "
                                f"Dispatched by an earlier run of the bot, which stopped before it could say so. "
                                f"Run: {link}")
        port.react(comment_id, "rocket")
        out.logs.append(f"benchbot: completed the dead claim {open_claim.id}: the dispatch had landed")
        return
    port.edit_issue_comment(open_claim.id, f"{marker}\n\U0001f615 The run of the bot that took this command stopped "
                            f"while dispatching {md.code(title)}, and no such run can be found: it most likely did "
                            "not start (check the Actions tab). Nothing was started again; comment again to retry.")
    port.react(comment_id, "confused")
    out.logs.append(f"benchbot: completed the dead claim {open_claim.id}: no run found")


def _lint(ctx: Ctx, payload: dict[str, Any], opts: Options) -> None:
    pr = ctx.port.pull(ctx.number)
    synthetic = {"action": "synchronize", "repository": payload.get("repository") or {},
                 "pull_request": {"number": pr.number, "draft": False, "head": {"sha": pr.head_sha},
                                  "base": {"sha": pr.base_sha, "ref": pr.base_ref}}}
    result = pull_request(synthetic, ctx.workspace, lambda: ctx.port, opts)
    ctx.out.logs += result.logs
    ctx.out.findings, ctx.out.stats, ctx.out.root = result.findings, result.stats, result.root
    ctx.out.head_findings = result.head_findings
    ok = result.code not in (EXIT_ERROR, EXIT_INTERNAL)
    if result.code == EXIT_INTERNAL:
        ctx.out.code = EXIT_INTERNAL
    counts: dict[str, int] | None = getattr(result, "counts", None)
    ctx.out.counts = counts
    ctx.reply(f"Re-ran the review of `{pr.head_sha[:12]}`{_counts(counts, pr.base_ref)}." if ok else
              "Could not re-run the review: " + md.escape("; ".join(result.logs[-1:])))
    ctx.react("rocket" if ok else "confused")


def _counts(counts: dict[str, int] | None, base: str) -> str:
    """``: 2 new findings (1 inline), 5 already on main, fixes 1`` (nothing when the counts are unknown)."""
    if not counts:
        return ""
    new, inline = counts.get("new", 0), counts.get("inline", 0)
    return (f": {new} new finding{'' if new == 1 else 's'} ({inline} inline), {counts.get('old', 0)} already on "
            f"{md.escape(base or 'the base')}, fixes {counts.get('fixed', 0)}")


def _help(ctx: Ctx) -> str:
    """The help text with the runner labels of the default-branch checkout and the configured label trigger."""
    try:
        labels = list(load_runners(WorkTree(ctx.workspace), list(ctx.conf.profile.runners)).labels)
    except TreeError:
        labels = []
    return commands.help_text(labels, ctx.conf.bench.labels, ctx.conf.bench.max_jobs)
