"""``benchbot event``'s options, and the environment it reads, for ``event --help``.

The variables are read where they are used (``bot.github.event``, ``bot.github.adapter``,
``bot.github.once``, ``bot.cache``, ``bot.cachetrust``, the CLI); this table only says
what each is for, and tests/test_cli_help.py checks that it names every one of them.
"""

from __future__ import annotations

import argparse

SEVERITIES = ("error", "warning", "info")

# (name, what it is for): one line each, in the order a workflow author needs them.
ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("GITHUB_EVENT_NAME", "the event: pull_request(_target), issue_comment or workflow_run"),
    ("GITHUB_EVENT_PATH", "the file with the event's webhook payload (JSON)"),
    ("GITHUB_TOKEN", "the token comments, reviews and dispatches are made with (required)"),
    ("GITHUB_REPOSITORY", "owner/name of the repository (required)"),
    ("GITHUB_API_URL", "the REST API (default https://api.github.com; GHES sets its own)"),
    ("GITHUB_WORKSPACE", "the checkout the head and the base are read from (default: .)"),
    ("GITHUB_STEP_SUMMARY", "the job summary file the report is appended to (unset: none)"),
    ("GITHUB_RUN_ID", "names this run in the claims that make each write happen once"),
    ("GITHUB_RUN_ATTEMPT", "this run's attempt, with GITHUB_RUN_ID (default 1)"),
    ("GITHUB_ACTIONS", "true (or CI set): the cache is used only with BENCHBOT_CACHE_KEY"),
    ("BENCHBOT_GITHUB_RETRIES", "retries of a failed API call (default 5)"),
    ("BENCHBOT_GITHUB_BACKOFF", "seconds before the first retry, doubled each time (default 1.0)"),
    ("BENCHBOT_GITHUB_MAX_WAIT", "the longest wait for a rate limit or Retry-After (default 120 s)"),
    ("BENCHBOT_GITHUB_WRITE_INTERVAL", "seconds between two writes to GitHub (default 1.0)"),
    ("BENCHBOT_CACHE_KEY", "a secret (32+ characters) sealing the cache; in CI, none: no cache"),
    ("BENCHBOT_CACHE_DIR", "where the persistent cache is (default: the user cache folder)"),
    ("BENCHBOT_NO_CACHE", "1: no persistent cache (as --no-cache)"),
    ("BENCHBOT_RECIPES_API_URL", "where the recipe repositories are read (default https://api.github.com)"),
    ("BENCHBOT_RECIPES_TOKEN", "a token for them (default: GITHUB_TOKEN when it is for that same server)"),
    ("BENCHBOT_MAP_ARTIFACT", "the artifact the workflow uploads the map in: the summary links it"),
    ("BENCHBOT_ZIZMOR", "the zizmor executable (default: beside python, else PATH; empty: not run)"),
    ("BENCHBOT_ACTIONLINT", "the actionlint executable (the same lookup)"),
    ("BENCHBOT_SHELLCHECK", "the ShellCheck actionlint runs on run: scripts (the same lookup)"),
    ("BENCHBOT_DEBUG", "1: an internal error shows its traceback"),
)


def epilog() -> str:
    width = max(len(name) for name, _ in ENVIRONMENT)
    return "environment (GITHUB_*: as GitHub Actions sets them; BENCHBOT_*: optional):\n" + "\n".join(
        f"  {name:<{width}}  {what}" for name, what in ENVIRONMENT)


def add_parser(sub: argparse._SubParsersAction, formats: tuple[str, ...]) -> None:  # type: ignore[type-arg]
    """``event`` and its options; ``formats``: the CLI's report formats (``bot.cli.FORMATS``)."""
    event = sub.add_parser(
        "event", help="handle the GitHub Actions event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH)",
        description="Handle the GitHub Actions event this job runs for: review a pull request (inline\n"
                    "comments and one summary), answer a /bench, /lint or /help comment, report a\n"
                    "finished benchmark run. Settings come from the environment (below).",
        epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    event.add_argument("--config", help="configuration file (default: .benchbot.yml or pyproject.toml of the base)")
    event.add_argument("--fail-on", choices=SEVERITIES, help="lowest severity of a new finding that fails the job")
    event.add_argument("--sarif-file", metavar="FILE", help="also write a SARIF 2.1.0 report of the head to FILE")
    event.add_argument("--format", choices=formats, default=None,
                       help="how the findings the PR introduces are printed (default: github annotations)")
