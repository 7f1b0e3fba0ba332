"""``benchbot event``: route a GitHub Actions event to its handler.

The event comes exactly as Actions provides it: GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (the
webhook payload), GITHUB_WORKSPACE (the checkout), GITHUB_STEP_SUMMARY (the job summary
file). Handlers return an :class:`Outcome`; the CLI prints and writes files.

``pull_request`` (opened, synchronize, reopened, ready_for_review): lint the head (the
checkout, or its git revision) and the base (its git revision, read from the same
history: no second checkout), keep what the PR introduces, and post one review with
inline comments on the lines the PR added, plus one summary comment edited in place.
Exactly once, also when runs race (:mod:`bot.github.once`): a run whose head is no longer the
PR's head writes nothing, the review is posted under a claim on the head, and the summary is the
bot's oldest one, the others folded into it. When the analysis itself fails (a bug of ours), the
summary says so for this head instead of keeping the last head's results, and the exit code is 3.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bot.github import once
from bot.github.handling import (
    ACTIONS_BOT,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    Log,
    Options,
    Outcome,
    PortFactory,
    bot_login,
)
from bot.github.pulls import PR_ACTIONS, pull_request

__all__ = ["ACTIONS_BOT", "EXIT_ERROR", "EXIT_FINDINGS", "EXIT_INTERNAL", "EXIT_OK", "PR_ACTIONS", "Log", "Options",
           "Outcome", "PortFactory", "bot_login", "pull_request", "read_event", "route"]


def read_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """(event name, payload) from GITHUB_EVENT_NAME / GITHUB_EVENT_PATH; ValueError if unusable."""
    name = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not name or not path:
        raise ValueError("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set (they are, inside GitHub Actions)")
    try:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the event payload ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: the event payload is not JSON ({exc.msg})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"{path}: the event payload is not a JSON object")
    return name, payload


def route(name: str, payload: dict[str, Any], env: Mapping[str, str], port: PortFactory, opts: Options) -> Outcome:
    opts = replace(opts, run=opts.run or once.run_name(env), debug=opts.debug or bool(env.get("BENCHBOT_DEBUG")))
    workspace = env.get("GITHUB_WORKSPACE") or "."
    if name in ("pull_request", "pull_request_target") and payload.get("action") == "labeled":
        from bot.github.labels import labeled  # the label trigger of /bench

        return labeled(payload, workspace, port, opts)
    if name == "workflow_run":
        from bot.github.results import workflow_run  # a dispatched benchmark finished: report it back

        return workflow_run(payload, workspace, port, opts)
    if name == "pull_request":
        return pull_request(payload, workspace, port, opts)
    if name == "issue_comment":
        from bot.github.comments import issue_comment

        return issue_comment(payload, workspace, port, opts)
    return Outcome(EXIT_OK, logs=[f"benchbot: nothing to do for the {name} event"])
