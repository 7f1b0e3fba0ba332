"""The grammar of the commands maintainers type in pull-request comments.

A command is one line of the comment body (lines end at LF, CRLF or a lone CR; a line break
never continues a command) that starts, after at most 3 spaces, with ``/`` and a trigger word::

    /bench <sku-or-label> [entry ...] [--all] [--force] [--yes] [@<sha>]
    /bench status
    /bench cancel
    /lint
    /help

Lines markdown does not show as text are skipped: fenced code (``` or ~~~, closed by a fence of
the same character at least as long; an unclosed fence runs to the end), indented code (a line
starting with 4 spaces or a tab), quoted replies (``>`` after at most 3 spaces, any depth) and
HTML comments (``<!--`` up to the next ``-->``, across lines; a ``<!--`` in a quote, an indented
line or a code span hides what follows too, which can only make us ignore more).

Trigger words are case-insensitive and end at the end of the line or a space or tab; arguments
are split on spaces and tabs, with no quoting. An argument is a flag (exactly ``--all``,
``--force`` or ``--yes``: start more jobs than ``bench.max-jobs``), the target (the first other
argument: a GPU SKU or runner label, lowercased,
``(cluster:)?[a-z0-9][a-z0-9._-]{0,63}``) or an entry name (``[A-Za-z0-9][A-Za-z0-9._-]{0,127}``,
at most 32, duplicates dropped) or the head commit the command is for (``@`` and 7 to 40 hex
digits, at most one; what binds is :mod:`bot.github.bind`'s business: the full SHA, or 12 digits
or more with the server-time proof; a shorter one is answered with the full command). Anything
else (a shell metacharacter, a quote, a non-ASCII lookalike, a control character, an unknown flag,
entries with ``--all``, a missing target, arguments to ``/lint`` or ``/help``) makes the whole
command :class:`Invalid`, never a partial one. ``status`` and ``cancel`` (any case) as the first
argument are subcommands (:class:`Runs`): they take no other argument (``/bench cancel now`` is
Invalid), so they are reserved words and never a target; ``/bench mi325x cancel`` is an entry
named ``cancel``. A slash word close to a trigger (``/bnech``, ``/Bench:``) is Invalid with a
did-you-mean; other slash lines (``/cc @x``, ``/usr/bin``) are not ours and are ignored. At most
10 commands (Invalid ones included) are read from one comment.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from bot.report import markdown as md

TRIGGERS = ("/bench", "/lint", "/help")
FLAGS = ("--all", "--force", "--yes")
SUBCOMMANDS = ("status", "cancel")
MAX_COMMANDS = 10
MAX_ENTRIES = 32
TEXT_LIMIT = 80
ECHO_LIMIT = 40
DASHES = "-\u2013\u2014"  # phone keyboards turn -- into an en or em dash

_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # control, format, unassigned, line breaks
_NEWLINE = re.compile(r"\r\n|\r|\n")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_QUOTE = re.compile(r" {0,3}>")
_COMMAND = re.compile(r" {0,3}/([\w-]*)([^ \t]*)(.*)")  # slash, word, rest of the head, arguments
_ARG_SEP = re.compile(r"[ \t]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]")
_TARGET = re.compile(r"(cluster:)?[a-z0-9][a-z0-9._-]{0,63}")
_ENTRY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SHA = re.compile(r"@([0-9a-fA-F]{7,40})")


@dataclass(frozen=True)
class Bench:
    target: str  # a GPU SKU or runner label, lowercased: "mi325x", "mi325x-disagg", "b200-nv"
    entries: tuple[str, ...] = ()  # explicit config entry names, restricting the selection
    all: bool = False  # --all
    force: bool = False  # --force
    line: int = 0  # 1-based line of the comment body
    sha: str | None = None  # ``@5ca31cc``: the head commit (a 7-40 hex prefix, lowercased) the command is for
    yes: bool = False  # --yes: start it even above ``bench.max-jobs``


@dataclass(frozen=True)
class Runs:
    """``/bench status`` (list the runs this pull request's commands started) or ``/bench cancel``."""

    action: str  # "status" or "cancel"
    line: int = 0


@dataclass(frozen=True)
class Lint:
    line: int = 0


@dataclass(frozen=True)
class Help:
    line: int = 0


@dataclass(frozen=True)
class Invalid:
    text: str  # the command line, control characters removed, at most TEXT_LIMIT characters
    reason: str  # one markdown sentence; any echoed input is an inert code span
    line: int = 0


Command = Bench | Runs | Lint | Help | Invalid


def parse(body: str) -> list[Command]:
    """The commands of a comment body, in order, at most :data:`MAX_COMMANDS`."""
    commands: list[Command] = []
    for number, line in _text_lines(body):
        command = _parse_line(line, number)
        if command is not None:
            commands.append(command)
            if len(commands) == MAX_COMMANDS:
                break
    return commands


def help_text(runner_labels: tuple[str, ...] | list[str] = (), bench_labels: tuple[tuple[str, str], ...] = (),
              max_jobs: int = 64) -> str:
    """The grammar as markdown, for the reply to ``/help`` or to an invalid command. The examples use
    the repository's own runner labels (``runner_labels``, from runners.yaml) when it has some;
    ``bench_labels``: the ``bench.labels`` the label trigger maps (PR label -> target)."""
    labels = [x for x in runner_labels if _TARGET.fullmatch(x.lower())]
    first = labels[0].lower() if labels else "mi325x"
    shown = ", ".join(f"`{x.lower()}`" for x in labels[:6]) if labels else "`mi325x`, `mi325x-disagg`, `b200-nv`"
    lines = [
        "**Commands**: one per line, at the start of the line; not inside code blocks, quotes or HTML comments.",
        "",
        "- `/bench <sku-or-label> [entry ...] [--all] [--force] [--yes] [@<sha>]`: benchmark on a GPU SKU or "
        f"runner label (here: {shown}); entry names restrict the selection, `--all` selects "
        f"every entry of the target, `--force` runs even when the bot would skip. At most {MAX_ENTRIES} entries. "
        f"`--yes` confirms a selection of more than {max_jobs} benchmark jobs (`bench.max-jobs`); the reply "
        "says how many jobs a selection starts. "
        "`@<sha>` names the head commit you reviewed: the full 40-digit SHA (the review's summary shows "
        "it), or at least 12 digits when GitHub's clocks prove that commit was the head when you commented; "
        "only that commit is run, and the command is refused if the pull request's head is another one. "
        f"Example: `/bench {first} --force @5ca31cc0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6`",
        "- `/bench status`: list the benchmark runs this pull request's commands started. Example: `/bench status`",
        "- `/bench cancel`: cancel those runs that are still queued or running. Example: `/bench cancel`",
        "- `/lint`: lint this pull request again. Example: `/lint`",
        "- `/help`: show this message. Example: `/help`",
    ]
    if bench_labels:
        pairs = ", ".join(f"{_code(k)} runs {_code('/bench ' + v)}" for k, v in bench_labels)
        lines.append(f"- Labels: adding a label starts a `/bench` of the pull request's head: {pairs}.")
    lines += [
        "",
        "Arguments are separated by spaces; only letters, digits, `.`, `_`, `-` (and a `cluster:` prefix "
        f"on the target) are allowed. At most {MAX_COMMANDS} commands per comment. `status` and `cancel` "
        "are never a target.",
    ]
    return "\n".join(lines)


def _text_lines(body: str) -> Iterator[tuple[int, str]]:
    """(1-based number, line) of the lines markdown shows as text: not code, quotes or HTML comments."""
    fence: tuple[str, int] | None = None
    in_comment = False
    for number, line in enumerate(_NEWLINE.split(body), 1):
        if fence is not None:
            close = _FENCE_CLOSE.fullmatch(line)
            if close and close[1][0] == fence[0] and len(close[1]) >= fence[1]:
                fence = None
            continue
        if in_comment:
            in_comment = _ends_in_comment(line, True)
            continue
        opening = _FENCE_OPEN.fullmatch(line)
        if opening and not (opening[1][0] == "`" and "`" in opening[2]):
            fence = (opening[1][0], len(opening[1]))
            continue
        in_comment = _ends_in_comment(line, False)
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent or len(indent) >= 4 or _QUOTE.match(line):
            continue  # indented code or a quoted reply
        yield number, line


def _ends_in_comment(line: str, inside: bool) -> bool:
    """Whether an HTML comment is open at the end of this line."""
    pos = 0
    while True:
        found = line.find("-->" if inside else "<!--", pos)
        if found < 0:
            return inside
        pos, inside = found + (3 if inside else 4), not inside


def _parse_line(line: str, number: int) -> Command | None:
    match = _COMMAND.fullmatch(line)
    if match is None:
        return None
    word, tail, rest = match[1], match[2], match[3]
    trigger = "/" + word.lower() if word.isascii() else ""
    text = _clean(line.strip(" \t"), TEXT_LIMIT)
    if trigger in TRIGGERS and not tail:
        args = [arg for arg in _ARG_SEP.split(rest) if arg]
        if trigger == "/bench":
            return _bench(args, text, number)
        if args:
            return Invalid(text, f"`{trigger}` takes no arguments, e.g. `{trigger}`", number)
        return Lint(number) if trigger == "/lint" else Help(number)
    if tail.startswith("/"):
        return None  # a path such as /usr/bin
    if trigger in TRIGGERS:
        return Invalid(text, f"`{trigger}` must be followed by a space, not {_char(tail[0])}; "
                             f"did you mean `{trigger}`?", number)
    guess = _near(word)
    if guess is None:
        return None
    return Invalid(text, f"unknown command {_code('/' + word + tail)}; did you mean `{guess}`?", number)


def _bench(args: list[str], text: str, number: int) -> Bench | Runs | Invalid:
    if args and args[0].lower() in SUBCOMMANDS:
        action = args[0].lower()
        if len(args) > 1:
            return Invalid(text, f"`/bench {action}` takes no other arguments, e.g. `/bench {action}`", number)
        return Runs(action, number)
    target = ""
    entries: list[str] = []
    flags: set[str] = set()
    sha: str | None = None
    for arg in args:
        if arg[0] == "@":
            named = _SHA.fullmatch(arg)
            if named is None:
                return Invalid(text, f"{_code(arg)} is not a commit: use `@` and 7 to 40 hex digits, "
                                     "e.g. `@5ca31cc`", number)
            if sha is not None:
                return Invalid(text, "name at most one commit (`@<sha>`)", number)
            sha = named[1].lower()
            continue
        if arg[0] in DASHES:
            if arg not in FLAGS:
                return Invalid(text, f"unknown flag {_code(arg)}; {_flag_hint(arg)}", number)
            flags.add(arg)
            continue
        bad = _UNSAFE.search(arg)
        if bad:
            return Invalid(text, f"argument {_code(arg)} contains {_char(bad[0])}, which is not allowed; "
                                 "use only letters, digits, `.`, `_` and `-`", number)
        if not target:
            target = arg.lower()
            if target in SUBCOMMANDS:
                return Invalid(text, f"`{target}` must come right after `/bench`, alone: `/bench {target}`", number)
            if not _TARGET.fullmatch(target):
                return Invalid(text, f"{_code(arg)} is not a GPU SKU or runner label, e.g. `mi325x` or `b200-nv`",
                               number)
        elif _ENTRY.fullmatch(arg):
            entries.append(arg)
        else:
            return Invalid(text, f"{_code(arg)} is not a config entry name", number)
    if not target:
        return Invalid(text, "`/bench` needs a GPU SKU or runner label, e.g. `/bench mi325x`", number)
    if entries and "--all" in flags:
        return Invalid(text, "use either entry names or `--all`, not both", number)
    if len(entries) > MAX_ENTRIES:
        return Invalid(text, f"at most {MAX_ENTRIES} entry names per `/bench`, got {len(entries)}", number)
    return Bench(target, tuple(dict.fromkeys(entries)), "--all" in flags, "--force" in flags, number, sha,
                 "--yes" in flags)


def _near(word: str) -> str | None:
    """The trigger a mistyped word was most likely meant to be (difflib ratio >= 0.75), if any."""
    if not word or len(word) > 16:
        return None
    ratio, trigger = max((difflib.SequenceMatcher(None, word.lower(), t[1:]).ratio(), t) for t in TRIGGERS)
    return trigger if ratio >= 0.75 else None


def _flag_hint(arg: str) -> str:
    name = arg.lstrip(DASHES).lower()
    known = [flag for flag in FLAGS if name and flag[2:].startswith(name)]
    known = known or difflib.get_close_matches("--" + name, FLAGS, n=1, cutoff=0.6)
    if len(known) == 1:
        return f"did you mean `{known[0]}`?"
    return "the flags are `--all`, `--force` and `--yes`"


def _char(ch: str) -> str:
    """A character named inertly: itself in a code span if printable ASCII, else its code point."""
    if ch.isascii() and ch.isprintable() and ch not in "` ":
        return f"`{ch}`"
    return f"U+{ord(ch):04X}"


def _clean(text: str, limit: int) -> str:
    """Text without control, format or line-separator characters, shortened to ``limit`` characters."""
    text = "".join(ch for ch in text if unicodedata.category(ch) not in _HIDDEN)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _code(text: str) -> str:
    """Untrusted text as an inert markdown code span: no backticks, at most ECHO_LIMIT characters."""
    text = _clean(text.replace("`", ""), ECHO_LIMIT).strip()
    return md.code(text) if text else "(unprintable)"
