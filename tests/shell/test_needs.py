"""What a benchmark script needs from its environment (``bot.shell.analysis.needs``), read statically
from real tree-sitter parses."""

from __future__ import annotations

from bot.shell.analysis.needs import Need, needs
from bot.shell.evaluator.state import Loc
from bot.shell.front.parse import parse

PATH = "benchmarks/single_node/b.sh"
CHECKS = frozenset({"check_env_vars"})


def of(src: str) -> list[tuple[str, int, str]]:
    return [(n.name, n.loc.line, n.how) for n in needs(parse(PATH, src.encode()), CHECKS)]


def test_check_env_vars_over_continued_lines_and_a_guard() -> None:
    src = ('#!/usr/bin/env bash\nsource "$(dirname "$0")/../benchmark_lib.sh"\n'
           'check_env_vars \\\n    MODEL \\\n    TP CONC \\\n    RESULT_FILENAME\n'
           ': "${PORT:?set PORT}"\necho "${HF_HOME?}"\nvllm serve "$MODEL" --port "$PORT"\n')
    assert of(src) == [("MODEL", 4, "check"), ("TP", 5, "check"), ("CONC", 5, "check"),
                       ("RESULT_FILENAME", 6, "check"), ("PORT", 7, "guard"), ("HF_HOME", 8, "guard")]


def test_need_records_the_file_and_column() -> None:
    got = needs(parse(PATH, b"check_env_vars MODEL\n"), CHECKS)
    assert got == [Need("MODEL", Loc(PATH, 1, 16), "check")]


def test_dedup_by_name_keeps_the_first() -> None:
    assert of('check_env_vars TP\n: "${TP:?}"\ncheck_env_vars TP MODEL\n') == [("TP", 1, "check"),
                                                                               ("MODEL", 3, "check")]


def test_guards_inside_functions_substitutions_and_tests() -> None:
    src = 'f() {\n  X=$(echo "${A:?}")\n}\nif [[ -n "${B:?}" ]]; then\n  for i in "${C?}"; do :; done\nfi\n'
    assert of(src) == [("A", 2, "guard"), ("B", 4, "guard"), ("C", 5, "guard")]


def test_only_env_check_commands_count_and_only_literal_names() -> None:
    assert of('other_check MODEL\ncheck_env_vars "$DYN" TP\n') == [("TP", 2, "check")]


def test_without_set_u_plain_reads_are_not_needs() -> None:
    assert of('vllm serve "$MODEL" --tp "$TP"\n') == []


def test_set_u_makes_reads_of_never_assigned_variables_needs() -> None:
    src = ('set -euo pipefail\nPORT=8000\nread -r ANSWER\nfor i in 1 2; do echo "$i"; done\nlocal L\n'
           'export E=1\nprintf -v P %s x\n: "${D:=1}"\nf() { echo "$1"; }\n'
           'vllm serve "$MODEL" --port "$PORT" "$ANSWER" "$L" "$E" "$P" "$D" "${OPT:-}" "$@" "$#"\n'
           'echo "${#TP}" "${EXTRA%%x}"\n')
    assert of(src) == [("MODEL", 10, "nounset"), ("TP", 11, "nounset"), ("EXTRA", 11, "nounset")]


def test_set_u_reads_of_a_variable_also_read_with_a_default_are_not_needs() -> None:
    src = 'set -eu\nif [[ -n "${ROCR:-}" ]]; then\n  export HIP="$ROCR"\nfi\necho "$MODEL"\n'
    assert of(src) == [("MODEL", 5, "nounset")]


def test_set_u_turned_off_again_at_top_level() -> None:
    assert of('set -u\nset +u\necho "$MODEL"\n') == []


def test_nesting_to_the_front_end_limit() -> None:
    depth = 45  # the front-end cuts deeper nesting (bot.shell.ir.nesting); the walk is a loop anyway
    src = "".join("if true; then\n" for _ in range(depth)) + ': "${DEEP:?}"\n' + "fi\n" * depth
    assert of(src) == [("DEEP", depth + 1, "guard")]


def test_sourcing_a_file_from_the_image_may_set_anything() -> None:
    text = ("#!/bin/bash\nset -euo pipefail\nos=$(. /etc/os-release && printf '%s-%s' \"$ID\" \"$VERSION_ID\")\n"
            "echo \"$MODEL\"\n")
    assert of(text) == []
    # a repo file sourced by a computed path does not hide the script's own reads
    text2 = "#!/bin/bash\nset -euo pipefail\nsource \"$(dirname \"$0\")/lib.sh\"\necho \"$MODEL\"\n"
    assert of(text2) == [("MODEL", 4, "nounset")]
