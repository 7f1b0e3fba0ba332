"""``pull_request`` (opened, synchronize, reopened, ready_for_review): lint the head (the
checkout, or its git revision) and the base (its git revision, read from the same history: no
second checkout), keep what the PR introduces, and post one review with inline comments on the
lines the PR added, plus one summary comment edited in place (``bot.github.event`` routes here).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from typing import Any

from bot.config import Config, ConfigError, load_config
from bot.external.places import TOOL_CONFIGS
from bot.github import chains, evidence, once, parity, plans, policy, review, workflows_gate
from bot.github.diff import Changes
from bot.github.diff import changes as diff_changes
from bot.github.handling import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    Options,
    Outcome,
    PortFactory,
    bot_login,
)
from bot.github.port import Comment, GitHubError, Port
from bot.lint import lint
from bot.newonly import with_change
from bot.repo.files.git import GitTree
from bot.repo.files.tree import Tree, TreeError, WorkTree
from bot.report import Stats
from bot.rules.changelog_missing import check_change

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})


def _trees(workspace: str, head_sha: str, base_sha: str) -> tuple[Tree, Tree]:
    try:
        proc = subprocess.run(["git", "-C", workspace, "rev-parse", "--is-bare-repository", "HEAD"],
                              capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TreeError(f"cannot run git: {exc}") from None
    bare, _, checked_out = proc.stdout.strip().partition("\n") if proc.returncode == 0 else ("", "", "")
    if bare == "true":
        checked_out = ""  # no work tree: read the head from git too
    head: Tree = WorkTree(workspace) if checked_out == head_sha else GitTree(workspace, head_sha)
    try:
        base: Tree = GitTree(workspace, base_sha)
    except TreeError:
        raise TreeError(f"the base commit {base_sha} is not in the history of {workspace}: check the "
                        "repository out with fetch-depth: 0 (actions/checkout) so that the pull request's base "
                        "can be read") from None
    return head, base


def _pr_fields(payload: dict[str, Any]) -> tuple[int, str, str, str, bool, str]:
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        raise ValueError("the pull_request event payload has no pull_request object")
    try:
        return (int(pr["number"]), str(pr["head"]["sha"]), str(pr["base"]["sha"]), str(pr["base"].get("ref", "")),
                bool(pr.get("draft", False)), str(payload.get("repository", {}).get("html_url", "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"the pull_request event payload lacks {exc}") from None


def _pr_link(payload: dict[str, Any], repo_url: str, number: int) -> str | None:
    """The pull request's address (what a new changelog entry's ``pr-link`` says), from the payload."""
    url = payload["pull_request"].get("html_url")
    if isinstance(url, str) and url and not url.isspace():
        return url.strip()
    return f"{repo_url}/pull/{number}" if repo_url else None


def _description(payload: dict[str, Any]) -> str:
    """The pull request's description (untrusted text; empty when there is none)."""
    body = payload["pull_request"].get("body")
    return body if isinstance(body, str) else ""


def pull_request(payload: dict[str, Any], workspace: str, make_port: PortFactory, opts: Options) -> Outcome:
    action = str(payload.get("action", ""))
    if action not in PR_ACTIONS:
        return Outcome(EXIT_OK, logs=[f"benchbot: nothing to do for pull_request {action or '(no action)'}"])
    try:
        number, head_sha, base_sha, base_ref, draft, repo_url = _pr_fields(payload)
    except ValueError as exc:
        return Outcome(EXIT_ERROR, logs=[f"benchbot: {exc}"])
    if draft:
        return Outcome(EXIT_OK, logs=[f"benchbot: #{number} is a draft; it is reviewed when marked ready"])
    try:
        head_tree, base_tree = _trees(workspace, head_sha, base_sha)
        # policy from the base: a pull request cannot change its own gate (what it changes is shown)
        conf = load_config(base_tree, opts.config)
    except (TreeError, ConfigError) as exc:
        return Outcome(EXIT_ERROR, logs=[f"benchbot: {exc}"])
    head_conf: Config | None = None
    head_error: str | None = None
    if opts.config is None:
        try:
            head_conf = load_config(head_tree)
        except ConfigError as exc:
            head_error = str(exc)
    if opts.fail_on is not None:
        conf = replace(conf, fail_on=opts.fail_on)
    try:
        base = lint(base_tree, conf)
        # inline suppressions the base has count; those the pull request adds are shown, not obeyed
        known = policy.suppression_keys(base.read_facts.suppressions)
        head = lint(head_tree, conf, honoured=lambda s: policy.suppression_key(s) in known)
        added = policy.added_suppressions(head.facts.suppressions, known)
        checked = workflows_gate.review(base_tree, head_tree, base, head, conf, known)  # zizmor, actionlint
        added += checked.added
        change = check_change(base_tree, head_tree, base.read_facts, head.facts, conf,  # changelog-missing
                              pr_link=_pr_link(payload, repo_url, number))
    except Exception as exc:  # a bug of ours, never "findings": say so on the PR, one line, exit 3
        out = _not_analysed(number, head_sha, base_sha, base_ref or base_sha[:12], _reason(exc), conf, make_port)
        if opts.debug:
            raise
        return out
    out = Outcome(EXIT_OK, head_findings=head.findings, stats=head.stats, root=head_tree.root)

    def settle(parts: plans.Split) -> plans.Split:
        """What the PR introduces decides the exit code and the job log."""
        out.code = EXIT_FINDINGS if any(f.severity >= conf.fail_on for f in parts.new) else EXIT_OK
        out.findings = parts.new
        out.logs[:1] = [f"benchbot: #{number} at {head_sha[:12]}: {len(parts.new)} new, {len(parts.old)} already "
                        f"on {base_ref or base_sha[:12]}, fixes {len(parts.fixed)}"]
        return parts

    parts = settle(with_change(review.split(head.findings, base.findings), change))  # renames: the PR's files say

    def link(path: str, line: int) -> str:
        return f"{repo_url}/blob/{head_sha}/{path}" + (f"#L{line}" if line >= 1 else "")

    try:
        port = make_port()
        pr_files = port.pull_files(number)
        renames = review.renamed(pr_files)
        parts = settle(with_change(review.split(head.findings, base.findings, renames), change))
        changed = diff_changes(pr_files)
        reminder = conf.github.recipe_reminder if conf.github.reminds([f.path for f in pr_files]) else None
        recipes = parity.for_pull_request(conf, base_tree, base.read_facts, head.facts, pr_files, os.environ,
                                          link if repo_url else None)
        parts = settle(with_change(parts, list(recipes.findings)))
        reminder = parity.reminder(recipes, reminder)
        login = bot_login(conf, port)
        spec = evidence.spec_change(pr_files, base.read_facts.entries, head.facts.entries, head_tree.read)
        ctx = plans.Context(head_sha, base_sha, base_ref or base_sha[:12], login, head.stats, reminder,
                             conf.github.inline_comments, link if repo_url else None,
                             policy.notice(conf, head_conf, head_error, parts.new + parts.old, added,
                                           [f.path for f in pr_files if f.path in TOOL_CONFIGS]),
                             review.fixed_findings(base.findings, parts, renames),
                             spec, _description(payload), recipes.lines, checked.lines,
                             chains.section(conf, base, head, [f.path for f in pr_files]),
                             chains.artifact_line(os.environ, repo_url))
        comments = port.issue_comments(number)
        plan = review.plan(parts, changed, comments, port.review_comments(number), ctx)
        out.step_summary = _job_summary(plan)
        if _moved(port, number, head_sha, out):
            return out
        out.counts = _counts(parts, plan)
        if not plan.review and not plan.resolve and not plan.update and not _threads_open(port, number, plan):
            out.logs.append(f"benchbot: {once.write_summary(port, number, login, plan.summary, comments)}")
            return out
        taken = once.take(port, number, login, head_sha, opts.run)
        if taken.held is None:
            who = f"run {taken.holder.run}" if taken.holder else "another run"
            out.logs.append(f"benchbot: {who} is posting the review of {head_sha[:12]}; this run leaves the "
                            "review and the summary to it")
            return out
        try:
            # under the claim, from what is there now: another run may have posted for this head
            plan = review.plan(parts, changed, taken.comments, port.review_comments(number), ctx)
            out.step_summary = _job_summary(plan)
            _apply(port, number, head_sha, plan, parts, changed, ctx, out, taken.comments)
        finally:
            once.release(port, taken.held)
    except GitHubError as exc:
        if exc.forbidden:
            out.logs.append(f"benchbot: GitHub refused to {exc.operation} (403 {exc.message}): this token cannot "
                            "write to the pull request (pull requests from forks get a read-only token); the "
                            "review is in the job summary and the annotations instead")
            if out.step_summary is None:
                out.step_summary = _fallback_summary(parts, head_sha)
            return out
        out.logs.append(f"benchbot: GitHub error: {exc}")
        out.code = EXIT_ERROR
    return out


def _threads_open(port: Port, number: int, plan: plans.Plan) -> bool:
    """Whether a comment marked resolved still has an open thread (an earlier run could not resolve it)."""
    if not plan.recheck:
        return False
    want = {c.id for c in plan.recheck}
    try:
        return any(t.comment_ids and t.comment_ids[0] in want and not t.resolved for t in port.review_threads(number))
    except GitHubError as exc:
        if exc.transient:
            raise
        return False


def _moved(port: Port, number: int, head_sha: str, out: Outcome) -> bool:
    """The PR's head is no longer ours: the run for the new head writes (ours would be stale)."""
    now = port.pull(number).head_sha
    if now != head_sha:
        out.logs.append(f"benchbot: #{number} moved on to {now[:12]} while {head_sha[:12]} was checked; "
                        "the run for the new head posts the review")
    return now != head_sha


def _reason(exc: Exception) -> str:
    """One line: the exception and the innermost place it came from (no traceback)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}" if tb is not None else ""
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"


def _not_analysed(number: int, head_sha: str, base_sha: str, base_ref: str, reason: str, conf: Config,
                  make_port: PortFactory) -> Outcome:
    body = review.failure_summary(head_sha, base_sha, base_ref, reason)
    out = Outcome(EXIT_INTERNAL, step_summary=body.replace(review.SUMMARY_MARKER + "\n", "", 1),
                  logs=[f"benchbot: internal error: could not analyse {head_sha[:12]}: {reason} (a bug in "
                        "benchbot; BENCHBOT_DEBUG=1 shows the traceback)"])
    try:
        port = make_port()
        login = bot_login(conf, port)
        comments = port.issue_comments(number)
        if not _moved(port, number, head_sha, out):
            out.logs.append(f"benchbot: {once.write_summary(port, number, login, body, comments)}")
    except GitHubError as exc:
        out.logs.append(f"benchbot: GitHub error: {exc}")
    return out


def _apply(port: Port, number: int, head_sha: str, plan: plans.Plan, parts: plans.Split,
           changed: Changes, ctx: plans.Context, out: Outcome, comments: list[Comment]) -> None:
    if plan.review:
        try:
            port.create_review(number, head_sha, plan.review_body, plan.review)
            out.logs.append(f"benchbot: posted {len(plan.review)} inline comments")
        except GitHubError as exc:
            if exc.status != 422:
                raise
            # GitHub would not place a comment (the diff moved under us): everything goes to the summary.
            out.logs.append(f"benchbot: GitHub refused the inline comments ({exc.message}); "
                            "they are in the summary comment instead")
            fallback = review.plan(parts, changed, [], [], replace(ctx, inline_comments=False))
            plan = replace(fallback, resolve=plan.resolve, recheck=plan.recheck, update=plan.update,
                           summary_id=plan.summary_id)
            out.step_summary = _job_summary(plan)
    for u in plan.update:
        port.edit_review_comment(number, u.comment.id, u.body)
    if plan.update:
        out.logs.append(f"benchbot: added new causes to {len(plan.update)} inline comments on the same lines")
    _resolve(port, number, plan, out)
    out.counts = _counts(parts, plan)
    out.logs.append(f"benchbot: {once.write_summary(port, number, ctx.bot_login, plan.summary, comments)}")


def _resolve(port: Port, number: int, plan: plans.Plan, out: Outcome) -> None:
    """Fixed causes: one reply (unless an earlier run made it), the body marked resolved, the
    thread resolved; and threads of comments marked resolved earlier that are still open."""
    for r in plan.resolve:
        if r.reply is not None:
            port.reply_to_review_comment(number, r.comment.id, r.reply)
        port.edit_review_comment(number, r.comment.id, r.body)
    if plan.resolve:
        out.logs.append(f"benchbot: marked {len(plan.resolve)} fixed inline comments resolved")
    want = {r.comment.id for r in plan.resolve} | {c.id for c in plan.recheck}
    if not want:
        return
    try:
        threads = port.review_threads(number)
        todo = [t for t in threads if t.comment_ids and t.comment_ids[0] in want and not t.resolved]
        for t in todo:
            port.resolve_review_thread(t.id)
        if todo:
            out.logs.append(f"benchbot: resolved {len(todo)} review threads")
    except GitHubError as exc:
        if exc.transient:
            raise
        # the comments say "resolved" already; only the thread's state is left (a token without
        # pull-requests: write, or GraphQL refused): the next run tries again
        out.logs.append(f"benchbot: could not resolve the review threads ({exc}); the token needs "
                        "pull-requests: write")


def _counts(parts: plans.Split, plan: plans.Plan) -> dict[str, int]:
    return {"new": len(parts.new), "old": len(parts.old), "fixed": len(parts.fixed), "inline": plan.comments}


def _job_summary(plan: plans.Plan) -> str:
    return plan.summary.replace(review.SUMMARY_MARKER + "\n", "", 1)


def _fallback_summary(parts: plans.Split, head_sha: str) -> str:
    from bot.report import markdown as md

    return md.render(parts.new, Stats(0, 0, 0, 0, 0.0), title="benchbot") + f"\nChecked at head `{head_sha}`\n"
