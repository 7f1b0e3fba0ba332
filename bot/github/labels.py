"""The label trigger of ``/bench``: ``bench.labels: {"bench-mi325x": "mi325x"}`` maps a pull request
label to a target; adding it runs ``/bench <target>`` on the head the event names.

Order: only a configured label; the labeller (the payload's ``sender``) must have write access
(the collaborator-permission API, as for comments; a reader's label is ignored: logged, no reply,
the label left alone). The labelling is keyed by the id of the timeline's ``labeled`` event for
that label and labeller (the newest), and claimed like a command comment
(:mod:`bot.github.claim`, key ``label-<id>``): a redelivered event or a second run finds the claim
or the answer and does nothing. The answer is a PR comment. Then the same path as
``/bench <target> @<head>`` (:func:`bot.github.benchrun.run`): the head in the payload is pinned,
and refused if it is no longer the pull request's head. After a dispatch the label is removed.
A claim left open by a run that died is not completed here (the comment path does that for
comments); it is logged, and adding the label again makes a new labelling.
The configuration comes from the checkout, the BASE (default) branch: a pull request cannot map
its own labels.
"""

from __future__ import annotations

import time
from typing import Any

from bot.config import ConfigError, load_config
from bot.github import claim, commands
from bot.github.handling import EXIT_ERROR, EXIT_OK, Options, Outcome, PortFactory, bot_login
from bot.github.port import GitHubError
from bot.repo.files.tree import TreeError, WorkTree
from bot.report import markdown as md

WRITE_ROLES = frozenset({"admin", "maintain", "write"})


def labeled(payload: dict[str, Any], workspace: str, make_port: PortFactory, opts: Options) -> Outcome:
    from bot.github import benchrun
    from bot.github.answer import Ctx

    label = str((payload.get("label") or {}).get("name") or "")
    sender = str((payload.get("sender") or {}).get("login") or "")
    pr = payload.get("pull_request") or {}
    try:
        number, head = int(pr["number"]), str(pr["head"]["sha"])
    except (KeyError, TypeError, ValueError):
        return Outcome(EXIT_ERROR, logs=["benchbot: the labeled payload lacks the pull request number or head"])
    try:
        conf = load_config(WorkTree(workspace), opts.config)
    except (TreeError, ConfigError) as exc:
        return Outcome(EXIT_ERROR, logs=[f"benchbot: {exc}"])
    target = dict(conf.bench.labels).get(label)
    if target is None:
        return Outcome(EXIT_OK, logs=[f"benchbot: label {label!r} is not in bench.labels: nothing to do"])
    out = Outcome(EXIT_OK)
    try:
        port = make_port()
        me = bot_login(conf, port)
        role = port.permission(sender)
        if role not in WRITE_ROLES and sender.lower() not in conf.bench.allow:
            out.logs.append(f"benchbot: {sender} ({role}) added {label}; labels need write access: ignored")
            return out
        events = [e for e in port.timeline(number) if e.kind == "labeled" and e.label == label
                  and e.actor.lower() == sender.lower() and e.id is not None]
        if not events:
            out.logs.append(f"benchbot: no labeled event for {label} by {sender} in the timeline of #{number}")
            out.code = EXIT_ERROR
            return out
        event = events[-1]
        key = f"label-{event.id}"
        previous = port.issue_comments(number)
        seen = claim.state(previous, key, me)
        if seen.answered is not None or seen.claim is not None:
            out.logs.append(f"benchbot: the labelling {key} was answered or is being answered already")
            if seen.answered is not None and "benchbot:dispatch" in seen.answered.body:
                port.remove_label(number, label)
            return out
        mine = claim.take(port, number, key, me)
        if mine is None:
            out.logs.append(f"benchbot: another run of the bot claimed the labelling {key} first; nothing done")
            return out
        ctx = Ctx(port, conf, number, key, workspace, out, me, previous, time.sleep, time.time, mine,
                  event.at if event.at is not None else time.time())
        try:
            if not commands._TARGET.fullmatch(target.lower()) or target.lower() in commands.SUBCOMMANDS:
                ctx.refuse(f"`bench.labels` maps {md.code(label)} to {md.code(target)}, which is not a runner "
                           "label; nothing was run.", log=f"bad label target {target!r}")
                return out
            current = port.pull(number).head_sha
            if current != head:
                ctx.refuse(f"The label {md.code(label)} was added at head `{head[:12]}`, but the pull request's "
                           f"head is now {md.code(current[:12])}; nothing was run. Add the label again to run "
                           "the new head.", log="label: head moved")
                return out
            benchrun.run(ctx, commands.Bench(target.lower(), sha=head), f"\n\n(Started by the label "
                         f"{md.code(label)}, added by @{md.ZWJ}{md.escape(sender)}.)")
        finally:
            if not ctx.answered and ctx.dispatched:
                ctx.reply("\U0001f615 The benchmark was dispatched, then this run of the bot failed; see the "
                          "Actions tab for the run.", extra_marker=f"<!-- benchbot:dispatch {key} -->")
            elif not ctx.answered:
                ctx.reply("\U0001f615 Could not finish the labelled benchmark; nothing was started. Add the "
                          "label again to retry.")
        if ctx.dispatched:
            port.remove_label(number, label)
    except GitHubError as exc:
        out.logs.append(f"benchbot: GitHub error: {exc}")
        out.code = EXIT_ERROR
    return out
