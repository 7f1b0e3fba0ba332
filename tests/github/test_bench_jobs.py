"""The job count of a /bench selection (bot.github.jobs_count) on fixture entries, read through the
real YAML loader, and ``bench.max-jobs`` / ``--yes`` through the real PyGithub stack."""

from __future__ import annotations

from pathlib import Path

from bot.github import claim
from bot.github.jobs_count import concurrencies, count
from bot.repo.files.tree import WorkTree
from bot.repo.load.configs import load_config
from tests.conftest import EXAMPLE
from tests.github.commenting import _reactions, _replies, _run
from tests.github.conftest import PR, REPO

CONFIG = """\
single:
  runner: mi325x
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 48 }
      - { tp: 4, ep: 4, dp-attn: true, conc-list: [1, 2] }
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 2, pp: 2, conc-start: 64, conc-end: 64 }
agentic:
  runner: mi325x
  scenarios:
    agentic-coding:
    - trace-source: x
      search-space:
      - { tp: 8, kv-offloading: none, conc-list: [], conc-start: 1, conc-end: 4 }
multi:
  runner: gb200
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [8, 90]
        prefill: { num-worker: 1, tp: 4, ep: 4 }
        decode: { num-worker: 3, tp: 8, ep: 8 }
      - conc-list: [4]
        prefill: { num-worker: 1, tp: 4 }
        decode: { num-worker: 1, tp: 8 }
      - conc-list: [32]
        prefill: { num-worker: 1, tp: 4, ep: 4 }
        decode: { num-worker: 3, tp: 8, ep: 8 }
    agentic-coding:
    - trace-source: y
      search-space:
      - conc-list: [16, 32]
        prefill: { num-worker: 1, tp: 4 }
        decode: { num-worker: 1, tp: 4 }
broken:
  runner: mi325x
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - { tp: 8, conc-start: x, conc-end: 8 }
    - { tp: 8, conc-start: 2, conc-end: 8 }
"""


def _entries(tmp_path: Path) -> dict[str, object]:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs/x-master.yaml").write_text(CONFIG)
    cfg = load_config(WorkTree(str(tmp_path)), "configs/x-master.yaml")
    assert cfg.error is None
    return {e.name: e for e in cfg.entries}


def test_concurrency_ranges_double_and_cap_at_the_end() -> None:
    assert concurrencies({"conc-start": 4, "conc-end": 48}) == [4, 8, 16, 32, 48]
    assert concurrencies({"conc-start": 4, "conc-end": 4}) == [4]
    assert concurrencies({"conc-start": 8, "conc-end": 4}) == []
    assert concurrencies({"conc-list": [3, 1]}) == [3, 1]
    # fixed-seq-len takes conc-list whenever the key is there; agentic only when it is not empty
    assert concurrencies({"conc-list": [], "conc-start": 1, "conc-end": 2}) == []
    assert concurrencies({"conc-list": [], "conc-start": 1, "conc-end": 2}, agentic=True) == [1, 2]
    assert concurrencies({"conc-start": "4", "conc-end": 8}) is None
    assert concurrencies({"conc-list": [1, "x"]}) is None


def test_count_follows_the_generator(tmp_path: Path) -> None:
    e = _entries(tmp_path)
    single = count([e["single"]])  # type: ignore[list-item]
    # 1k1k: 5 (tp8) + 2 (list) ; 8k1k: 1 -> 8 jobs; GPUs 5*8 + 2*4 + 1*4
    assert (single.jobs, single.gpus, single.exact) == (8, 5 * 8 + 2 * 4 + 4, True)
    agentic = count([e["agentic"]])  # type: ignore[list-item]
    assert (agentic.jobs, agentic.gpus) == (3, 3 * 8)  # conc 1, 2, 4
    multi = count([e["multi"]])  # type: ignore[list-item]
    # 3 fixed rows (one job each, the whole conc list) + 1 eval (rows 1 and 3 are one topology with a
    # conc >= 16; row 2 never reaches 16) + 2 agentic (one per conc)
    assert multi.jobs == 3 + 1 + 2
    assert multi.gpus == (28 + 12 + 28) + 28 + 2 * (4 + 4)
    broken = count([e["broken"]])  # type: ignore[list-item]
    assert broken.jobs == 1 + 3 and broken.unknown == ["broken"] and not broken.exact
    assert broken.text().startswith("at least 4 benchmark jobs")
    everything = count(e.values())  # type: ignore[arg-type]
    assert everything.jobs == 8 + 3 + 6 + 4
    assert everything.per_entry == {"single": 8, "agentic": 3, "multi": 6, "broken": 4}


def test_the_seed_entries(tmp_path: Path) -> None:
    cfg = load_config(WorkTree(str(EXAMPLE)), "configs/amd-master.yaml")
    by = {x.name: x for x in cfg.entries}
    c = count([by["kimik2.5-int4-mi300x-vllm"]])
    assert (c.jobs, c.gpus) == (5 + 4, 9 * 8)  # 4..64 and 4..32 at tp 8
    assert c.text() == "9 benchmark jobs (about 72 GPU-jobs)"


def _max_jobs_pr(entry_pr: PR, limit: int) -> PR:
    """The commands workflow's checkout of the default branch has ``bench.max-jobs: limit``."""
    (entry_pr.repo / ".benchbot.yml").write_text(f"bench:\n  max-jobs: {limit}\n")
    return entry_pr


def test_above_max_jobs_is_refused_with_the_count_and_the_command(entry_pr: PR) -> None:
    pr = _max_jobs_pr(entry_pr, 5)
    code, cid = _run(pr, f"/bench mi325x @{pr.head[:12]}")
    assert code == 0 and pr.gh.dispatches(REPO) == []
    reply = next(b for b in _replies(pr) if claim.reply_marker(cid) in b)
    # kimik2.5-int4-mi325x-vllm with conc up to 128: 1k1k 4..128 (6) + 8k1k 4..32 (4)
    assert "10 benchmark jobs (about 80 GPU-jobs)" in reply and "`bench.max-jobs: 5`" in reply
    assert f"`/bench mi325x --yes @{pr.head}`" in reply
    assert _reactions(pr, cid) == ["confused", "eyes"]


def test_yes_dispatches_once_also_after_a_502_that_landed(entry_pr: PR) -> None:
    pr = _max_jobs_pr(entry_pr, 5)
    pr.gh.fail("POST", r"/repos/acme/bench/actions/workflows/[^/]+/dispatches", 502, after=True)
    code, cid = _run(pr, f"/bench mi325x --yes @{pr.head[:12]}")
    assert code == 0, _replies(pr)
    assert len(pr.gh.dispatches(REPO)) == 1
    reply = next(b for b in _replies(pr) if claim.reply_marker(cid) in b)
    assert "Dispatched 1 entry" in reply and "10 benchmark jobs (about 80 GPU-jobs)" in reply
    assert _reactions(pr, cid) == ["eyes", "rocket"]


def test_the_dispatch_answer_states_the_job_count(entry_pr: PR) -> None:
    code, cid = _run(entry_pr, "/bench mi325x")
    assert code == 0 and len(entry_pr.gh.dispatches(REPO)) == 1
    reply = next(b for b in _replies(entry_pr) if claim.reply_marker(cid) in b)
    assert "10 benchmark jobs (about 80 GPU-jobs)" in reply


def test_a_refusal_after_the_selection_states_the_count(seed_pr: PR) -> None:
    # the seed PR adds MTP entries whose launcher ignores the variant: refused by the lint gate
    from tests.github.commenting import _setup

    _setup(seed_pr)
    code, cid = _run(seed_pr, f"/bench mi325x @{seed_pr.head}")
    reply = next(b for b in _replies(seed_pr) if claim.reply_marker(cid) in b)
    assert code == 0 and seed_pr.gh.dispatches(REPO) == []
    assert "Not dispatched: benchbot says" in reply and "benchmark jobs (about" in reply
