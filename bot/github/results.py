"""``workflow_run: completed``: a benchmark run the bot dispatched finished; say so on its answer.

Only a run of the configured bench workflow (``bench.workflow``, by file name or workflow name),
started by ``workflow_dispatch`` (or ``repository_dispatch`` when configured), is considered. The
configuration comes from the checkout (the default branch), as for the commands. The answer is
found from the run's title: the pull request number is read with a strict pattern built from
``bench.run_name`` (a template without ``{pr}``/``{test_name}`` scans the bot's answers on the
:data:`SCAN_PULLS` most recently updated open pull requests), then the answer is the bot's own
comment (its login) whose run marker (:func:`bot.github.claim.run_title`) equals the title.

The answer is edited once: a results section (conclusion, duration, link and, when the run
uploaded result files in InferenceX's format, a table: :mod:`bot.github.result_files`) is
appended, or replaces an earlier attempt's. The answer's leading markers (:mod:`bot.github.markers`)
gain ``<!-- benchbot:results <run id> <attempt> -->``: a redelivered event (same run and attempt, or
an older attempt) writes nothing. The section starts at :data:`SECTION` (markdown makes ``<!--`` in
repository text inert, so only the bot writes it).
No answer found: nothing is posted (logged). Every string of the payload is escaped.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bot.config import ConfigError, load_config
from bot.github import claim, markers, result_files
from bot.github.handling import EXIT_ERROR, EXIT_OK, Options, Outcome, PortFactory, bot_login
from bot.github.port import Comment, GitHubError, Port
from bot.github.port_results import TooLarge
from bot.github.review import own
from bot.repo.files.tree import TreeError, WorkTree
from bot.report import markdown as md

SCAN_PULLS = 20  # open PRs scanned when the run name does not carry the PR number
MAX_LISTED = 100  # artifacts listed per run (a run uploads logs and metrics too)
MAX_NOTES = 10
MAX_BODY = 60000  # GitHub refuses comments over 65536 characters
MAX_TITLE = 1024
_RESULTS = re.compile(r"<!-- benchbot:results (\d+) (\d+) -->")
SECTION = "\n\n<!-- benchbot:section -->\n"
ICONS = {"success": "\u2705", "failure": "\u274c", "cancelled": "\u23f9\ufe0f", "timed_out": "\u23f1\ufe0f",
         "skipped": "\u23ed\ufe0f", "neutral": "\u2796", "action_required": "\u26a0\ufe0f",
         "startup_failure": "\u274c", "stale": "\u26a0\ufe0f"}
_TEST_NAME = r"benchbot\ \#{pr}\ [A-Za-z0-9._+-]{1,100}\ [0-9a-f]{7}\ c[0-9]{1,20}"


def results_marker(run_id: int, attempt: int) -> str:
    return f"<!-- benchbot:results {run_id} {attempt} -->"


def title_pattern(template: str) -> re.Pattern[str] | None:
    """A strict pattern for run titles rendered from ``template``, with the PR number as group
    ``pr``; None when the template does not carry it."""
    out: list[str] = []
    have_pr = False
    pos = 0
    for m in re.finditer(r"\{([a-z_]+)\}", template):
        out.append(re.escape(template[pos:m.start()]))
        pos = m.end()
        name = m[1]
        if name in ("pr", "test_name"):
            pr = "(?P=pr)" if have_pr else "(?P<pr>[0-9]{1,9})"
            have_pr = True
            out.append(pr if name == "pr" else _TEST_NAME.replace("{pr}", pr))
        elif name == "sha":
            out.append("[0-9a-f]{40}")
        else:
            out.append(r"[^\n]{0,1000}?")
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out)) if have_pr else None


def _posix(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def duration(start: Any, end: Any) -> str:
    a, b = _posix(start), _posix(end)
    if a is None or b is None or b < a:
        return "unknown"
    s = int(b - a)
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    return (f"{h}h {m}m {sec}s" if h else f"{m}m {sec}s" if m else f"{sec}s")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def workflow_run(payload: dict[str, Any], workspace: str, make_port: PortFactory, opts: Options) -> Outcome:
    if payload.get("action") != "completed":
        return Outcome(EXIT_OK, logs=[f"benchbot: nothing to do for workflow_run {payload.get('action')}"])
    run = payload.get("workflow_run")
    if not isinstance(run, dict) or _int(run.get("id")) is None:
        return Outcome(EXIT_ERROR, logs=["benchbot: the workflow_run payload has no workflow_run id"])
    try:
        conf = load_config(WorkTree(workspace), opts.config)
    except (TreeError, ConfigError) as exc:
        return Outcome(EXIT_ERROR, logs=[f"benchbot: {exc}"])
    run_id = int(run["id"])
    attempt = _int(run.get("run_attempt")) or 1
    path = str(run.get("path") or "").split("@", 1)[0]
    wf = conf.bench.workflow
    if wf not in (path, path.rsplit("/", 1)[-1], str(run.get("name") or "")):
        return Outcome(EXIT_OK, logs=[f"benchbot: run {run_id} is not of the bench workflow {wf}; nothing to do"])
    event = "repository_dispatch" if conf.bench.repository_dispatch else "workflow_dispatch"
    if run.get("event") != event:
        return Outcome(EXIT_OK, logs=[f"benchbot: run {run_id} was started by {str(run.get('event'))[:40]}, not "
                                      f"{event}: not one the bot started"])
    title = run.get("display_title")
    if not isinstance(title, str) or not title or len(title) > MAX_TITLE:
        return Outcome(EXIT_OK, logs=[f"benchbot: run {run_id} has no usable title; nothing to do"])
    out = Outcome(EXIT_OK)
    try:
        port = make_port()
        me = bot_login(conf, port)
        found = _answer(port, conf.bench.run_name, title, me, out)
        if found is None:
            out.logs.append(f"benchbot: no answer of the bot names run {run_id} ({title[:200]!r}); nothing posted")
            return out
        number, answer = found
        seen = markers.search(_RESULTS, answer.body)
        if seen is not None and int(seen[1]) == run_id and int(seen[2]) >= attempt:
            out.logs.append(f"benchbot: run {run_id} attempt {attempt} is already reported on #{number}")
            return out
        section = _section(port, run, run_id, attempt, title)
        body = _join(answer.body, results_marker(run_id, attempt), section)
        if body == answer.body:
            out.logs.append(f"benchbot: the answer on #{number} already says this")
            return out
        port.edit_issue_comment(answer.id, body)
        out.logs.append(f"benchbot: reported run {run_id} attempt {attempt} on #{number} (comment {answer.id})")
    except GitHubError as exc:
        out.logs.append(f"benchbot: GitHub error: {exc}")
        out.code = EXIT_ERROR
    return out


def _answer(port: Port, template: str, title: str, me: str, out: Outcome) -> tuple[int, Comment] | None:
    pattern = title_pattern(template)
    if pattern is not None:
        m = pattern.fullmatch(title)
        if m is None:
            out.logs.append("benchbot: the run's title does not match bench.run-name")
            return None
        numbers = [int(m["pr"])]
    else:
        numbers = port.open_pulls(SCAN_PULLS)
    for n in numbers:
        try:
            comments = port.issue_comments(n)
        except GitHubError as exc:
            if exc.status == 404:
                continue
            raise
        ours = [c for c in comments if own(c.author, me) and claim.run_title(c.body) == title]
        if ours:
            return n, min(ours, key=lambda c: c.id)
    return None


def _join(body: str, marker: str, section: str) -> str:
    """``body`` with ``marker`` among its leading markers (an earlier attempt's replaced) and
    ``section`` in place of an earlier one."""
    lead, rest = markers.split(body)
    cut = rest.find(SECTION)
    kept = (rest[:cut] if cut >= 0 else rest).rstrip("\n")
    return _RESULTS.sub("", lead) + marker + kept + SECTION + section


def _section(port: Port, run: dict[str, Any], run_id: int, attempt: int, title: str) -> str:
    conclusion = str(run.get("conclusion") or "unknown")
    icon = ICONS.get(conclusion, "\u2754")
    url = run.get("html_url")
    ok = isinstance(url, str) and url.startswith(("https://", "http://"))
    link = f"[{md.escape(title)}]({md.safe_url(str(url))})" if ok else md.code(title)
    again = f", attempt {attempt}" if attempt > 1 else ""
    head = (f"**Result:** {icon} {md.escape(conclusion)} after "
            f"{duration(run.get('run_started_at'), run.get('updated_at'))}{again}: {link}")
    parsed = _results(port, run_id)
    parts = [head]
    tab = result_files.table(parsed)
    if tab:
        parts.append(tab)
    notes = [f"- {md.escape(n)}" for n in parsed.notes[:MAX_NOTES]]
    if len(parsed.notes) > MAX_NOTES:
        notes.append(f"- \u2026and {len(parsed.notes) - MAX_NOTES} more notes")
    if notes:
        parts.append("Result files:\n" + "\n".join(notes))
    text = "\n\n".join(parts)
    if len(text) > MAX_BODY - 8000:
        text = head + "\n\n(The results table is too long for a comment; see the run's artifacts.)"
    return text


def _results(port: Port, run_id: int) -> result_files.Parsed:
    parsed = result_files.Parsed()
    try:
        arts = port.run_artifacts(run_id, MAX_LISTED)
    except GitHubError as exc:
        parsed.notes.append(f"could not list the run's artifacts ({exc.status} {exc.message})")
        return parsed
    by_name = {a.name: a for a in arts if not a.expired}
    names = result_files.wanted(list(by_name))
    if len(names) > result_files.MAX_ARTIFACTS:
        parsed.notes.append(f"{len(names)} result artifacts; the first {result_files.MAX_ARTIFACTS} are shown")
        names = names[:result_files.MAX_ARTIFACTS]
    for name in names:
        a = by_name[name]
        if a.size > result_files.MAX_ZIP_BYTES:
            parsed.notes.append(f"{name[:100]}: {a.size} bytes, over the download budget; not read")
            continue
        try:
            data = port.download_artifact(a.id, result_files.MAX_ZIP_BYTES)
        except TooLarge:
            parsed.notes.append(f"{name[:100]}: over the download budget; not read")
            continue
        except GitHubError as exc:
            parsed.notes.append(f"{name[:100]}: could not download ({exc.status} {exc.message})")
            continue
        result_files.parse_zip(name[:100], data, parsed)
    return parsed
