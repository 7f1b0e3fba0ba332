"""The serve sinks of the evaluator (``bot.shell.evaluator.serving``), on small scripts through the real
tree-sitter front-end and the real ``bot.serve`` sink test."""

from __future__ import annotations

from bot.launches.gather import sinks
from bot.shell.evaluator.evaluate import Evaluator, Handed, Options, Result, Served
from bot.shell.front.parse import parse
from bot.shell.ir.values import Unk, describe, known, lit
from tests.shell.test_evaluate import DictFS


def run(src: str, env: dict[str, str] | None = None, files: dict[str, str] | None = None,
        path: str = "benchmarks/x.sh", **opts: object) -> Result:
    ev = Evaluator(DictFS(files or {}), Options(parse=parse, sinks=sinks(), **opts))  # type: ignore[arg-type]
    return ev.run(parse(path, src.encode()), {k: lit(v) for k, v in (env or {}).items()})


def server(r: Result) -> Served:
    found = [s for s in r.served() if s.kind != "client"]
    assert len(found) == 1, [describe(a) for s in found for a in s.argv]
    return found[0]


def words(s: Served) -> list[str]:
    return [describe(a) for a in s.argv[s.start:]]


def test_arrays_expand_to_one_word_per_element_with_their_lines() -> None:
    r = run('EP=(--enable-expert-parallel)\n'
            'ARGS=(-tp "$TP" --max-model-len "8192 tokens")\n'
            'ARGS+=(--max-num-seqs "$CONC")\n'
            'if [ "$EP_SIZE" -gt 1 ]; then ARGS+=("${EP[@]}"); fi\n'
            'vllm serve "$MODEL" "${ARGS[@]}" &\n', {"TP": "8", "CONC": "4", "EP_SIZE": "8", "MODEL": "m"})
    s = server(r)
    assert s.kind == "vllm"
    assert words(s) == ["m", "-tp", "8", "--max-model-len", "8192 tokens", "--max-num-seqs", "4",
                        "--enable-expert-parallel"]
    assert [loc.line for loc in s.lines[s.start:]] == [5, 2, 2, 2, 2, 3, 3, 1]


def test_a_whole_command_array_is_a_server() -> None:
    r = run('CMD=(python3 -m sglang.launch_server --model-path "$MODEL" --tp 8)\n"${CMD[@]}" > log 2>&1 &\n',
            {"MODEL": "m"})
    s = server(r)
    assert (s.kind, words(s)) == ("sglang", ["--model-path", "m", "--tp", "8"])


def test_flags_in_a_variable_keep_the_line_of_their_piece() -> None:
    r = run('P=""\nif [ "$EP" -gt 1 ]; then\n  P="--ep-size $EP"\nfi\nP="$P --enable-dp-attention"\n'
            'python3 -m sglang.launch_server --model-path m $P\n', {"EP": "8"})
    s = server(r)
    assert words(s) == ["--model-path", "m", "--ep-size", "8", "--enable-dp-attention"]
    assert [loc.line for loc in s.lines[s.start:]] == [6, 6, 3, 3, 5]


def test_env_prefix_export_and_plain_assignment() -> None:
    r = run("export VLLM_A=1\nSGLANG_ENABLE_SPEC_V2=1\nVLLM_B=2 vllm serve m\n")
    s = server(r)
    env = dict(s.env)
    assert known(env["VLLM_A"]) == "1" and known(env["VLLM_B"]) == "2"
    assert "SGLANG_ENABLE_SPEC_V2" not in env
    assert [(name, known(value), loc.line) for name, value, loc in s.plain] == [("SGLANG_ENABLE_SPEC_V2", "1", 2)]


def test_heredoc_files_are_kept_as_content() -> None:
    r = run('cat > cfg.yml <<EOF\nspeculative_config:\n  num_nextn_predict_layers: $MTP\nEOF\n'
            "cat <<'EOF' >> cfg.yml\nliteral: $NOT_EXPANDED\nEOF\n"
            'echo "backend: pytorch" >> cfg.yml\n'
            "mpirun -n 1 --allow-run-as-root trtllm-serve m --extra_llm_api_options cfg.yml &\n", {"MTP": "3"})
    s = server(r)
    assert s.kind == "trtllm"
    files = {known(f.target): known(f.content) for f in s.files}
    assert files["cfg.yml"] == ("speculative_config:\n  num_nextn_predict_layers: 3\n"
                                "literal: $NOT_EXPANDED\nbackend: pytorch\n")


def test_a_heredoc_that_never_ends_is_content_not_a_hang() -> None:
    r = run("cat > cfg.yml <<EOF\nkey: 1\nvllm serve m --config cfg.yml\n")
    assert r.stopped is None
    assert [s.kind for s in r.served()] == []  # the server line is part of the here-document


def test_arithmetic_with_variables_and_c_style_loops() -> None:
    r = run('N=$(( CONC * 10 ))\n(( TP > 4 )) && BIG=yes\nS=""\nfor ((i = 0; i < TP; i++)); do S+="$i,"; done\n'
            'vllm serve m --num "$N" --big "$BIG" --s "$S"\n', {"CONC": "4", "TP": "8"})
    w = words(server(r))
    assert w[:5] == ["m", "--num", "40", "--big", "yes"]
    assert w[5] == "--s" and "set in a loop" in w[6]  # a value built by a loop is unknown, never its first round


def test_a_function_that_prints_a_command_is_not_a_server() -> None:
    r = run('write_command() { printf "%q " "${@:2}" > "$1"; }\nCMD=(vllm serve m)\n'
            'write_command out.txt "${CMD[@]}"\n"${CMD[@]}" &\n')
    assert [s.loc.line for s in r.served()] == [4]


def test_the_client_ends_the_path_and_its_body_is_not_a_second_client() -> None:
    lib = "run_benchmark_serving() { python3 benchmark_serving.py \"$@\"; }\n"
    r = run('source benchmarks/lib.sh\nvllm serve m &\nrun_benchmark_serving --model m --use-chat-template\n'
            'vllm serve other\n', files={"benchmarks/lib.sh": lib}, stop_after=frozenset({"client"}))
    kinds = [(s.kind, s.loc.line) for s in r.served()]
    assert kinds == [("vllm", 2), ("client", 3)]
    client = r.served()[1]
    assert [describe(a) for a in client.argv[client.start:]] == ["--model", "m", "--use-chat-template"]


def test_the_evaluation_ends_some_steps_after_the_server() -> None:
    r = run("vllm serve m &\nwhile true; do sleep 1; done\nf() { f; f; }\nf\n", after_sink_steps=300)
    assert r.stopped is None and "stopped after the server command" in r.notes
    assert [s.kind for s in r.served()] == ["vllm"]


def test_an_unknown_interpreter_with_a_server_module_counts() -> None:
    r = run('PY="$(command -v python3)"\n"$PY" -m sglang.launch_server --model-path m\n')
    assert server(r).kind == "sglang"


def handed(src: str, env: dict[str, str]) -> Handed:
    r = run(src, env, files={"benchmarks/b.sh": "true\n"}, path="runners/launch_x.sh")
    found = r.handed()
    assert len(found) == 1
    return found[0]


def test_docker_passes_only_its_e_flags() -> None:
    h = handed('PORT=8888\nexport LOCAL=1\ndocker run --rm -e MODEL -e PORT="$PORT" -e FIXED=x img '
               'bash benchmarks/b.sh\n', {"MODEL": "m", "TP": "8"})
    assert (h.boundary, h.inherit_all, h.inherited) == ("docker", False, ("MODEL",))
    assert {n: known(v) for n, v in h.env} == {"PORT": "8888", "FIXED": "x"}


def test_docker_env_file_makes_the_env_incomplete() -> None:
    h = handed("docker run --env-file vars.env img bash benchmarks/b.sh\n", {})
    assert not h.complete


def test_srun_export_all_passes_everything_exported_and_the_listed() -> None:
    h = handed('export A=1\nB=2\nunset TP\nsrun --jobid="$JOB" --export=ALL,PORT=8888 bash benchmarks/b.sh\n',
               {"MODEL": "m", "TP": "8"})
    assert h.inherit_all and h.dropped == ("TP",) and h.complete
    assert {n: known(v) for n, v in h.env} == {"A": "1", "PORT": "8888"}


def test_srun_export_none_passes_only_the_listed() -> None:
    h = handed("srun --export=NONE,X=1,MODEL bash benchmarks/b.sh\n", {"MODEL": "m", "TP": "8"})
    assert not h.inherit_all and h.inherited == ("MODEL",)
    assert {n: known(v) for n, v in h.env} == {"X": "1"}


def test_lint_mode_records_none_of_it() -> None:
    ev = Evaluator(DictFS({}), Options(parse=parse))
    r = ev.run(parse("benchmarks/x.sh", b"A=(1 2)\ncat > f <<EOF\nx\nEOF\nvllm serve m\n"), {})
    assert r.served() == [] and r.wrote() == [] and r.handed() == []


def test_a_value_from_the_runner_stays_unknown() -> None:
    r = run("vllm serve m --tensor-parallel-size $(nproc)\n")
    assert isinstance(server(r).argv[-1][0], Unk)
