"""config-syntax when a master config or runners.yaml does not load whole: the entries (labels)
that do load are linted as usual, each broken block is one finding at its line, and the
summaries count the entries not read. Through the real CLI on copies of the seed repo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.findings import fingerprint_of
from tests.conftest import EXAMPLE, copy_repo

MASTER = "configs/amd-master.yaml"
RUNNERS = "configs/runners.yaml"
MI325X = "kimik2.5-int4-mi325x-vllm"


def _break(repo: Path, entry: str, old: str = "tp: 8,", new: str = "tp: 8\uff0c") -> int:
    """A full-width comma in the first point of ``entry`` (the issue's repro); its line."""
    path = repo / MASTER
    lines = path.read_text().split("\n")
    start = next(i for i, text in enumerate(lines) if text.split(" ")[0] == f"{entry}:")
    at = next(i for i in range(start, len(lines)) if old in lines[i])
    lines[at] = lines[at].replace(old, new, 1)
    path.write_text("\n".join(lines))
    return at + 1


def _lint(repo: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["lint", str(repo), "--no-cache", *args])
    return code, capsys.readouterr().out


def _json(repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out = _lint(repo, capsys, "--format", "json")
    assert code == 1
    doc: dict[str, Any] = json.loads(out)
    return doc


def _syntax(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["rule"] == "config-syntax"]


def test_a_full_width_comma_loses_one_entry_not_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = _json(EXAMPLE, capsys)
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    line = _break(repo, MI325X)
    doc = _json(repo, capsys)
    [hit] = _syntax(doc)
    assert (hit["path"], hit["line"], hit["entries"]) == (MASTER, line, [MI325X])
    assert hit["message"] == (
        "invalid YAML: while parsing a flow mapping: did not find expected ',' or '}' (full-width '\uff0c' U+FF0C "
        f"where ASCII punctuation is expected); entry '{MI325X}' was not read (the file's 5 other entries were read)")
    # the fingerprint a file that does not load at all has: one broken entry keeps it
    assert hit["fingerprint"] == fingerprint_of("config-syntax", MASTER)
    # both MTP bugs are still found, as in the clean repo
    causes = [f for f in doc["findings"] if f["rule"] == "ignored-variant"]
    assert len(causes) == 2
    assert [f["fingerprint"] for f in causes] == [f["fingerprint"] for f in clean["findings"]
                                                  if f["rule"] == "ignored-variant"]
    assert doc["stats"]["entries"] == 5
    assert doc["stats"]["coverage"]["analysed"] == 5
    assert doc["stats"]["coverage"]["unread"] == {"count": 1, "entries": [MI325X]}
    assert "unread" not in clean["stats"]["coverage"]


def test_the_summaries_say_which_entries_were_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _break(repo, MI325X)
    _break(repo, "kimik2.5-int4-mi355x-vllm")
    code, text = _lint(repo, capsys, "--format", "text")
    assert code == 1
    summary = text.rstrip("\n").splitlines()[-1]
    assert "; 4 entries, 3 launchers, 7 scripts checked in " in summary
    assert summary.endswith(f"; 2 entries not read (syntax error): {MI325X}, kimik2.5-int4-mi355x-vllm")
    code, md = _lint(repo, capsys, "--format", "markdown")
    assert f"2 entries not read (syntax error): `{MI325X}`, `kimik2.5-int4-mi355x-vllm`." in md.splitlines()[0]
    code, clean = _lint(EXAMPLE, capsys, "--format", "text")
    assert "not read" not in clean


def test_two_broken_entries_are_two_findings_each_with_its_own_subject(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    first = _break(repo, MI325X)
    second = _break(repo, "kimik2.5-int4-mi355x-vllm-mtp", "spec-decoding: mtp }", "spec-decoding: mtp")
    hits = _syntax(_json(repo, capsys))
    # an unclosed flow mapping: libyaml stops at the next line
    assert [(h["line"], h["entries"]) for h in hits] == [(first, [MI325X]),
                                                          (second + 1, ["kimik2.5-int4-mi355x-vllm-mtp"])]
    assert [h["fingerprint"] for h in hits] == [fingerprint_of("config-syntax", f"{MASTER}|{name}")
                                                for name in (MI325X, "kimik2.5-int4-mi355x-vllm-mtp")]
    assert all("the file's 4 other entries were read" in h["message"] for h in hits)


def test_the_recovered_entries_are_checked_against_the_schema(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _break(repo, MI325X)
    path = repo / MASTER
    path.write_text(path.read_text().replace("kimik2.5-int4-mi355x-vllm:\n", "kimik2.5-int4-mi355x-vllm:\n  tpyo: 1\n"))
    doc = _json(repo, capsys)
    schema = [(f["rule"], f["entries"], f["line"]) for f in doc["findings"] if f["rule"] == "config-schema"]
    line = path.read_text().split("\n").index("  tpyo: 1") + 1
    assert schema == [("config-schema", ["kimik2.5-int4-mi355x-vllm"], line)]


def test_dispatch_and_serve_read_the_recovered_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _break(repo, MI325X)
    assert main(["dispatch", str(repo), "--no-cache", "--entry", "kimik2.5-int4-mi325x-vllm-mtp"]) == 0
    out = capsys.readouterr().out
    assert "runners/launch_mi325x-amds.sh" in out and "kimik2.5_int4_mi325x.sh" in out
    assert main(["serve", str(repo), "--no-cache", "--format", "json"]) == 0
    served = json.loads(capsys.readouterr().out)
    names = {c["entry"] for c in served["commands"]}
    assert MI325X not in names and "kimik2.5-int4-mi325x-vllm-mtp" in names


def test_entries_that_use_an_anchor_of_the_broken_one_are_its_consequences(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    path = repo / MASTER
    text = path.read_text().replace(f"{MI325X}:\n", f"{MI325X}: &base\n", 1)
    path.write_text(text + "\nmi325x-copy-a:\n  <<: *base\n\nmi325x-copy-b:\n  <<: *base\n")
    line = _break(repo, MI325X)
    doc = _json(repo, capsys)
    [hit] = _syntax(doc)
    assert hit["line"] == line and hit["entries"] == [MI325X, "mi325x-copy-a", "mi325x-copy-b"]
    assert "nor 2 entries using its anchors" in hit["message"]
    lines = path.read_text().split("\n")
    assert [(r["line"], r["note"]) for r in hit["related"]] == [
        (lines.index(f"{copy}:") + 2, f"entry '{copy}' uses an anchor of entry '{MI325X}': not read either")
        for copy in ("mi325x-copy-a", "mi325x-copy-b")]
    assert doc["stats"]["coverage"]["unread"] == {"count": 3, "entries": [MI325X, "mi325x-copy-a", "mi325x-copy-b"]}


def test_a_broken_runner_label_leaves_the_others_routing_entries(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    path = repo / RUNNERS
    path.write_text(path.read_text().replace("    - mi325x-amds_0\n", "    - mi325x-amds_0: [\n"))
    doc = _json(repo, capsys)
    [hit] = _syntax(doc)
    assert (hit["path"], hit["line"], hit["fingerprint"]) == (RUNNERS, 7, fingerprint_of("config-syntax", RUNNERS))
    assert hit["message"].endswith("; runner label 'mi325x' was not read (runner labels were not checked; "
                                   "the 2 labels read still route entries)")
    # the mi300x entries still reach their launcher: its MTP bug is found; the mi325x ones are unknown
    assert [f["path"] for f in doc["findings"] if f["rule"] == "ignored-variant"] == ["runners/launch_mi300x-amds.sh"]
    assert (doc["stats"]["coverage"]["analysed"], doc["stats"]["coverage"]["unknown"]) == (4, 2)
    # nothing is claimed from the incomplete label table
    assert not [f for f in doc["findings"] if f["rule"] in ("unknown-runner-label", "unreachable-launcher")]


def test_odd_broken_blocks_never_give_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    (repo / "configs" / "odd-master.yaml").write_text(
        '\ufeff%YAML 1.1\n---\n"a\\"b":\n  k: [\n? complex\n: 1\nfine:\n  k: 1\n&anchored key: {\nlast: *fine\n')
    doc = _json(repo, capsys)
    hits = [h for h in _syntax(doc) if h["path"] == "configs/odd-master.yaml"]
    assert hits and all(h["message"].startswith("invalid YAML: ") for h in hits)
    assert {h["line"] for h in hits} <= set(range(1, 11))
    unread = doc["stats"]["coverage"]["unread"]
    assert unread["count"] >= len(hits) and "fine" not in unread["entries"]


def test_a_kept_lint_keeps_the_entries_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The lint cache keeps the coverage whole: a warm lint says what a cold one said."""
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHBOT_NO_CACHE", raising=False)
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _break(repo, MI325X)
    cold = [main(["lint", str(repo), "--format", "json"]), capsys.readouterr().out]
    warm = [main(["lint", str(repo), "--format", "json"]), capsys.readouterr().out]
    assert json.loads(cold[1])["stats"]["coverage"]["unread"] == {"count": 1, "entries": [MI325X]}
    strip = [{k: v for k, v in json.loads(out)["stats"].items() if k != "seconds"} for _, out in (cold, warm)]
    assert strip[0] == strip[1] and cold[0] == warm[0] == 1


def test_the_script_of_an_entry_not_read_is_not_called_dead(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    _break(repo, "kimik2.5-int4-mi355x-vllm")  # the one entry that runs kimik2.5_int4_mi355x.sh
    doc = _json(repo, capsys)
    assert [f["entries"] for f in _syntax(doc)] == [["kimik2.5-int4-mi355x-vllm"]]
    dead = [f["path"] for f in doc["findings"] if f["rule"] == "dead-script"]
    assert not any(p.endswith("kimik2.5_int4_mi355x.sh") for p in dead)
    # the MI300X/MI325X MTP scripts the seed's launchers ignore are still dead (their entries were read)
    assert sum(f["rule"] == "ignored-variant" for f in doc["findings"]) == 2
