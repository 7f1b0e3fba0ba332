"""Which scripts other files reference: file names outside comments, workflow templates, and
what files that build a script path from variables (``source "$LIB"``) may run, found by
evaluating them in scan mode. Every pattern run over the repo's text is linear-time (re2)."""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

from bot.repo.cache import evalcache
from bot.repo.env.launchenv import linear
from bot.repo.env.profile import Profile
from bot.repo.files import host, parsed
from bot.repo.load.configs import ConfigFile
from bot.shell.evaluator.budget import BudgetHit
from bot.shell.evaluator.evaluate import Dispatch, Evaluator, FileSystem, Sourced
from bot.shell.evaluator.options import Options, Result
from bot.shell.ir.values import known, leading, to_regex


class Host(host.Host, Protocol):
    """What the reference scan reads and fills of the facts (``bot.repo.facts.Facts``)."""

    @property
    def profile(self) -> Profile: ...
    @property
    def configs(self) -> list[ConfigFile]: ...
    @property
    def launcher_files(self) -> list[str]: ...
    @property
    def workflow_text(self) -> str: ...
    @property
    def referenced(self) -> dict[str, list[tuple[str, int]]]: ...
    @property
    def referenced_patterns(self) -> list[tuple[re.Pattern[str], str, int]]: ...
    @property
    def scan_budget_hits(self) -> dict[str, tuple[BudgetHit, ...]]: ...
    def shell_files(self) -> list[str]: ...
    def options(self) -> Options: ...
    def digest(self, path: str) -> str | None: ...


def scan_references(facts: Host, fs: FileSystem) -> None:
    """Scripts sourced or run by other scripts.

    A script whose file name appears (outside comments) in another shell file counts as
    referenced; files that build a script path entirely from variables
    (``source "$LIB"``) are evaluated in scan mode to find what they may reference.
    """
    names: dict[str, list[str]] = {}
    for s in facts.tree.glob(facts.profile.scripts):
        names.setdefault(posixpath.basename(s), []).append(s)
    dynamic: list[str] = []
    shell = set(facts.shell_files())
    configs = {c.path for c in facts.configs}
    scanned = [p for p in sorted(shell | set(facts.tree.glob(facts.profile.references)))
               if p not in configs and not p.endswith((".md", ".rst", ".txt"))]
    prefetch = getattr(facts.tree, "prefetch", None)
    if prefetch is not None:  # a git revision: every blob in one ``cat-file --batch``
        prefetch(scanned)
    for path in scanned:
        text = parsed.text(facts, path) or ""
        if len(text) > 2_000_000 or "\0" in text:
            continue
        is_shell = path in shell or path.endswith((".slurm", ".bash"))
        body = _COMMENT.sub("", text) if is_shell else text
        at, line = 0, 1  # lines counted as the matches go (not from the top for each)
        for m in _SH_WORD.finditer(body):
            for target in names.get(m.group(1), ()):
                if target != path:
                    line += body.count("\n", at, m.start())
                    at = m.start()
                    facts.referenced.setdefault(target, []).append((path, line))
        if path in shell and _dynamic(body):
            dynamic.append(path)
    # workflow templates: benchmarks/x/${{ inputs.model-prefix }}_fp4_b300.sh
    for m in _WORKFLOW_PATH.finditer(facts.workflow_text):
        text = m.group(0)
        if "${{" in text:
            pattern = ".*".join(re.escape(part) for part in re.split(r"\$\{\{.*?\}\}", text))
            facts.referenced_patterns.append((re.compile(pattern + r"\Z"), "workflow", 0))
    opts = facts.options()
    opts.linear = True  # take every branch: we want every script a file may reference
    opts.descend_source = False
    opts.unset_is_unknown = True
    opts.follow = None
    launchers = set(facts.launcher_files)
    for path in dynamic:
        result = _scan(facts, fs, opts, path)
        if result is None:
            continue
        if result.budget_hits:
            facts.scan_budget_hits[path] = result.budget_hits
        for p in result.paths:
            for e in p.events:
                # a launcher's dispatches depend on the entry: the runs say what they are
                if not isinstance(e, (Dispatch, Sourced)) or (path in launchers and isinstance(e, Dispatch)):
                    continue
                k = known(e.target)
                if k is not None:
                    facts.referenced.setdefault(posixpath.normpath(k) if k else k, []).append((path, e.loc.line))
                    continue
                head = leading(e.target)
                if "/" in head and not head.startswith("/"):
                    facts.referenced_patterns.append((to_regex(e.target), path, e.loc.line))


def _scan(facts: Host, fs: FileSystem, opts: Options, path: str) -> Result | None:
    """The scan-mode evaluation of one file, kept across lints like a launcher's
    (``bot.repo.cache.evalcache``: same text, same answers from the tree); None: no script."""
    store, k = evalcache.slot(facts, path, facts.tree.resolve(path) or path, persist=True, mode="scan")
    if store is not None and k is not None:
        kept = store.lookup(k, {}, fs, None, facts.digest)
        if kept is not None:
            return kept
    script = facts.script(path)
    if script is None:
        return None
    recorder = evalcache.Recorder(fs, facts.digest) if k is not None else None
    result = Evaluator(recorder or fs, opts).run(script, {}, argv0=path)
    if store is not None and k is not None and recorder is not None:
        store.add(k, {}, result, recorder.asked)
    return result


# Patterns run over the repo's text: linear-time (re2), never a backtracking engine.
_WORKFLOW_PATH = linear(r"[A-Za-z0-9_./-]*(?:\$\{\{[^}]*\}\}[A-Za-z0-9_./-]*)+\.sh\b")
_COMMENT = re.compile(r"(?m)^[ \t]*#.*$")
_SH_WORD = linear(r"([A-Za-z0-9_.+-]+\.sh)\b")
# ``source "$X"``, ``bash ${DIR}/$NAME`` ...: a script path with no literal file name
_DYNAMIC_START = linear(r"(?m)(?:^|[;&|(`\s])(?:source|\.|bash|sh|exec)\s+[\"']?\$")
_SH_END_WORD = linear(r"\.sh\b")


def _dynamic(body: str) -> bool:
    """Whether some line has a ``source "$X"`` (``bash $DIR/...``, ...) with no ``.sh``
    word after it on that line, in linear time (a lookahead from every start is quadratic):
    the last such start on a line decides for the line."""
    last: dict[int, int] = {}  # line start -> the last candidate's end on that line
    line_start = scanned = 0
    for m in _DYNAMIC_START.finditer(body):
        nl = body.rfind("\n", scanned, m.end() - 1)  # only the text since the last candidate
        if nl != -1:
            line_start = nl + 1
        scanned = m.end() - 1
        last[line_start] = m.end()
    for end in last.values():
        stop = body.find("\n", end)
        if _SH_END_WORD.search(body[end : stop if stop != -1 else len(body)]) is None:
            return True
    return False
