"""``--help`` of every subcommand: each argument says what it is for, and ``event --help`` lists
every GITHUB_* and BENCHBOT_* variable the code reads, one line each. The parser is the CLI's own
(``bot.cli._parser``); the variables are found in the source, where they are read."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from bot.cli import _parser, main
from tests.conftest import ROOT

COMMANDS = ("lint", "dispatch", "event", "serve", "history", "eval-compare", "cache", "rules", "explain", "map")
# where ``benchbot event`` reads its environment: the GitHub layer, the cache, the CLI itself
EVENT_SOURCES = (*sorted((ROOT / "bot" / "github").glob("*.py")), ROOT / "bot" / "cache.py",
                 ROOT / "bot" / "cachetrust.py", ROOT / "bot" / "cli.py")
_NAME = re.compile(r"""["']((?:GITHUB|BENCHBOT)_[A-Z0-9_]+)["']""")


def _subcommands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _arguments(p: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    yield from (a for a in p._actions if not isinstance(a, argparse._SubParsersAction))


def _name(a: argparse.Action) -> str:
    return "/".join(a.option_strings) or a.dest


def test_every_argument_of_every_subcommand_has_help() -> None:
    top = _parser()
    commands = _subcommands(top)
    assert set(COMMANDS) <= set(commands)
    missing = [f"benchbot {_name(a)}" for a in _arguments(top) if not a.help or a.help == argparse.SUPPRESS]
    for cmd, p in commands.items():
        missing += [f"benchbot {cmd} {_name(a)}" for a in _arguments(p)
                    if not a.help or a.help == argparse.SUPPRESS or not a.help.strip()]
    assert missing == []
    # and each subcommand has its one line in ``benchbot --help``
    [sub] = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    assert sorted(c.dest for c in sub._choices_actions if c.help) == sorted(commands)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_shows_each_arguments_text(cmd: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([cmd, "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps long help lines
    for a in _arguments(_subcommands(_parser())[cmd]):
        assert a.help is not None and " ".join(a.help.split()).replace("%%", "%") in out, (cmd, _name(a))


def read_by_event() -> set[str]:
    """Every GITHUB_*/BENCHBOT_* name quoted in the code ``benchbot event`` runs."""
    return {m.group(1) for path in EVENT_SOURCES for m in _NAME.finditer(path.read_text(encoding="utf-8"))}


def test_event_help_lists_every_variable_it_reads(capsys: pytest.CaptureFixture[str]) -> None:
    names = read_by_event()
    # the scan sees them: the settings, the event, the run's name, the summary file, the cache
    assert {"GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH",
            "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT",
            "BENCHBOT_GITHUB_RETRIES", "BENCHBOT_GITHUB_BACKOFF", "BENCHBOT_GITHUB_MAX_WAIT",
            "BENCHBOT_GITHUB_WRITE_INTERVAL", "BENCHBOT_DEBUG", "BENCHBOT_CACHE_KEY", "BENCHBOT_CACHE_DIR",
            "BENCHBOT_NO_CACHE"} <= names
    with pytest.raises(SystemExit) as done:
        main(["event", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    described = {}
    for line in lines:
        m = re.match(r"^  ((?:GITHUB|BENCHBOT)_[A-Z0-9_]+) {2,}(\S.*)$", line)
        if m:
            described[m.group(1)] = m.group(2)
    assert sorted(names - set(described)) == []  # each one on its own line, with what it is for
    assert all(len(what) >= 10 for what in described.values()), described
    assert all(len(line) <= 110 for line in lines), max(lines, key=len)
