"""Which inputs a serve evaluation depends on (``Result.relevant``): the key under which
``Facts.evaluate`` lets another env reuse it. Each case checks the claim both ways: an env
that differs only outside ``relevant`` gives the same servers when evaluated afresh, and
one that differs inside it gives different ones."""

from __future__ import annotations

from bot.shell.evaluator.evaluate import Result
from bot.shell.ir.values import describe
from tests.shell.test_serving import run

# A TRT-LLM style script: the server reads a config file the script wrote from a heredoc.
TRT = """\
cat > /tmp/extra.yml <<EOF
speculative_config:
  decoding_type: MTP
  num_nextn_predict_layers: ${MTP_LAYERS}
max_batch_size: $CONC
EOF
if [ "$DP_ATTENTION" = "true" ]; then
  echo "enable_attention_dp: true" >> /tmp/extra.yml
fi
export NCCL_DEBUG=WARN
trtllm-serve "$MODEL" --tp_size "$TP" --extra_llm_api_options /tmp/extra.yml > "$RESULT_DIR/server.log" 2>&1 &
"""

BASE = {"MODEL": "m", "TP": "8", "CONC": "4", "MTP_LAYERS": "3", "DP_ATTENTION": "false",
        "RESULT_DIR": "/r", "RUNNER_NAME": "b200-cw_0", "HF_HUB_CACHE_MOUNT": "/mnt/a"}


def served(r: Result) -> list[tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]]:
    """What the servers are, by value: words, env, and the content of the files written before."""
    return [(tuple(describe(a) for a in s.argv), tuple((n, describe(v)) for n, v in s.env),
             tuple(describe(f.content) for f in s.files)) for s in r.served() if s.kind != "client"]


def test_a_heredoc_config_makes_what_it_reads_relevant_and_nothing_else() -> None:
    r = run(TRT, BASE)
    assert {"CONC", "MTP_LAYERS", "DP_ATTENTION", "MODEL", "TP"} <= r.relevant
    assert not {"RUNNER_NAME", "HF_HUB_CACHE_MOUNT"} & r.relevant
    # the claim holds: another runner's env gives the same server ...
    other = run(TRT, {**BASE, "RUNNER_NAME": "b200-nb_1", "HF_HUB_CACHE_MOUNT": "/mnt/b"})
    assert served(other) == served(r)
    # ... and a relevant input changes it
    for name, value in (("CONC", "64"), ("MTP_LAYERS", "1"), ("DP_ATTENTION", "true")):
        assert served(run(TRT, {**BASE, name: value})) != served(r), name


def test_appends_add_what_they_read() -> None:
    src = ('echo "a: 1" > cfg.yml\necho "b: $EXTRA" >> cfg.yml\necho "$UNUSED" > other.txt\n'
           'vllm serve m --config cfg.yml\n')
    r = run(src, {"EXTRA": "x", "UNUSED": "u"})
    assert "EXTRA" in r.relevant
    assert "UNUSED" not in r.relevant
    assert served(run(src, {"EXTRA": "x", "UNUSED": "v"}))[0][0] == served(r)[0][0]


def test_the_file_name_counts_when_it_is_made_of_an_input() -> None:
    src = 'cat > "/tmp/$NAME.yml" <<EOF\nk: $V\nEOF\nvllm serve m --config /tmp/cfg.yml\n'
    r = run(src, {"NAME": "cfg", "V": "1"})
    assert {"NAME", "V"} <= r.relevant


def test_a_file_the_server_does_not_name_adds_nothing() -> None:
    src = 'cat > notes.txt <<EOF\nrun on $RUNNER_NAME\nEOF\nvllm serve m --tp "$TP"\n'
    r = run(src, {"RUNNER_NAME": "x", "TP": "8"})
    assert "TP" in r.relevant and "RUNNER_NAME" not in r.relevant


def test_an_unknown_word_keeps_every_written_file_relevant() -> None:
    src = 'cat > a.yml <<EOF\nk: $V\nEOF\nvllm serve m --config "$(pick_config)"\n'
    r = run(src, {"V": "1"})
    assert "V" in r.relevant


def test_a_branch_that_chooses_what_is_written_is_relevant() -> None:
    src = ('if [ "$MODE" = big ]; then\n  echo "n: 8" > c.yml\nelse\n  echo "n: 1" > c.yml\nfi\n'
           'vllm serve m --config c.yml\n')
    r = run(src, {"MODE": "big"})
    assert "MODE" in r.relevant
    assert served(run(src, {"MODE": "small"})) != served(r)
