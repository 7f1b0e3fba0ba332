"""Reads of unset variables, ``set -u``, env checks and hand-offs in lint mode
(``bot.shell.evaluator.reads``), through the real tree-sitter front-end."""

from __future__ import annotations

import pytest

from bot.shell.evaluator.evaluate import Evaluator, Exited, FileSystem, Handed, Options, Read, Result
from bot.shell.evaluator.reads import presence_key
from bot.shell.front import bashlex_front
from bot.shell.front.parse import parse
from bot.shell.ir.nodes import Script
from bot.shell.ir.values import describe, known, lit

LAUNCHER = "runners/launch_x.sh"
CHECKS = frozenset({"check_env_vars"})
LIB = ('check_env_vars() {\n  for v in "$@"; do\n    if [[ -z "${!v:-}" ]]; then exit 1; fi\n  done\n}\n')


class DictFS(FileSystem):
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_dir(self, path: str) -> bool:
        return any(f.startswith(path.rstrip("/") + "/") for f in self.files)

    def script(self, path: str) -> Script | None:
        return parse(path, self.files[path].encode()) if path in self.files else None


def run(src: str, env: dict[str, str] | None = None, files: dict[str, str] | None = None,
        front: object = parse, **opts: object) -> Result:
    fs = DictFS({"benchmarks/b.sh": "true\n", **(files or {})})
    ev = Evaluator(fs, Options(parse=parse, **opts))  # type: ignore[arg-type]
    script = front(LAUNCHER, src.encode())  # type: ignore[operator]
    return ev.run(script, {k: lit(v) for k, v in (env or {}).items()})


def reads(r: Result) -> list[tuple[str, int, str]]:
    return [(e.name, e.loc.line, e.kind) for e in r.reads()]


def targets(r: Result) -> list[str]:
    return sorted(describe(d.target) for d in r.dispatches())


# ------------------------------------------------------------------ kinds of Read
@pytest.mark.parametrize("expr", ["$X", "${X}", "${X%%_*}", "${#X}", "${X/a/b}", "${X:0:2}", "${X^^}"])
def test_plain_reads_of_an_unset_variable(expr: str) -> None:
    r = run(f"echo hi\nbash benchmarks/b{expr}.sh\n", record_reads=True)
    assert reads(r) == [("X", 2, "plain")]
    assert "X" in r.relevant


@pytest.mark.parametrize("expr", ["${X:-d}", "${X-d}", "${X:=d}", "${X=d}", "${X:+a}", "${X+a}"])
def test_reads_with_a_default_are_not_recorded(expr: str) -> None:
    r = run(f'set -u\nY="{expr}"\nbash benchmarks/b.sh\n', record_reads=True)
    assert reads(r) == []
    assert targets(r) == ["benchmarks/b.sh"]


def test_set_variables_specials_and_runner_names_are_not_reads() -> None:
    src = ('A=1\necho "$A $1 $@ $# $? $$ $! $0 $_ $LINENO $RANDOM $PWD $BASH_SOURCE $FUNCNAME $BASH_VERSION"\n'
           'echo "$HOME $GIVEN"\nbash benchmarks/b.sh\n')
    r = run(src, {"GIVEN": "g"}, record_reads=True, unknown_names=lambda n: n == "HOME")
    assert reads(r) == []


@pytest.mark.parametrize("test", ['[[ -n "$OVERRIDE" ]]', '[[ -z $OVERRIDE ]]', "[[ $OVERRIDE ]]",
                                  '[ "$OVERRIDE" ]', '[ -n "$OVERRIDE" ]', 'test -z "$OVERRIDE"'])
def test_operands_of_n_z_tests_are_test_reads(test: str) -> None:
    r = run(f"if {test}; then echo o; fi\nbash benchmarks/b.sh\n", record_reads=True)
    assert reads(r) == [("OVERRIDE", 1, "test")]


def test_the_bashlex_front_end_marks_bracket_tests_too() -> None:
    r = run('if [ -n "$OVERRIDE" ]; then echo o; fi\n[ "$MODE" = x ] && echo y\nbash benchmarks/b.sh\n',
            front=bashlex_front.parse, record_reads=True)
    assert reads(r) == [("OVERRIDE", 1, "test"), ("MODE", 2, "plain")]


def test_a_comparison_operand_is_a_plain_read() -> None:
    r = run('if [[ "$MODE" == x ]]; then echo o; fi\n', record_reads=True)
    assert reads(r) == [("MODE", 1, "plain")]


@pytest.mark.parametrize("expr,env", [("${X:?need X}", {}), ("${X?need X}", {}), ("${X:?}", {"X": ""})])
def test_guards_end_the_path_and_are_guard_reads(expr: str, env: dict[str, str]) -> None:
    r = run(f': "{expr}"\nbash benchmarks/b.sh\n', env, record_reads=True)
    assert reads(r) == [("X", 1, "guard")]
    assert targets(r) == [] and all(p.exited for p in r.paths)
    assert "X" in r.relevant


def test_one_read_per_name_word_and_kind_per_path() -> None:
    r = run('echo "$X-$X"\necho $X\necho "$X-$X"\n', record_reads=True)
    assert reads(r) == [("X", 1, "plain"), ("X", 2, "plain"), ("X", 3, "plain")]
    assert [e.loc.col for e in r.reads()] == [6, 6, 6]


def test_without_record_reads_nothing_is_recorded() -> None:
    r = run('echo "$X"\n[[ -n $Y ]]\n: "${Z:?}"\n')
    assert r.reads() == [] and "X" not in r.relevant and r.presence == frozenset()


# ---------------------------------------------------------------------- set -u
NOUNSET_LAUNCHER = ('#!/usr/bin/env bash\nset -euo pipefail\necho start\n'
                    'bash "benchmarks/${SCENARIO_SUBDIR}b.sh"\n')


def test_nounset_read_of_an_unset_variable_exits_at_that_line() -> None:
    r = run(NOUNSET_LAUNCHER)
    assert targets(r) == []
    assert [p.exit_at for p in r.paths] == [Exited(r.paths[0].exit_at.loc, 1)]  # type: ignore[union-attr]
    exit_at = r.paths[0].exit_at
    assert exit_at is not None and (exit_at.loc.line, exit_at.code) == (4, 1)
    assert "SCENARIO_SUBDIR" in r.relevant


def test_nounset_read_is_recorded_as_nounset() -> None:
    r = run(NOUNSET_LAUNCHER, record_reads=True)
    assert reads(r) == [("SCENARIO_SUBDIR", 4, "nounset")]


def test_nounset_with_a_default_dispatches() -> None:
    r = run(NOUNSET_LAUNCHER.replace("${SCENARIO_SUBDIR}", "${SCENARIO_SUBDIR:-}"), record_reads=True)
    assert targets(r) == ["benchmarks/b.sh"] and reads(r) == []


def test_nounset_with_the_variable_set_dispatches_and_keeps_its_presence() -> None:
    r = run(NOUNSET_LAUNCHER, {"SCENARIO_SUBDIR": ""})
    assert targets(r) == ["benchmarks/b.sh"]
    assert "SCENARIO_SUBDIR" in r.presence
    assert presence_key({"SCENARIO_SUBDIR": ()}, r.presence) != presence_key({}, r.presence)


@pytest.mark.parametrize("on,off", [("set -u", "set +u"), ("set -eu", "set +eu"), ("set -o nounset", "set +o nounset"),
                                    ("set -euxo pipefail", "set +o nounset"), ("set -e -o nounset", "set +u")])
def test_forms_of_set_u_and_turning_it_off(on: str, off: str) -> None:
    assert targets(run(f'{on}\nbash "benchmarks/b$X.sh"\n')) == []
    assert targets(run(f'{on}\n{off}\nbash "benchmarks/b$X.sh"\n')) == ["benchmarks/b.sh"]


def test_set_dash_dash_and_set_o_pipefail_do_not_turn_it_on() -> None:
    assert targets(run('set -o pipefail\nset -- -u\nbash "benchmarks/b$X.sh"\n')) == ["benchmarks/b.sh"]


def test_nounset_read_in_an_echo_exits() -> None:
    r = run('set -u\necho "model: $MODEL"\nbash benchmarks/b.sh\n', record_reads=True)
    assert targets(r) == [] and reads(r) == [("MODEL", 2, "nounset")]


def test_nounset_allows_empty_args_and_specials() -> None:
    r = run('set -u\necho "$@" "$*" $# "$?"\nbash benchmarks/b.sh\n', record_reads=True)
    assert targets(r) == ["benchmarks/b.sh"] and reads(r) == []


def test_nounset_in_a_command_substitution_ends_only_the_substitution() -> None:
    r = run('set -u\nY=$(echo "$X")\nbash benchmarks/b.sh\n')
    assert targets(r) == ["benchmarks/b.sh"]


def test_nounset_on_one_branch_only() -> None:
    src = 'if [[ "$M" == a ]]; then set -u; fi\nbash "benchmarks/b$X.sh"\n'
    assert targets(run(src, {"M": "a"})) == []
    assert targets(run(src, {"M": "b"})) == ["benchmarks/b.sh"]


def test_nounset_test_read_exits_as_bash_does() -> None:
    r = run('set -u\nif [[ -n "$OVERRIDE" ]]; then echo o; fi\nbash benchmarks/b.sh\n', record_reads=True)
    assert targets(r) == [] and reads(r) == [("OVERRIDE", 2, "nounset")]


def test_nounset_set_in_a_sourced_file_holds_after_it() -> None:
    r = run('source runners/common.sh\nbash "benchmarks/b$X.sh"\n', files={"runners/common.sh": "set -eu\n"})
    assert targets(r) == []


# ------------------------------------------------------------------ env checks
CHECKED = 'source benchmarks/lib.sh\ncheck_env_vars MODEL \\\n    TP CONC\nbash benchmarks/b.sh\n'


def test_env_check_with_all_set_dispatches() -> None:
    r = run(CHECKED, {"MODEL": "m", "TP": "8", "CONC": "4"}, files={"benchmarks/lib.sh": LIB},
            env_checks=CHECKS, record_reads=True)
    assert targets(r) == ["benchmarks/b.sh"] and reads(r) == []
    assert {"MODEL", "TP", "CONC"} <= r.presence


def test_env_check_with_one_missing_exits_with_a_check_read() -> None:
    r = run(CHECKED, {"MODEL": "m", "CONC": ""}, files={"benchmarks/lib.sh": LIB}, env_checks=CHECKS,
            record_reads=True)
    assert targets(r) == []
    assert reads(r) == [("TP", 2, "check"), ("CONC", 2, "check")]
    exit_at = r.paths[0].exit_at
    assert exit_at is not None and (exit_at.loc.line, exit_at.code) == (2, 1)
    assert {"TP", "CONC"} <= r.relevant


def test_env_check_counts_unknown_values_as_set() -> None:
    r = run(CHECKED, {"MODEL": "m", "TP": "8"}, env_checks=CHECKS, unknown_names=lambda n: n == "CONC")
    assert targets(r) == ["benchmarks/b.sh"]


# ------------------------------------------------------------- cache correctness
def test_relevant_names_separate_envs_that_set_the_read_variable() -> None:
    src = 'bash "benchmarks/b.sh" --model "$MODEL_PATH"\n'
    without = run(src, record_reads=True)
    assert reads(without) == [("MODEL_PATH", 1, "plain")] and "MODEL_PATH" in without.relevant
    given = run(src, {"MODEL_PATH": "/m"}, record_reads=True)
    assert reads(given) == [] and "MODEL_PATH" in given.presence
    # a cache keyed on relevant values and presence states tells the two envs apart
    assert presence_key({"MODEL_PATH": lit("/m")}, given.presence) != presence_key({}, given.presence)


# -------------------------------------------------------------------- hand-offs
def handed(src: str, env: dict[str, str]) -> Handed:
    r = run(src, env, handoffs=True)
    found = r.handed()
    assert len(found) == 1 and r.served() == [] and r.wrote() == []
    return found[0]


def test_handoffs_docker_e_list_in_lint_mode() -> None:
    h = handed("docker run --rm -e A -e B img bash benchmarks/b.sh\n", {"A": "1", "B": "2", "C": "3"})
    assert (h.boundary, h.inherit_all, h.inherited, h.complete) == ("docker", False, ("A", "B"), True)
    assert known(h.target) == "benchmarks/b.sh"


def test_handoffs_srun_export_all_and_a_name() -> None:
    h = handed("srun --export=ALL,X bash benchmarks/b.sh\n", {"X": "1", "Y": "2"})
    assert h.boundary == "srun --export" and h.inherit_all


def test_handoffs_srun_export_names_only() -> None:
    h = handed("srun --export=X bash benchmarks/b.sh\n", {"X": "1", "Y": "2"})
    assert h.boundary == "srun --export" and not h.inherit_all and h.inherited == ("X",)


def test_no_handoffs_without_the_option() -> None:
    assert run("docker run -e A img bash benchmarks/b.sh\n", {"A": "1"}).handed() == []


def test_read_is_an_event_of_its_path() -> None:
    r = run('if [[ "$M" == a ]]; then echo "$X"; fi\n', {"M": "a"}, record_reads=True)
    assert [e for p in r.paths for e in p.events if isinstance(e, Read)] == r.reads()


def test_reads_recorded_per_path_are_capped_and_linear() -> None:
    from bot.shell.evaluator.reads import MAX_READ_EVENTS
    src = "".join(f'X{i}="$V{i}"\n' for i in range(3000)) + "bash benchmarks/b.sh\n"
    r = run(src, record_reads=True)
    assert targets(r) == ["benchmarks/b.sh"] and r.budget_hits == ()
    assert len(r.reads()) == MAX_READ_EVENTS  # then the dispatch, still recorded
    assert any("not recorded" in n for n in r.notes) and "V2999" in r.relevant
