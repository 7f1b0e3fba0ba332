"""The spec rules' view (bot.launches.specview) and its static helpers (bot.serve.specswitch),
through real parses and real lints of fixture repos."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.config import load_config
from bot.launches import specview
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from bot.serve import specswitch
from bot.shell import default_parser
from tests.conftest import FIXTURES, copy_repo

parse, _ = default_parser()


def _script(text: str) -> object:
    return parse("s.sh", textwrap.dedent(text).encode())


def test_switches_name_the_variables_that_choose_a_speculative_setting() -> None:
    script = _script("""
        if [ "$CONC" -le 8 ]; then
            NUM_SPEC_TOKENS=3
        elif [ "$CONC" -le 16 ]; then
            NUM_SPEC_TOKENS=1
        else
            NUM_SPEC_TOKENS=0
        fi
        if [[ "$TP" -ne 8 ]]; then
            echo "MTP only supports TP=8"   # prose, not a setting
            exit 1
        fi
        [ "$DP_ATTENTION" = true ] && SPEC_ARGS+=(--speculative-eagle-topk 1)
        case "$ISL" in 8192) MTP=2 ;; *) MTP=3 ;; esac
        """)
    got = specswitch.switches(script)  # type: ignore[arg-type]
    assert set(got) == {"CONC", "DP_ATTENTION", "ISL"}
    assert got["CONC"] == (2,)


def test_thresholds_split_concurrencies_into_classes_that_take_the_same_branches() -> None:
    script = _script("""
        if [ "$CONC" -le 8 ]; then NUM_SPEC=7; elif [ "$CONC" -le 16 ]; then NUM_SPEC=3; else NUM_SPEC=0; fi
        """)
    cuts = specswitch.thresholds(script, "CONC")  # type: ignore[arg-type]
    assert cuts == ((8, "lo"), (16, "lo"))  # ``-le``: a value equal to the threshold goes with those below
    classes = {c: specswitch.value_class(str(c), cuts) for c in (1, 4, 8, 12, 16, 24, 70)}
    assert classes[1] == classes[4] == classes[8] != classes[12] == classes[16] == specswitch.value_class("15", cuts)
    assert classes[24] == classes[70] != classes[16]


def test_equality_tests_set_their_value_apart() -> None:
    script = _script("""
        if [ 32 -le "$CONC" ]; then NUM_SPEC=0; fi
        if [ "$CONC" -eq 4 ]; then SPEC_MODE=x; fi
        """)
    cuts = specswitch.thresholds(script, "CONC")  # type: ignore[arg-type]
    assert cuts == ((4, "own"), (32, "hi"))  # ``32 -le $CONC`` is ``$CONC -ge 32``
    assert specswitch.value_class("32", cuts) == specswitch.value_class("64", cuts)
    assert len({specswitch.value_class(str(c), cuts) for c in (2, 4, 8)}) == 3
    assert specswitch.value_class("x", cuts) == "x"


def test_a_case_on_the_variable_has_no_thresholds() -> None:
    script = _script("""
        case "$CONC" in 64|128) NUM_SPEC_TOKENS=0 ;; *) NUM_SPEC_TOKENS=1 ;; esac
        """)
    assert specswitch.thresholds(script, "CONC") is None  # type: ignore[arg-type]


def test_mentions_spec_ignores_comments() -> None:
    assert not specswitch.mentions_spec("#!/bin/bash\n# MTP later: --speculative-config\nvllm serve m\n")
    assert specswitch.mentions_spec("vllm serve m --speculative-config '{}'\n")
    assert specswitch.mentions_spec('SPEC_ARGS=(--speculative-algorithm EAGLE)\n')


def _sites(repo: Path) -> list[specview.Site]:
    tree = WorkTree(str(repo))
    result = lint(tree, load_config(tree))
    return specview.sites(result.facts)


def test_sites_cover_spec_points_and_hinted_plain_points_only() -> None:
    sites = _sites(FIXTURES / "spec-enabled")
    names = {s.entry.name for s in sites}
    # every -mtp entry, and the one plain entry whose script mentions speculation
    assert names == {"dsr1-fp8-mi300x-sglang-mtp", "glm5-fp8-mi300x-vllm-mtp", "qwen3.5-bf16-mi300x-vllm-mtp",
                     "kimik2.5-int4-mi300x-vllm-mtp", "kimik2.5-int4-mi300x-vllm", "minimaxm3-fp8-mi300x-vllm-mtp"}
    plain = next(s for s in sites if s.entry.name == "kimik2.5-int4-mi300x-vllm")
    assert plain.wanted == "none" and plain.server is not None and plain.server.spec is not None
    assert plain.server.spec["method"] == "eagle3"


def test_a_switch_on_the_concurrency_makes_one_site_per_class_of_concurrencies() -> None:
    sites = [s for s in _sites(FIXTURES / "spec-enabled") if s.entry.name == "qwen3.5-bf16-mi300x-vllm-mtp"]
    # conc 4..64 doubling; the script's case turns drafting off at 32 and 64: the case has no
    # thresholds, so each concurrency is its own class
    assert sorted(s.conc for s in sites if s.conc) == ["16", "32", "4", "64", "8"]
    off = sorted(s.conc for s in sites if s.server is not None and s.server.spec is None and s.conc)
    assert off == ["32", "64"]
    assert all(s.switched == ("CONC",) for s in sites)


def test_thresholds_let_one_evaluation_stand_for_its_class(tmp_path: Path) -> None:
    repo = copy_repo(FIXTURES / "spec-enabled-clean", tmp_path / "r")
    script = repo / "benchmarks/single_node/fixed_seq_len/qwen3.5_bf16_mi300x_mtp.sh"
    text = script.read_text().replace('case "$CONC" in\n    *) NUM_SPEC_TOKENS=1 ;;\nesac\n',
                                      'NUM_SPEC_TOKENS=1\nif [ "$CONC" -ge 32 ]; then NUM_SPEC_TOKENS=0; fi\n')
    script.write_text(text)
    sites = [s for s in _sites(repo) if s.entry.name == "qwen3.5-bf16-mi300x-vllm-mtp"]
    by_class = {s.conc: s.concs for s in sites}
    # ``-ge 32``: 32 takes the branch of the values above it
    assert by_class == {"4": ("4", "8", "16"), "32": ("32", "64")}
    off = [s for s in sites if s.server is not None and s.server.spec is None]
    assert [s.concs for s in off] == [("32", "64")]


def test_the_view_ends_each_path_at_its_server() -> None:
    tree = WorkTree(str(FIXTURES / "spec-enabled"))
    facts = lint(tree, load_config(tree)).facts
    specview.sites(facts)
    twin = facts.memo["spec.facts"]
    opts = twin.options()
    assert {"vllm", "sglang", "trtllm", "atom", "client"} <= opts.stop_after
    assert opts.after_sink_steps == 0
    # the lint's own facts are untouched: no sinks, nothing stops
    assert facts.sinks is None and facts.options().stop_after == frozenset()


def test_base_sibling_drops_the_spec_word() -> None:
    tree = WorkTree(str(FIXTURES / "spec-enabled"))
    facts = lint(tree, load_config(tree)).facts
    entry = next(e for e in facts.entries if e.name == "glm5-fp8-mi300x-vllm-mtp")
    base = specview.base_sibling(facts, entry)
    assert base is not None and base.name == "glm5-fp8-mi300x-vllm"
    assert specview.base_sibling(facts, base) is None



def test_the_switch_facts_are_kept_by_the_script_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm lint reads a script's switches from the persistent cache: it parses nothing."""
    from bot import cache
    from bot.launches import specstatic
    from bot.repo.facts import Facts, gather

    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    cache.disable(False)
    tree = WorkTree(str(FIXTURES / "spec-enabled"))
    script = "benchmarks/single_node/fixed_seq_len/qwen3.5_bf16_mi300x_mtp.sh"
    cold = gather(tree, load_config(tree).profile)
    first = (specstatic.switches(cold, script), specstatic.cuts(cold, script, "CONC"))
    assert first == ({"CONC": (4,), "NUM_SPEC_TOKENS": (10,)}, None)  # a case on $CONC: no thresholds

    def no_parse(self: Facts, path: str) -> None:
        raise AssertionError(f"parsed {path}")

    warm = gather(tree, load_config(tree).profile)
    monkeypatch.setattr(Facts, "script", no_parse)
    assert (specstatic.switches(warm, script), specstatic.cuts(warm, script, "CONC")) == first
    assert specstatic.eval_may_disable(warm, script) is False
