"""variant-drift on copies of the variant-drift fixture, through ``lint``: what is listed (entry
fields, parallelism, engine flags and environment), what is left out (speculation, values that
follow from the points, a parallel size of 1, draft-token headroom), where the one finding per
pair sits, the message's cap, and the base evaluations it costs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import bot.launches.specview as specview
from bot.config import Config
from bot.findings import Finding
from bot.lint import lint
from bot.repo.files.tree import WorkTree
from tests.conftest import FIXTURES, copy_repo

S = "benchmarks/single_node/fixed_seq_len"
CFG = "configs/amd-master.yaml"
QWEN = f"{S}/qwen3.5_fp8_mi300x_mtp.sh"
KIMI = f"{S}/kimik2.5_int4_mi300x_mtp.sh"


def _found(tmp_path: Path, edits: dict[str, tuple[str, str]] | None = None, copy: str = "r") -> list[Finding]:
    repo = copy_repo(FIXTURES / "variant-drift", tmp_path / copy)
    for path, (old, new) in (edits or {}).items():
        f = repo / path
        assert old in f.read_text(), (path, old)
        f.write_text(f.read_text().replace(old, new, 1))
    return [f for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == "variant-drift"]


def _by_entry(found: list[Finding]) -> dict[str, Finding]:
    return {f.entries[0]: f for f in found}


def test_one_finding_per_pair_with_its_differences(tmp_path: Path) -> None:
    found = _by_entry(_found(tmp_path))
    assert sorted(found) == ["dsr1-fp8-mi300x-sglang-mtp", "glm5-fp8-mi300x-vllm-mtp", "qwen3.5-fp8-mi300x-vllm-mtp"]
    dsr1 = found["dsr1-fp8-mi300x-sglang-mtp"]
    assert dsr1.message == ("dsr1-fp8-mi300x-sglang-mtp differs from its base dsr1-fp8-mi300x-sglang beyond the "
                            "speculative settings: image tag v0.5.10-rocm700-mi30x (base v0.5.9-rocm700-mi30x); "
                            "--mem-fraction-static 0.8 (base 0.85)")
    assert (dsr1.path, dsr1.line) == (CFG, 17)  # a config difference: at the variant's entry key
    assert dsr1.entries == ("dsr1-fp8-mi300x-sglang-mtp", "dsr1-fp8-mi300x-sglang")
    assert dsr1.key == "dsr1-fp8-mi300x-sglang-mtp|dsr1-fp8-mi300x-sglang"
    notes = [(r.path.rpartition("/")[2], r.line, r.note) for r in dsr1.related]
    assert ("amd-master.yaml", 2, "the base entry dsr1-fp8-mi300x-sglang") in notes
    assert ("amd-master.yaml", 3, "dsr1-fp8-mi300x-sglang: its image") in notes
    assert ("dsr1_fp8_mi300x_mtp.sh", 5, "--mem-fraction-static 0.8 (base 0.85)") in notes
    assert ("dsr1_fp8_mi300x.sh", 5, "dsr1-fp8-mi300x-sglang: its --mem-fraction-static") in notes
    # flags only: at the flag's line in the variant's script; an engine variable counts too
    qwen = found["qwen3.5-fp8-mi300x-vllm-mtp"]
    assert (qwen.path, qwen.line) == (QWEN, 7)
    assert qwen.message.endswith(": --max-num-seqs 128 (base not set); env VLLM_USE_TRITON_FLASH_ATTN 0 (base not set)")
    glm5 = found["glm5-fp8-mi300x-vllm-mtp"]
    assert glm5.message.endswith(": isl 1024 / osl 1024: tp 4 only in the variant (base tp 8); "
                                 "isl 8192 / osl 1024: no base points")
    assert (glm5.path, glm5.line) == (CFG, 79)


def test_what_follows_from_the_points_is_left_out(tmp_path: Path) -> None:
    # kimik2.5: the variant's first point is ep 8 at conc 64, the base's ep 1 at conc 4; --max-num-seqs
    # "$CONC" and EP_SIZE-switched expert parallelism follow; 8320 is 8192 plus draft room; pp 1 is the default
    assert "kimik2.5-int4-mi300x-vllm-mtp" not in _by_entry(_found(tmp_path))
    # the same script with a real difference: reported, with nothing of the above
    found = _by_entry(_found(tmp_path, {KIMI: ("--max-num-batched-tokens 8320", "--max-num-batched-tokens 16384")},
                             "r2"))
    assert found["kimik2.5-int4-mi300x-vllm-mtp"].message.endswith(
        "beyond the speculative settings: --max-num-batched-tokens 16384 (base 8192)")


def test_a_flag_only_one_side_writes_anywhere_is_reported_even_at_other_points(tmp_path: Path) -> None:
    # the variant switches expert parallelism on unconditionally: the base writes it only in its branch,
    # so at ep 1 it does not; but --enforce-eager appears nowhere in the base script
    eager = ("--max-num-seqs \"$CONC\"", "--max-num-seqs \"$CONC\" --enforce-eager")
    found = _by_entry(_found(tmp_path, {KIMI: eager}))
    msg = found["kimik2.5-int4-mi300x-vllm-mtp"].message
    assert msg.endswith(": --enforce-eager true (base not set)")


def test_the_message_names_the_top_three_then_how_many_more(tmp_path: Path) -> None:
    flags = "--max-num-seqs 128 --block-size 32 --swap-space 8 --seed 1 --speculative-config"
    found = _by_entry(_found(tmp_path, {QWEN: ("--max-num-seqs 128 --speculative-config", flags)}))
    msg = found["qwen3.5-fp8-mi300x-vllm-mtp"].message
    assert msg.endswith("--max-num-seqs 128 (base not set); --block-size 32 (base not set); --swap-space 8 (base not "
                        "set) and 2 more")


def test_speculative_settings_and_unknown_values_are_not_differences(tmp_path: Path) -> None:
    spec = ('SPEC=\'{"method": "mtp", "num_speculative_tokens": 3}\'\nexport SGLANG_ENABLE_SPEC_V2=1\n'
            'export VLLM_UNKNOWN="$(nproc)"\n')
    old = "export VLLM_USE_TRITON_FLASH_ATTN=0\nSPEC='{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'\n"
    edits = {QWEN: (old, spec),
             f"{S}/qwen3.5_fp8_mi300x.sh": ("--port 8888", "--port 8888 --max-num-seqs \"$(nproc)\"")}
    found = _by_entry(_found(tmp_path, edits))
    # --max-num-seqs 128 against a value the base's command cannot know: left out with the rest
    assert "qwen3.5-fp8-mi300x-vllm-mtp" not in found


def test_image_tags_are_shown_by_the_parts_that_differ(tmp_path: Path) -> None:
    old = "  image: lmsysorg/sglang:v0.5.10-rocm700-mi30x\n"
    new = "  image: lmsysorg/sglang:v0.5.9-rocm700-mi30x-20260708\n"
    base = "  image: lmsysorg/sglang:v0.5.9-rocm700-mi30x\n  model: deepseek-ai/DeepSeek-R1-0528\n"
    edits = {CFG: (old, new)}
    found = _by_entry(_found(tmp_path, edits))
    assert "image tag v0.5.9-rocm700-mi30x-20260708 (base v0.5.9-rocm700-mi30x)" in \
        found["dsr1-fp8-mi300x-sglang-mtp"].message  # other lengths: the tags whole
    repo_edit = {CFG: (base, base.replace("mi30x\n", "mi30x-20260701\n"))}
    repo = copy_repo(FIXTURES / "variant-drift", tmp_path / "r2")
    cfg = repo / CFG
    cfg.write_text(cfg.read_text().replace(old, new).replace(*repo_edit[CFG], 1))
    msg = next(f.message for f in lint(WorkTree(str(repo)), Config()).findings if f.rule == "variant-drift"
               and f.entries[0] == "dsr1-fp8-mi300x-sglang-mtp")
    assert "image tag \u2026-20260708 (base \u2026-20260701)" in msg


def test_the_clean_twin_is_clean_and_each_pair_costs_one_base_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = specview._site

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(str(args[5]))
        return real(*args, **kwargs)

    monkeypatch.setattr(specview, "_site", counted)
    # honoured: a lint the cache neither answers nor keeps (every evaluation runs)
    assert lint(WorkTree(str(FIXTURES / "variant-drift-clean")), Config(), honoured=lambda _: True).findings == []
    bases = [m for m in made if not m.endswith("_mtp.sh")]
    assert sorted(bases) == sorted(f"{S}/{m}_mi300x.sh" for m in ("dsr1_fp8", "glm5_fp8", "kimik2.5_int4",
                                                                  "qwen3.5_fp8"))


def test_a_base_script_bash_rejects_is_not_compared(tmp_path: Path) -> None:
    broken = {f"{S}/qwen3.5_fp8_mi300x.sh": ("> server.log 2>&1 &", "> server.log 2>&1 & )")}
    repo = copy_repo(FIXTURES / "variant-drift", tmp_path / "r")
    f = repo / f"{S}/qwen3.5_fp8_mi300x.sh"
    f.write_text(f.read_text().replace(*broken[f"{S}/qwen3.5_fp8_mi300x.sh"]))
    found = lint(WorkTree(str(repo)), Config()).findings
    assert "shell-syntax" in {x.rule for x in found}
    assert not [x for x in found if x.rule == "variant-drift" and x.entries[0] == "qwen3.5-fp8-mi300x-vllm-mtp"]
