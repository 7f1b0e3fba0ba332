"""The dispatch chains in a pull request's summary, end to end (``python -m bot event``, the real
PyGithub stack against the fake GitHub): the seed PR adds the MI300X/MI325X MTP entries, and the
summary draws each one's chain (collapsed Mermaid flowcharts, which Mermaid's own parser accepts)
showing the plain script their launchers run; with the review workflow's map artifact named, the
summary links it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.github.conftest import MTP_ENTRIES, PR, REPO, with_base_config
from tests.map.browser import mermaid_check

_BLOCK = re.compile(r"^```mermaid\n(.*?)\n```$", re.S | re.M)
PLAIN = "benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh"


def _summary(pr: PR) -> str:
    [body] = [str(c["body"]) for c in pr.gh.issue_comments(REPO, pr.number) if "benchbot:summary" in str(c["body"])]
    return body


def test_the_seed_pr_summary_draws_the_chains_it_adds(seed_pr: PR, tmp_path: Path) -> None:
    seed_pr.monkeypatch.setenv("BENCHBOT_MAP_ARTIFACT", "benchbot-map")
    seed_pr.monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    seed_pr.run("opened")
    summary = _summary(seed_pr)
    section = summary.split("### Dispatch chains of the changed entries", 1)[1].split("\n---\n", 1)[0]
    assert [n for n in re.findall(r"<summary><code>(.*?)</code>", section)] == sorted(MTP_ENTRIES)
    assert section.count("<details>") == 2 and "<details open" not in section
    blocks = _BLOCK.findall(section)
    assert len(blocks) == 2  # new entries: one chart each (no "before")
    results = mermaid_check(tmp_path, blocks)
    assert all(r["parsed"] is True and r.get("renderError") is None for r in results)
    assert PLAIN in str(results[0]["text"]) and "_mtp.sh" not in str(results[0]["text"])  # what the bug runs
    assert ("The dispatch map of this head (every entry's chain, with the findings on it) is the artifact "
            "`benchbot-map` of [this run](") in summary
    assert re.search(rf"\(https?://[^)\s]+/{REPO}/actions/runs/4242\)\.", summary)


def test_map_entries_zero_draws_none(seed_pr: PR) -> None:
    pr = with_base_config(seed_pr, "github:\n  map-entries: 0\n")
    pr.run("opened")
    summary = _summary(pr)
    assert "Dispatch chains" not in summary and "```mermaid" not in summary
    assert "dispatch map of this head" not in summary  # no artifact named: no link
