"""detect(): every launch form, behind wrappers, and what is not a launch."""

from __future__ import annotations

import pytest

from bot.serve import detect
from bot.serve.model import MARK


@pytest.mark.parametrize(("line", "expected"), [
    ("vllm serve M -tp 8", ("vllm", 2)),
    ("/opt/venv/bin/vllm serve M", ("vllm", 2)),
    ("python3 -m vllm.entrypoints.openai.api_server --model M", ("vllm", 3)),
    ("/usr/bin/python3 -u -m vllm.entrypoints.openai.api_server --model M", ("vllm", 4)),
    ("python3.12 -X dev -m vllm.entrypoints.openai.api_server", ("vllm", 5)),
    ("python -mvllm.entrypoints.openai.api_server --model M", ("vllm", 2)),
    ("python3 -m sglang.launch_server --model-path M", ("sglang", 3)),
    ("sglang serve --model-path M", ("sglang", 2)),
    ("trtllm-serve M --tp_size 8", ("trtllm", 1)),
    ("trtllm-serve serve M", ("trtllm", 2)),
    ("python3 -m tensorrt_llm.commands.serve M", ("trtllm", 3)),
    ("python3 -m tensorrt_llm.commands.serve serve M", ("trtllm", 4)),
    ("python3 -m atom.entrypoints.openai_server --model M", ("atom", 3)),
    ("python3 -m dynamo.sglang --model-path M", ("sglang", 3)),
    ("python3 -m dynamo.vllm --model M", ("vllm", 3)),
    ("python3 -m dynamo.trtllm --model-path M", ("trtllm", 3)),
    ("python3 /w/utils/bench_serving/benchmark_serving.py --model M", ("client", 2)),
    ("python3 -m sglang.bench_serving --backend sglang", ("client", 3)),
    ("vllm bench serve --model M", ("client", 3)),
    ("run_benchmark_serving --model M", ("client", 1)),
])
def test_launch_forms(line: str, expected: tuple[str, int]) -> None:
    assert detect(line.split()) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("env A=1 B=2 vllm serve M", ("vllm", 5)),
    ("nohup vllm serve M", ("vllm", 3)),
    ("timeout 600 python3 -m sglang.launch_server --model-path M", ("sglang", 5)),
    ("numactl --interleave=all vllm serve M", ("vllm", 4)),
    ("mpirun -n 1 --oversubscribe --allow-run-as-root -x FOO trtllm-serve M --port=8888", ("trtllm", 8)),
    ("srun --ntasks=1 python3 -m dynamo.sglang --x", ("sglang", 5)),
    ("exec vllm serve M", ("vllm", 3)),
    ("command vllm serve M", ("vllm", 3)),
    (f"{MARK} vllm serve M", ("vllm", 3)),
])
def test_wrappers(line: str, expected: tuple[str, int]) -> None:
    assert detect(line.split()) == expected


@pytest.mark.parametrize("line", [
    "which vllm", "command -v vllm", "type trtllm-serve", "grep vllm serve x.sh", "pip install vllm",
    "vllm --version", "vllm", "python3 -m pip install sglang", "python3 setup.py", "python3 -c import",
    "sglang", "python3 -m", "", f"{MARK} serve M", "docker run vllm/vllm-openai:v0.11 --model M",
])
def test_not_launches(line: str) -> None:
    assert detect(line.split()) is None
