"""What every handler of ``benchbot event`` shares: its options, its outcome, the exit codes,
and who the bot is. The router (``bot.github.event``) and the handlers (``pulls``,
``comments``, ``labels``, ``results``) import these; no handler imports the router.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.findings import Finding, Severity
from bot.github.port import Port
from bot.report import Stats
from bot.settings import Config

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
ACTIONS_BOT = "github-actions[bot]"

Log = Callable[[str], None]
PortFactory = Callable[[], Port]


@dataclass
class Outcome:
    code: int
    findings: list[Finding] | None = None  # what the PR introduces, for the job log (the CLI renders them)
    head_findings: list[Finding] | None = None  # everything on the head, for the SARIF report
    stats: Stats | None = None
    root: str = ""
    step_summary: str | None = None  # markdown for GITHUB_STEP_SUMMARY
    logs: list[str] = field(default_factory=list)
    counts: dict[str, int] | None = None  # the review's counts: new, old, fixed, inline (for /lint's answer)


@dataclass(frozen=True)
class Options:
    config: str | None = None
    fail_on: Severity | None = None
    run: str = ""  # this run's name in claims (bot.github.once.run_name); route() sets it
    debug: bool = False  # BENCHBOT_DEBUG: re-raise an internal error after reporting it


def bot_login(conf: Config, port: Port) -> str:
    """Whose comments are the bot's: the configured login, else the token's own (GET /user),
    else the Actions bot (GitHub refuses GET /user to the token it gives a workflow)."""
    return conf.github.bot_login or port.login() or ACTIONS_BOT
