"""The partial evaluator on small scripts, through the real tree-sitter front-end."""

from __future__ import annotations

import pytest

from bot.shell.evaluator.evaluate import Evaluator, FileSystem, Options, Result
from bot.shell.front.parse import parse
from bot.shell.ir.nodes import Script
from bot.shell.ir.values import Unk, Val, describe, known, lit


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
        **opts: object) -> Result:
    fs = DictFS(files or {})
    ev = Evaluator(fs, Options(parse=parse, **opts))  # type: ignore[arg-type]
    return ev.run(parse("runners/launch_x.sh", src.encode()), {k: lit(v) for k, v in (env or {}).items()})


def targets(result: Result) -> list[str]:
    return sorted(describe(d.target) for d in result.dispatches())


SPEC = "SPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\n"


@pytest.mark.parametrize("spec,want", [("mtp", "b/k_int4_mi355x_mtp.sh"), ("none", "b/k_int4_mi355x.sh")])
def test_spec_suffix_command_substitution(spec: str, want: str) -> None:
    src = SPEC + 'bash b/${EXP_NAME%%_*}_${PRECISION}_mi355x${SPEC_SUFFIX}.sh\n'
    r = run(src, {"SPEC_DECODING": spec, "EXP_NAME": "k_1k1k", "PRECISION": "int4"})
    assert targets(r) == [want]
    assert {"SPEC_DECODING", "EXP_NAME", "PRECISION"} <= r.relevant


@pytest.mark.parametrize("expr,value", [
    ("${X%%_*}", "a"), ("${X%_*}", "a_b"), ("${X#*_}", "b_c"), ("${X##*_}", "c"), ("${X/_/-}", "a-b_c"),
    ("${X//_/-}", "a-b-c"), ("${X: -1}", "c"), ("${X:2:1}", "b"), ("${#X}", "5"), ("${UNSET:-d}", "d"),
    ("${X:+alt}", "alt"), ("${UNSET:+alt}", ""), ("${X^^}", "A_B_C"), ('"${X%%"_"*}"', "a"),
    ("${UNSET:-${X%%_*}}", "a"), ("$(dirname runners/x.sh)", "runners"), ("$(basename a/b.sh .sh)", "b"),
    ("$(echo -n hi)", "hi"), ("$(printf '%s_%s' a b)", "a_b"), ("$((2 + 3))", "5"),
])
def test_parameter_expansions(expr: str, value: str) -> None:
    r = run(f"bash {expr}.sh\n", {"X": "a_b_c"})
    assert targets(r) == [value + ".sh"]


@pytest.mark.parametrize("expr,model,value", [
    ("${M//\\//--}", "org/name/x", "org--name--x"),  # the cache folder of a model (InferenceX's own use)
    ('"${M//\\//_}"', "a/b", "a_b"),
    ("${M/\\//_}", "a/b/c", "a_b/c"),
    ("${M//a\\/b/c}", "xa/by", "xcy"),
    ("${M/#\\//_}", "/a/b", "_a/b"),
])
def test_an_escaped_slash_is_part_of_the_pattern(expr: str, model: str, value: str) -> None:
    assert targets(run(f"bash {expr}.sh\n", {"M": model})) == [value + ".sh"]


def test_a_function_bodys_redirection_applies_to_its_calls() -> None:
    """``f() { ...; } > log``: a call's output goes to the file, not to ``$(f)``."""
    assert targets(run('f() { echo hi; } > log\nX=$(f)\nbash "s${X}.sh"\n')) == ["s.sh"]
    assert targets(run('f() { echo hi; }\nX=$(f)\nbash "s${X}.sh"\n')) == ["shi.sh"]


def test_quotes_and_backquotes_in_a_default_inside_double_quotes() -> None:
    assert targets(run("bash \"${UNSET:-'a'}.sh\"\n")) == ["'a'.sh"]  # single quotes are characters there
    assert targets(run('bash "${UNSET:-`echo b`}.sh"\n')) == ["b.sh"]  # a command substitution, not text
    assert targets(run('bash "${UNSET:-x`echo b`y}.sh"\n')) == ["xby.sh"]


def test_unknowns_stay_unknown() -> None:
    r = run('JOB_ID=$(salloc --no-shell | grep -oP "\\d+")\nbash "b/${JOB_ID}.sh"\n')
    (d,) = r.dispatches()
    assert known(d.target) is None and isinstance(d.target[1], Unk)
    assert describe(d.target).startswith("b/<")


def test_if_elif_else_and_file_tests() -> None:
    src = """
BASE=b/x_${FRAMEWORK}
if [[ -f "$BASE.sh" ]]; then S="$BASE.sh"
elif [ -e b/fallback.sh ]; then S=b/fallback.sh
else S=b/none.sh; fi
bash "$S"
"""
    assert targets(run(src, {"FRAMEWORK": "vllm"}, {"b/x_vllm.sh": ""})) == ["b/x_vllm.sh"]
    assert targets(run(src, {"FRAMEWORK": "sglang"}, {"b/fallback.sh": ""})) == ["b/fallback.sh"]
    assert targets(run(src, {"FRAMEWORK": "sglang"}, {"b/other.sh": ""})) == ["b/none.sh"]
    # a folder the repo does not have (cloned at run time): the test cannot be answered
    assert targets(run(src, {"FRAMEWORK": "sglang"})) == ["b/fallback.sh", "b/none.sh", "b/x_sglang.sh"]


def test_cd_into_a_folder_made_at_run_time() -> None:
    src = 'git clone x srt\ncd srt\nif [[ ! -f recipes/a.yaml ]]; then exit 1; fi\nbash b.sh\n'
    r = run(src, files={"benchmarks/x.sh": ""})
    assert targets(r) == ["<cwd srt>/b.sh"]
    assert not all(p.exited for p in r.paths)


def test_unknown_condition_forks_and_exit_ends_a_path() -> None:
    src = 'if [ -z "$(squeue -h)" ]; then bash b/a.sh; else bash b/b.sh; fi\n[ -n "$JOB" ] || exit 1\nbash b/c.sh\n'
    r = run(src)
    assert targets(r) == ["b/a.sh", "b/b.sh"]
    assert all(p.exited for p in r.paths)  # JOB is unset: every path exits before b/c.sh


def test_case_functions_and_source() -> None:
    lib = 'script_path() { echo "b/${1}_${PRECISION}${2}.sh"; }\nSPEC_SUFFIX=_mtp\n'
    src = """source "$(dirname "$0")/lib.sh"
case "$FRAMEWORK" in
  sglang) bash "$(script_path "${EXP_NAME%%_*}" "$SPEC_SUFFIX")" ;;
  vllm|atom) bash "$(script_path "${EXP_NAME%%_*}" "")" ;;
  *) echo "unsupported"; exit 1 ;;
esac
"""
    files = {"runners/lib.sh": lib}
    env = {"EXP_NAME": "dsr1_1k1k", "PRECISION": "fp8"}
    assert targets(run(src, {**env, "FRAMEWORK": "sglang"}, files)) == ["b/dsr1_fp8_mtp.sh"]
    assert targets(run(src, {**env, "FRAMEWORK": "atom"}, files)) == ["b/dsr1_fp8.sh"]
    r = run(src, {**env, "FRAMEWORK": "trt"}, files)
    assert targets(r) == [] and all(p.exited for p in r.paths)
    assert [describe(s.target) for s in r.sourced()] == ["runners/lib.sh"]


@pytest.mark.parametrize("line,via", [
    ("bash b/x.sh", "bash"),
    ("exec bash b/x.sh", "exec bash"),
    ("JOB=$(bash b/x.sh)", "subst"),
    ('srun --jobid=1 --container-image=$IMG --export=ALL bash b/x.sh', "srun"),
    ('docker run --rm -e TP --entrypoint=/bin/bash "$IMAGE" b/x.sh', "docker"),
    ('srun --jobid=1 bash -c "cd /workspace && bash b/x.sh"', "bash -c"),
    ("timeout 600 bash -x b/x.sh", "timeout"),
    ("./b/x.sh arg", "direct"),
    ('bash "/workspace/b/x.sh"', "bash"),
    ('bash "$GITHUB_WORKSPACE/b/x.sh"', "bash"),
])
def test_dispatch_sinks(line: str, via: str) -> None:
    r = run(line + "\n", {"IMAGE": "img:1", "GITHUB_WORKSPACE": "/github/workspace"})
    (d,) = r.dispatches()
    assert known(d.target) == "b/x.sh"
    assert d.via == via
    assert d.loc.line == 1


def test_dispatch_records_the_line_that_built_the_path() -> None:
    src = 'B="b/x_${FRAMEWORK}"\nS="${B}.sh"\necho hi\nbash "$S"\n'
    (d,) = run(src, {"FRAMEWORK": "vllm"}).dispatches()
    assert (d.loc.line, d.built_at.line) == (4, 2)
    assert ("FRAMEWORK", "vllm") in d.var_parts


def test_partially_quoted_word_and_multiline_continuation() -> None:
    src = 'srun \\\n  --x=1 \\\n  bash benchmarks/${S}"${EXP_NAME%%_*}_x".sh\n'
    (d,) = run(src, {"S": "fixed_seq_len/", "EXP_NAME": "m_1k1k"}).dispatches()
    assert known(d.target) == "benchmarks/fixed_seq_len/m_x.sh" and d.loc.line == 3


def test_bound_is_reported_not_hung() -> None:
    body = "\n".join(f'if [ -n "$(probe {i})" ]; then A{i}=1; else A{i}=2; fi' for i in range(12))
    uses = "probe" + "".join(f' "$A{i}"' for i in range(12))  # (what nothing reads is sliced away)
    r = run(body + "\n" + uses + "\nbash b/x.sh\n", max_paths=8)
    assert r.bound_hit
    assert targets(r) == ["b/x.sh"]


def test_loops_are_bounded_and_joined() -> None:
    src = 'for f in a b c d e f g h; do [[ -e "$f" ]] && ARGS+=" $f"; done\nbash "b/${MODE}.sh"\n'
    r = run(src, {"MODE": "m"})
    assert not r.bound_hit and targets(r) == ["b/m.sh"]


def test_relevant_env_excludes_sizing_vars() -> None:
    src = SPEC + 'export GPU_COUNT="${TP:?TP must be set}"\nsalloc --gres=gpu:$GPU_COUNT\nbash "b/m${SPEC_SUFFIX}.sh"\n'
    r = run(src, {"SPEC_DECODING": "mtp", "TP": "8"})
    assert "SPEC_DECODING" in r.relevant
    assert "GPU_COUNT" not in r.relevant


def test_unset_var_with_colon_question_exits() -> None:
    r = run('X="${TP:?TP must be set}"\nbash b/x.sh\n')
    assert targets(r) == [] and all(p.exited for p in r.paths)


def test_values_helpers() -> None:
    from bot.shell.ir.values import match, pat_from_val, remove

    partial: Val = ("kimik2.5_", Unk("agentic run name"))
    assert remove(partial, (("_*", True),), "%%") == ("kimik2.5",)
    assert match(("mtp",), pat_from_val(("m*",), True)) is True
    assert match((Unk("x"),), pat_from_val(("mtp",), False)) is None
    assert match(("none", Unk("x")), pat_from_val(("mtp",), False)) is False


@pytest.mark.parametrize("subject,pattern,want", [
    ("a b", "*[[:space:]]*", True), ("ab", "*[[:space:]]*", False), ("x", "[!a-c]", True), ("b", "[!a-c]", False),
    ("]", "[]a]", True), ("v0.5.14", "v0.5.*", True), ("file.sh", "*.s?", True), ("a[b", "a[b", True),
])
def test_glob_patterns(subject: str, pattern: str, want: bool) -> None:
    from bot.shell.ir.values import match

    assert match((subject,), ((pattern, True),)) is want


def test_a_blank_before_an_expansion_in_quotes_is_kept() -> None:
    """``A+=" $F"``: tree-sitter puts the blank into the ``$`` token; it was lost, so
    ``build_replay_cmd``-style strings ran flags together (``...artifacts--public-dataset``)."""
    src = 'A="x"\nA+=" --o $D/z"\nA+=" $F"\nA+="  ${F}"\nbash "b/$A.sh"\n'
    assert targets(run(src, {"F": "--p y", "D": "r"})) == ["b/x --o r/z --p y  --p y.sh"]
