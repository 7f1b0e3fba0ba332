"""tests/perf/replay_prs.py as its docstring says to run it: a subprocess from outside the checkout,
no PYTHONPATH, on a real git repo (the seed's MTP bug as one commit), with ``--out``: the summary and
the inline review comments the bot posted are saved per pull request, as markdown and JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLE, ROOT, git
from tests.github.conftest import MTP_ENTRIES, MTP_SCRIPTS, without_entries

SCRIPT = ROOT / "tests" / "perf" / "replay_prs.py"
LAUNCHERS = {"runners/launch_mi300x-amds.sh", "runners/launch_mi325x-amds.sh"}


def _seed_history(repo: Path) -> tuple[str, str]:
    """(base, head): the seed without the MTP scripts and entries, then a commit adding them."""
    shutil.copytree(EXAMPLE, repo, symlinks=True)
    config = repo / "configs/amd-master.yaml"
    saved = {p: (repo / p).read_text() for p in (*MTP_SCRIPTS, "configs/amd-master.yaml")}
    for p in MTP_SCRIPTS:
        (repo / p).unlink()
    config.write_text(without_entries(saved["configs/amd-master.yaml"], MTP_ENTRIES))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for p, text in saved.items():
        (repo / p).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add MTP for kimik2.5 on MI300X and MI325X")
    return git(repo, "rev-parse", "HEAD^").strip(), git(repo, "rev-parse", "HEAD").strip()


def test_replay_saves_summary_and_inline_comments(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _, head = _seed_history(repo)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("GITHUB_")}
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, str(SCRIPT), str(repo), "HEAD", "--out", str(out)], cwd=elsewhere,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [row] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert row["pr"] == 101 and row["head"] == head and row["exit"] == 1
    assert row["title"] == "Add MTP for kimik2.5 on MI300X and MI325X"
    assert row["verdict"].startswith("\u274c **This pull request introduces 2 findings (2 errors)**")
    assert (row["inline"], row["line"], row["left"], row["file"]) == (2, 2, 0, 0)

    folder = out / f"pr101-{head[:12]}"
    assert sorted(p.name for p in folder.iterdir()) == ["inline.json", "inline.md", "row.json", "summary.md"]
    assert (folder / "summary.md").read_text().startswith("<!-- benchbot:summary -->")
    records = json.loads((folder / "inline.json").read_text())
    assert len([r for r in records if r["in_reply_to"] is None]) == row["inline"]
    # one comment per launcher that ignores the variant, on the first line of the mtp script it leaves dead
    assert sorted((r["path"], r["line"], r["side"], r["subject_type"]) for r in records) == \
        sorted((p, 1, "RIGHT", "line") for p in MTP_SCRIPTS)
    for r in records:
        assert set(r) == {"path", "line", "start_line", "side", "subject_type", "in_reply_to", "body"}
        assert r["body"].startswith("<!-- benchbot:finding ") and "BB103 `ignored-variant`" in r["body"]
    assert {launcher for launcher in LAUNCHERS if any(f"{launcher}:" in r["body"] for r in records)} == LAUNCHERS

    md = (folder / "inline.md").read_text()
    assert md.startswith("# Inline review comments: #101 Add MTP for kimik2.5 on MI300X and MI325X")
    for i, r in enumerate(records, 1):
        assert f"## {i}. `{r['path']}`, " in md
        assert r["body"].rstrip("\n") in md
    assert json.loads((folder / "row.json").read_text()) == row
    assert f"-> pr101-{head[:12]}/" in (out / "index.md").read_text()
