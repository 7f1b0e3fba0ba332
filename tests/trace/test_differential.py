"""The differential test: for every (entry, point, launcher) of every fixture repo, the bundled
example and the generated InferenceX-shaped repo, the static answer (``serve``: the script,
the server, the client) agrees with what really ran (``trace``: the real launcher and script
in the bubblewrap sandbox, with stand-ins). A disagreement prints both sides.

The generated repo is traced on a fixed sample (every ``SYNTH_STEP``-th run, all launchers and
scenarios represented) to keep the suite's time bounded; tests/perf/trace_agreement.py runs
them all. A planted evaluator bug (``${X:-default}`` losing its default) must make it fail.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import load_config
from bot.repo.facts import Facts, gather
from bot.repo.files.tree import WorkTree
from bot.shell.evaluator import expand
from bot.shell.evaluator.state import State
from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Val
from bot.trace.agree import static_launches, verdict
from bot.trace.run import Traced, runs, trace_one
from tests.conftest import EXAMPLE, FIXTURES, NOT_REPOS, ROOT
from tests.perf import synth

REPOS = [EXAMPLE, *sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_REPOS)]
SYNTH_STEP = 6


def facts_of(repo: Path) -> Facts:
    tree = WorkTree(str(repo))
    return gather(tree, load_config(tree).profile)


def disagreements(repo: Path, step: int = 1) -> tuple[int, list[str]]:
    """(runs traced, one report per run that disagrees)."""
    facts = facts_of(repo)
    served = static_launches(facts, facts.entries)
    out: list[str] = []
    count = 0
    for i, run in enumerate(runs(facts, facts.entries)):
        if i % step:
            continue
        t = trace_one(facts, repo, *run, timeout=20)
        count += 1
        found = verdict(served, t)
        if found:
            out.append(_report(t, found, served))
    return count, out


def _report(t: Traced, found: list[object], served: dict[object, object]) -> str:
    static = served.get((id(t.entry), id(t.point), t.conc, t.launcher))
    lines = [f"{t.entry.name} on {t.launcher} (point tp={t.point.get('tp')}, conc={t.conc}): {t.message}",
             *[f"  {d.text()}" for d in found],  # type: ignore[attr-defined]
             f"  static script: {getattr(static, 'script', None)}",
             f"  static server: {' '.join(getattr(getattr(static, 'server', None), 'argv', ()) or ())}",
             f"  traced script: {t.script}",
             f"  traced server: {' '.join(t.server.argv) if t.server else None}",
             "  calls: " + "; ".join(" ".join(str(a) for a in (c.get("argv") or [])[:6]) for c in t.calls)]
    return "\n".join(lines)


@pytest.mark.parametrize("repo", REPOS, ids=lambda p: p.name)
def test_static_and_traced_agree_on_the_fixtures(repo: Path) -> None:
    count, bad = disagreements(repo)
    assert count > 0 or not any(e for e in facts_of(repo).entries if not e.multinode)
    assert not bad, "\n\n".join(bad)


@pytest.fixture(scope="module")
def synth_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("synth") / "repo"
    synth.make_repo(root, 1, 0)
    yield root


def test_static_and_traced_agree_on_the_generated_repo(synth_repo: Path) -> None:
    count, bad = disagreements(synth_repo, SYNTH_STEP)
    assert count >= 100
    assert not bad, "\n\n".join(bad)


def test_a_planted_evaluator_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The static evaluator planted with a bug: ``${X:-default}`` gives the default even when X is
    set (``--ep-size "${EP_SIZE:-1}"`` serves EP 1 whatever the point asks)."""
    from bot import cache

    cache.disable()  # no evaluation kept by an earlier, correct run may answer for the planted one
    real = expand.Expand.param

    def planted(self: expand.Expand, p: ir.Param, st: State) -> Val:
        if p.op == ":-" and p.arg is not None:
            return self.expand(p.arg, st)
        return real(self, p, st)

    monkeypatch.setattr(expand.Expand, "param", planted)
    try:
        bad = [b for name in ("unused-config-field-clean", "fallback-chain-clean", "agentic-clean")
               for b in disagreements(FIXTURES / name)[1]]
    finally:
        cache.disable(False)
    assert bad, "the planted bug went unnoticed"
    print("\n\n".join(bad))  # the failing output the note shows
    # the defaults it now takes change what the scripts start: servers the static side lost
    assert any("\n  server " in b for b in bad), "\n\n".join(bad)


# --- never on the pull-request bot's path ------------------------------------------------------

PR_PATH = ["bot/github", "bot/cli_event.py", "bot/lint.py", "bot/rules", "bot/serve", "bot/repo", "bot/shell",
           "bot/recipes", "bot/report"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_nothing_on_the_bots_path_imports_trace() -> None:
    files = [f for p in PR_PATH for f in ((ROOT / p).rglob("*.py") if (ROOT / p).is_dir() else [ROOT / p])]
    assert len(files) > 100
    trace = ("bot.trace", "bot.cli_trace")
    offenders = {str(f.relative_to(ROOT)): sorted(m for m in _imports(f) if m.startswith(trace)) for f in files}
    assert not {k: v for k, v in offenders.items() if v}


def test_the_event_command_loads_no_trace_module() -> None:
    code = ("import sys, bot.cli, bot.github.event, bot.cli_event\n"
            "from bot.cli import _parser\n"
            "_parser().parse_args(['event'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('bot.trace')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
