"""Property: no shell text, well-formed or not, makes a front-end or the evaluator raise.

Scripts are drawn from a small bash grammar (the constructs launchers use, and the hostile ones:
self-recursion, eval, source loops, big arithmetic, regexes, globs), then broken at random.
Each is parsed by both front-ends and evaluated twice: as a launcher under an entry's
environment, and in the linear scan mode used for scripts no entry reaches."""

from __future__ import annotations

import time

from hypothesis import example, given
from hypothesis import strategies as st

from bot.launches.gather import _command, sinks
from bot.serve.model import Command
from bot.shell.evaluator.budget import Limits
from bot.shell.evaluator.evaluate import Evaluator, Options
from bot.shell.front import bashlex_front
from bot.shell.front.parse import parse
from bot.shell.ir.nodes import Script
from bot.shell.ir.values import lit
from tests.shell.test_evaluate import DictFS

NAMES = st.sampled_from(["X", "FRAMEWORK", "SPEC_DECODING", "PRECISION", "A", "f", "LIB", "1", "@"])
LITS = st.sampled_from(["a", "mtp", "_mtp", "vllm", "fp8", "benchmarks/single_node/x.sh", "*.sh", "9", "-1",
                        "%2000000000s", "%c", "^(a+)+$", "*a*a*a*a*b", "lib.sh", "", " ", "\\", "'", '"'])


def _word() -> st.SearchStrategy[str]:
    simple = st.one_of(
        LITS.map(lambda s: s if s.isalnum() or not s else "'" + s.replace("'", "") + "'"),
        NAMES.map(lambda n: f'"${n}"'),
        st.tuples(NAMES, st.sampled_from([":-", "%%", "#", "/", ":+", "^^", ",,", "%", "##"]), LITS).map(
            lambda t: '"${' + t[0] + t[1] + t[2].replace("}", "").replace('"', "") + '}"'),
        st.sampled_from(["$((9**9**9))", "$((1<<62))", "$((X+1))", "$((X/0))", "$RANDOM", "~", "$#", "$?"]),
    )
    return st.recursive(simple, lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map("".join),
        inner.map(lambda w: f'"$(echo {w})"'),
        inner.map(lambda w: f"`printf %s {w}`"),
    ), max_leaves=6)


WORD = _word()


def _simple() -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(NAMES, WORD).map(lambda t: f"{t[0] if t[0].isalpha() else 'X'}={t[1]}"),
        st.tuples(NAMES, WORD).map(lambda t: f"X=$X$X; export {t[0] if t[0].isalpha() else 'Y'}={t[1]}"),
        WORD.map(lambda w: f"echo {w}"),
        st.tuples(LITS, WORD).map(lambda t: f"printf '{t[0].replace(chr(39), '')}' {t[1]}"),
        WORD.map(lambda w: f"bash benchmarks/single_node/{w}.sh"),
        WORD.map(lambda w: f"source {w}"),
        WORD.map(lambda w: f"eval {w}"),
        WORD.map(lambda w: f'bash -c "{w}"'),
        st.tuples(WORD, LITS).map(lambda t: f"[[ {t[0]} =~ {t[1].replace(' ', '') or 'a'} ]]"),
        WORD.map(lambda w: f"[ -f {w} ]"),
        WORD.map(lambda w: f"docker run --rm img bash {w}"),
        st.sampled_from(["f", "f; f", "shift", "set -euo pipefail", "exit 0", "return 1", "break", ": ok",
                         "declare -a A=(a b c)", 'for i in "${A[@]}"; do :; done', "local X=1", "cd /tmp",
                         "wait", "true", "false", "unset X", "read -r X", "exec bash lib.sh"]),
    )


def _script() -> st.SearchStrategy[str]:
    def compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        block = st.lists(inner, min_size=1, max_size=3).map("; ".join)
        return st.one_of(
            st.tuples(block, block, block).map(lambda t: f"if {t[0]}; then {t[1]}; else {t[2]}; fi"),
            st.tuples(WORD, LITS, block, block).map(
                lambda t: f"case {t[0]} in {t[1].replace(')', '') or 'a'}) {t[2]};; *) {t[3]};; esac"),
            st.tuples(WORD, block).map(lambda t: f"for x in {t[0]} a b c; do {t[1]}; done"),
            st.tuples(block, block).map(lambda t: f"while {t[0]}; do {t[1]}; break; done"),
            block.map(lambda b: f"f() {{ {b}; }}"),
            block.map(lambda b: f"( {b} )"),
            block.map(lambda b: f"{{ {b}; }}"),
            st.tuples(inner, st.sampled_from([" && ", " || ", " | "]), inner).map("".join),
            inner.map(lambda s: f"! {s}"),
        )
    return st.recursive(_simple(), compound, max_leaves=12)


SCRIPT = st.lists(_script(), min_size=1, max_size=8).map("\n".join)
BROKEN = st.tuples(SCRIPT, st.integers(0, 400), st.sampled_from(["", "(", ")", "{", "}", '"', "'", "`", "$(",
                                                                  "fi", "done", ";;", "\x00", "\r", "<<EOF\n"]))


STEPS = 20_000  # small, so that the budget itself is exercised
ENV = {"FRAMEWORK": "vllm", "SPEC_DECODING": "mtp", "PRECISION": "fp8", "X": "a", "LIB": "lib.sh",
       "EXP_NAME": "kimik2.5_1k1k", "RUNNER_NAME": "mi325x-amds_0"}


def _check(text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    for front in (parse, bashlex_front.parse):
        script = front("runners/launch_x.sh", data)
        assert isinstance(script, Script)
    fs = DictFS({"runners/launch_x.sh": text, "lib.sh": text, "benchmarks/single_node/x.sh": "echo hi\n"})
    launcher = parse("runners/launch_x.sh", data)
    limits = Limits(max_steps=STEPS, max_seconds=2.0)
    entry = Options(parse=parse, limits=limits)
    scan = Options(parse=parse, linear=True, descend_source=False, unset_is_unknown=True, limits=limits)
    serving = Options(parse=parse, limits=limits, sinks=sinks(), stop_after=frozenset({"client"}),
                      after_sink_steps=5000)
    entry_env = {k: lit(v) for k, v in ENV.items()}
    for opts, script, env in ((entry, launcher, entry_env),
                              (scan, parse("benchmarks/single_node/y.sh", data), {}),
                              (serving, parse("benchmarks/single_node/y.sh", data), entry_env)):
        ev = Evaluator(fs, opts)
        t0 = time.monotonic()
        result = ev.run(script, env)
        # within its budget: the steps it counted, and (a hang guard, far above the 2 s deadline) time
        assert ev.budget.steps <= STEPS + 1 or result.stopped is not None
        assert time.monotonic() - t0 < 10
        for served in result.served():  # and what a server sink recorded normalizes without raising
            assert isinstance(_command(served, env, {}, {}), Command)


@given(SCRIPT)
@example("f() { f; f; f; f; f; f; }; f")
@example("X=a; " + "X=$X$X; " * 32 + "echo $X")
@example("printf '%2000000000s' x; printf '%c' 9999999")
@example("[[ $X =~ ^(a+)+$ ]] && bash benchmarks/single_node/x.sh")
@example("case aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac in *a*a*a*a*a*a*a*b) echo;; esac")
@example("echo $((9**9**9))")
@example("source lib.sh; source lib.sh; source lib.sh")
@example('eval "$0"; bash -c "$(cat $0)"')
@example('A=(-tp "$X"); A+=("${A[@]}"); cat > c.yml <<EOF\nk: $X\nEOF\nvllm serve m "${A[@]}" --config c.yml &')
@example("cat > c.yml <<EOF\nspeculative_config: {decoding_type: MTP\nmpirun trtllm-serve m --config c.yml")
@example("""S='{"method": "mtp", "num_speculative_tokens": '$X; python3 -m sglang.launch_server --tp $S""")
@example("for ((i = 0; i < 99999999; i++)); do X+=$i; done; vllm serve $X")
def test_grammar(text: str) -> None:
    _check(text)


@given(BROKEN)
def test_broken(case: tuple[str, int, str]) -> None:
    text, at, junk = case
    at = min(at, len(text))
    _check(text[:at] + junk + text[at:])


@given(st.text(alphabet=st.sampled_from(list("$(){}[];&|<>'\"`\\ \n\tifthenfidoneca=!#*?-_0a")), max_size=300))
def test_noise(text: str) -> None:
    _check(text)
