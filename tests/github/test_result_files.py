"""Result files of a run's artifacts: InferenceX's agg JSON in small zips built here, and hostile ones."""

from __future__ import annotations

import io
import json
import math
import zipfile
from typing import Any

import pytest

from bot.github import result_files as rf


def _zip(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _agg(conc: int, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"hw": "b200", "conc": conc, "infmax_model_prefix": "dsr1", "framework": "sglang",
                            "precision": "fp8", "spec_decoding": "mtp", "isl": 8192, "osl": 1024, "tp": 8, "ep": 8,
                            "tput_per_gpu": 100.0 + conc, "median_ttft": 0.5, "median_tpot": 0.01,
                            "median_intvty": 100.0}
    data.update(extra)
    return data


def _parse(files: dict[str, bytes]) -> rf.Parsed:
    out = rf.Parsed()
    rf.parse_zip("bmk_x", _zip(files), out)
    return out


def test_a_single_node_result_is_one_row() -> None:
    out = _parse({"agg_x.json": json.dumps(_agg(16)).encode()})
    assert out.notes == []
    assert out.rows == [rf.Row("dsr1 b200 sglang fp8 mtp", "8192", "1024", "tp8 ep8", "16", 116.0, 500.0, 10.0, 100.0)]
    text = rf.table(out)
    assert text.splitlines()[2] == ("| dsr1 b200 sglang fp8 mtp | 8192/1024 | tp8 ep8 | 16 | 116.0 | 500.0 | 10.00 "
                                    "| 100.0 |")


def test_multinode_and_missing_latencies() -> None:
    out = _parse({"agg.json": json.dumps(_agg(4, is_multinode=True, prefill_tp=4, decode_tp=8, median_ttft=None,
                                                median_tpot="x", median_intvty=None)).encode()})
    (r,) = out.rows
    assert r.parallel == "P tp4 / D tp8" and r.ttft_ms is None and r.tpot_ms is None
    assert "| – | – | – |" in rf.table(out)


def test_wanted_prefers_the_aggregate_and_skips_other_artifacts() -> None:
    assert rf.wanted(["bmk_a", "server_logs_a", "results_bmk", "bmk_b"]) == ["results_bmk"]
    assert rf.wanted(["bmk_a", "bmk_agentic_a", "gpu_metrics_a", "bmk_b"]) == ["bmk_a", "bmk_b"]


def test_rows_are_capped() -> None:
    out = _parse({"agg_bmk.json": json.dumps([_agg(c) for c in range(rf.MAX_ROWS + 7)]).encode()})
    text = rf.table(out)
    assert text.count("\n| dsr1") == rf.MAX_ROWS and "and 7 more results" in text


def test_hostile_archives_give_one_line_notes() -> None:
    cases: list[tuple[bytes, str]] = [
        (b"not a zip", "not a zip archive"),
        (_zip({f"{i}.json": b"{}" for i in range(rf.MAX_ENTRIES + 1)}), "files in the archive"),
        (_zip({"../up.json": json.dumps(_agg(1)).encode(), "/abs.json": b"{}"}), "unsafe name"),
        (_zip({"bomb.json": b"[" + b"0," * (rf.MAX_JSON_BYTES) + b"0]"}), "too large"),
        (_zip({"deep.json": b"[" * 5000 + b"]" * 5000}), "nested"),
        (_zip({"broken.json": b'{"a": '}), "not valid JSON"),
        (_zip({"bin.json": b"\xff\xfe"}), "not valid JSON"),
        (_zip({"x.json": json.dumps({"tput_per_gpu": "fast"}).encode()}), "without a numeric"),
        (b"x" * (rf.MAX_ZIP_BYTES + 1), "over 8 MB"),
    ]
    for data, note in cases:
        out = rf.Parsed()
        rf.parse_zip("bmk_x", data, out)
        assert out.rows == [], note
        assert out.notes and note in out.notes[0], (note, out.notes)
        assert all("\n" not in n for n in out.notes)


def test_a_lying_size_header_is_still_bounded() -> None:
    data = bytearray(_zip({"a.json": b" " * (rf.MAX_JSON_BYTES + 10)}, zipfile.ZIP_STORED))
    # shrink the recorded sizes in the central directory: the reader must still stop at the budget
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24:cd + 28] = (10).to_bytes(4, "little")
    out = rf.Parsed()
    rf.parse_zip("bmk_x", bytes(data), out)
    assert out.rows == [] and out.notes


def test_non_json_members_are_ignored() -> None:
    out = _parse({"server.log": b"\x00\x01", "agg.json": json.dumps(_agg(2)).encode()})
    assert len(out.rows) == 1 and out.notes == []


NON_FINITE = ["nan", "NaN", "Infinity", "-Infinity", "inf", "-inf", " nan ", "1e400"]


@pytest.mark.parametrize("text", NON_FINITE)
def test_a_non_finite_throughput_is_not_a_row(text: str) -> None:
    out = _parse({"agg.json": json.dumps(_agg(4, tput_per_gpu=text)).encode()})
    assert out.rows == [] and "without a numeric tput_per_gpu" in out.notes[0]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400],
                         ids=["NaN", "Infinity", "-Infinity", "1e400", "400-digits"])
def test_non_finite_json_numbers_are_not_numbers(literal: str) -> None:
    """Python's json reads NaN, Infinity and 1e400 as floats and 400 digits as an int no float holds."""
    latencies = ('{"hw": "b200", "conc": 4, "tput_per_gpu": 1.5, "median_ttft": %s, "median_tpot": %s, '
                 '"median_intvty": %s}' % (literal, literal, literal))
    out = _parse({"agg.json": latencies.encode(), "tput.json": b'{"tput_per_gpu": %s}' % literal.encode()})
    (r,) = out.rows
    assert (r.tput_per_gpu, r.ttft_ms, r.tpot_ms, r.intvty) == (1.5, None, None, None)
    assert out.notes == ["bmk_x: tput.json: 1 result(s) without a numeric tput_per_gpu; left out"]


@pytest.mark.parametrize("field", ["median_ttft", "median_tpot", "median_intvty"])
@pytest.mark.parametrize("text", NON_FINITE)
def test_non_finite_latencies_are_blank_cells(field: str, text: str) -> None:
    out = _parse({"agg.json": json.dumps(_agg(4, **{field: text})).encode()})
    (r,) = out.rows
    assert all(v is None or math.isfinite(v) for v in (r.tput_per_gpu, r.ttft_ms, r.tpot_ms, r.intvty))
    assert [r.ttft_ms, r.tpot_ms, r.intvty].count(None) == 1
    table = rf.table(out).lower()
    assert "nan" not in table and "inf" not in table


def test_a_latency_that_overflows_in_milliseconds_is_blank() -> None:
    (r,) = _parse({"agg.json": json.dumps(_agg(4, median_ttft=1e306, median_tpot=1e306)).encode()}).rows
    assert r.ttft_ms is None and r.tpot_ms is None


def test_a_non_finite_concurrency_sorts_as_unknown() -> None:
    out = _parse({"agg.json": json.dumps([_agg(8), {**_agg(4), "conc": "nan"}, _agg(2)]).encode()})
    lines = rf.table(out).splitlines()[2:]
    assert [line.split(" | ")[3] for line in lines] == ["nan", "2", "8"]
