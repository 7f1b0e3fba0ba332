"""bot.github.evidence, pure: which pull requests change speculative settings, and the summary's
accuracy-evidence lines for their descriptions."""

from __future__ import annotations

from bot.github.evidence import SpecChange, async_scheduling, section, spec_change
from bot.github.port import ChangedFile
from bot.repo.load.configs import Entry, Point
from bot.repo.load.yamlfile import Mark

AT = Mark(1, 1)
CONFIG = "configs/amd-master.yaml"
TABLE = "|Tasks|Filter|n-shot|Metric| |Value| |Stderr|\n|---|---|---|---|---|---|---|---|\n" \
        "|gsm8k|flexible-extract|5|exact_match|↑|{v}|±|{se}|\n"


def _entry(name: str, spec: str = "none", image: str = "vllm:1", path: str = CONFIG) -> Entry:
    point = Point({"tp": 8, "spec-decoding": spec}, AT, "fixed-seq-len", {})
    return Entry(name, path, AT, {"image": image}, (point,))


def _files(*paths: str, status: str = "modified") -> list[ChangedFile]:
    return [ChangedFile(p, status, "") for p in paths]


def test_spec_change_from_files_and_entries() -> None:
    base = [_entry("a-mtp"), _entry("b"), _entry("c", "mtp")]
    head = [_entry("a-mtp"), _entry("b", "mtp"), _entry("c", "mtp", image="vllm:2"), _entry("d-mtp", path="other.yaml"),
            _entry("e")]
    scripts = {"bench/x_mtp.sh": b"vllm serve m \\\n  --async-scheduling\n", "bench/y_mtp.sh": b"vllm serve m\n"}
    files = _files(CONFIG, "bench/x_mtp.sh", "bench/y_mtp.sh", "bench/plain.sh") + _files("bench/z_mtp.sh",
                                                                                            status="removed")
    got = spec_change(files, base, head, scripts.get)
    # a-mtp is unchanged, d-mtp is in a file the PR does not touch, e is no speculative entry, z_mtp.sh went
    assert got == SpecChange(("bench/x_mtp.sh", "bench/y_mtp.sh"), ("b", "c"), ("bench/x_mtp.sh",))
    assert not spec_change(_files("README.md"), base, head, scripts.get)


def test_async_scheduling_flag() -> None:
    assert async_scheduling("vllm serve m --async-scheduling &")
    assert async_scheduling("ARGS=(--async_scheduling)")
    assert not async_scheduling("vllm serve m --no-async-scheduling")
    assert not async_scheduling("# add --async-scheduling later\nvllm serve m")
    assert not async_scheduling("vllm serve m --async-scheduling-extra")


def test_nothing_to_say_without_a_speculative_change_or_tables() -> None:
    assert section(SpecChange(), "A plain PR.") == []
    assert section(SpecChange(), TABLE.format(v="0.9", se="0.01")) == []  # one table: nothing to compare


def test_tables_are_compared_even_without_a_speculative_change() -> None:
    body = TABLE.format(v="0.9530", se="0.0058") + "\n" + TABLE.format(v="0.9454", se="0.0063")
    got = "\n".join(section(SpecChange(), body))
    assert "| candidate 1 | `gsm8k` |" in got and "| -0.0076 | 0.0171 | within noise |" in got
    assert "Please add" not in got


def test_one_table_and_a_speculative_change() -> None:
    got = "\n".join(section(SpecChange(("x_mtp.sh",)), TABLE.format(v="0.9", se="0.01")))
    assert "The description holds one lm_eval table; a comparison needs a base and a candidate." in got
    assert "Please add accuracy evidence" in got and "script `x_mtp.sh`" in got


def test_an_unreadable_table_is_said_escaped() -> None:
    body = TABLE.format(v="<b>@alice</b>", se="0.01")
    got = "\n".join(section(SpecChange(("x_mtp.sh",)), body))
    assert "could not read the lm_eval table in the description (line 3)" in got
    assert "<b>" not in got and "@alice" not in got and "Please add accuracy evidence" in got


def test_the_async_line_goes_with_evidence_run_with_it_off() -> None:
    change = SpecChange(("x_mtp.sh",), (), ("x_mtp.sh",))
    two = TABLE.format(v="0.95", se="0.01") + "\nMTP:\n" + TABLE.format(v="0.94", se="0.01")
    assert "`x_mtp.sh` runs the MTP server with `--async-scheduling`" in "\n".join(section(change, two))
    three = two + "\nMTP, --no-async-scheduling:\n" + TABLE.format(v="0.95", se="0.01")
    assert "--async-scheduling`" not in "\n".join(section(change, three))
