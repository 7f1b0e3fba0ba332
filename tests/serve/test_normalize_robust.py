"""Bad input never raises: random junk through every engine and through detect()."""

from __future__ import annotations

import random

import pytest

from bot.serve import detect, normalize
from bot.serve.model import MARK, SPEC_KEYS, File, Tok

_PIECES = ["-", "--", "---", "-tp", "--tp", "=", "==", "--x=", "--=1", "-O", "-O=", "-Ox", "{", "[", "{\"a\":",
           "[1,", "]", "}", ".", "--a.b", "--a..b", "--a.b+", "-cc.", "--speculative-config.", "--no-", "--no-x",
           MARK, f"--{MARK}", f"{MARK}=1", f"--tp={MARK}", "-1", "-1.5", "1e5", "nan", "true", "FALSE", "\x00",
           "\n", " ", "é", "--config", "--extra_llm_api_options", "--model", "--model-path", "x.yml", "c.yaml",
           "--speculative-algorithm", "--speculative-config", "-sc", "{\"method\": 1}", "[{}]", "null", "0x10",
           "--cuda-graph-bs", "--disable-cuda-graph", "--kv_cache_free_gpu_memory_fraction", "--spec-tokens",
           "--method", "serve", "vllm", "python3", "-m", "trtllm-serve", "sglang.launch_server", "--p"]
_FILES = {
    "x.yml": File("x.yml", "speculative_config: [1, 2]\nkv_cache_config: 3\n: :\n", "s.sh:1"),
    "c.yaml": File("c.yaml", f"- a\n- {MARK}\n", "s.sh:2"),
}


def _junk(rng: random.Random) -> list[Tok]:
    out = []
    for i in range(rng.randint(0, 14)):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 3)))
        out.append(Tok(text, f"j.sh:{i}"))
    return out


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "atom", "client"])
def test_junk_never_raises(engine: str) -> None:
    rng = random.Random(engine)
    for _ in range(400):
        words = _junk(rng)
        c = normalize(engine, words, files=_FILES, env={"A": "1"})
        assert c.engine == engine and c.env == {"A": "1"}
        assert c.argv == tuple(t.text for t in words)
        assert all(isinstance(u, str) for u in c.unknown)
        assert not any("internal error" in u for u in c.unknown), (words, c.unknown)
        assert c.spec is None or set(c.spec) == set(SPEC_KEYS)
        detect([t.text for t in words])  # must not raise either


def test_yaml_that_is_not_a_mapping() -> None:
    files = {"c.yaml": File("c.yaml", "- a\n- b\n", "s.sh:2")}
    c = normalize("vllm", [Tok("M", "s.sh:5"), Tok("--config", "s.sh:5"), Tok("c.yaml", "s.sh:5")], files=files)
    assert c.model == "M" and any("not a YAML mapping" in u for u in c.unknown)


def test_json_too_deep_is_a_reason() -> None:
    deep = "[" * 5000 + "]" * 5000
    c = normalize("vllm", [Tok("M", "a:1"), Tok("-sc", "a:1"), Tok(deep, "a:1")])
    assert any(u.startswith("speculative_config: not JSON") for u in c.unknown)
