"""Which engine a command line starts: ``detect(words) -> (engine, first argument index)``.

``words`` is a whole command line as the shell runs it (inline ``X=1`` assignments already
removed by the caller; unknown words contain MARK), possibly behind wrappers (``env``,
``nohup``, ``timeout 600``, ``numactl ...``, ``mpirun -n 1 -x FOO``, ``srun ...``, ``exec``).
Wrappers have options whose values cannot be known, so the launch pattern is searched
anywhere in the words and **the first match wins**:

- ``vllm serve`` -> vllm; ``vllm bench serve`` -> client;
- ``sglang serve`` -> sglang;
- ``trtllm-serve [serve]`` -> trtllm;
- ``run_benchmark_serving`` (the InferenceX helper) -> client;
- any python (``python``, ``python3``, ``python3.12``, ``/usr/bin/python3``; options such
  as ``-u``, ``-X dev`` before ``-m``) running one of ``MODULES`` -> its engine, or a script
  named ``benchmark_serving.py`` or a trace replayer (``*replay*.py``) -> client.

Not launches: a command whose first word only looks a program up or prints or searches
(``which vllm``, ``command -v vllm``, ``type``, ``grep vllm``, ``echo``, ``pip install``...).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from bot.serve.model import MARK

MODULES = {
    "vllm.entrypoints.openai.api_server": "vllm",
    "sglang.launch_server": "sglang",
    "tensorrt_llm.commands.serve": "trtllm",
    "atom.entrypoints.openai_server": "atom",
    "dynamo.sglang": "sglang",  # dynamo workers take the engine's flags
    "dynamo.vllm": "vllm",
    "dynamo.trtllm": "trtllm",
    "sglang.bench_serving": "client",
}
CLIENT_SCRIPTS = frozenset({"benchmark_serving.py"})
# a repo's agentic trace replayers (``python3 utils/trace_replay.py ...``): clients too (the
# trace oracle found one the model missed; runners/stand-ins/standin.py says the same)
CLIENT_SCRIPT_RE = re.compile(r"[^/]*replay[^/]*\.py")
NOT_LAUNCHERS = frozenset({
    "which", "type", "whereis", "hash", "grep", "egrep", "fgrep", "rg", "echo", "printf", "cat", "ls",
    "pip", "pip3", "uv", "apt-get", "apt", "conda", "test", "[", "[[", "pgrep", "pkill", "kill", "ps",
    "sed", "awk", "head", "tail", "wc", "find", "stat", "readlink", "realpath", "declare", "local",
})
_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?$")
_PY_VALUE_OPTS = frozenset({"-X", "-W", "-Q"})


def _base(word: str) -> str:
    return posixpath.basename(word)


def _python(words: Sequence[str], i: int) -> tuple[str, int] | None:
    """``python [opts] -m MODULE`` / ``python [opts] SCRIPT`` at ``words[i]``."""
    j, n = i + 1, len(words)
    while j < n:
        w = words[j]
        if w == "-m":
            if j + 1 >= n:
                return None
            return _module(words, words[j + 1], j + 2)
        if w.startswith("-m") and len(w) > 2:
            return _module(words, w[2:], j + 1)
        if w in ("-c", "-"):
            return None
        if w in _PY_VALUE_OPTS:
            j += 2
            continue
        if w.startswith("-"):
            j += 1
            continue
        client = _base(w) in CLIENT_SCRIPTS or CLIENT_SCRIPT_RE.fullmatch(_base(w)) is not None
        return ("client", j + 1) if client else None
    return None


def _module(words: Sequence[str], module: str, k: int) -> tuple[str, int] | None:
    engine = MODULES.get(module)
    if engine is None:
        return None
    if engine == "trtllm" and module == "tensorrt_llm.commands.serve" and k < len(words) and words[k] == "serve":
        k += 1
    return engine, k


def detect(words: Sequence[str]) -> tuple[str, int] | None:
    if not words:
        return None
    first = _base(words[0])
    if first in NOT_LAUNCHERS:
        return None
    if first == "command" and len(words) > 1 and words[1].startswith("-"):
        return None  # command -v / -V: a look-up
    n = len(words)
    for i, w in enumerate(words):
        base = _base(w)
        nxt = words[i + 1] if i + 1 < n else None
        if base == "vllm":
            if nxt == "serve":
                return "vllm", i + 2
            if nxt == "bench" and i + 2 < n and words[i + 2] == "serve":
                return "client", i + 3
        elif base == "sglang" and nxt == "serve":
            return "sglang", i + 2
        elif base == "trtllm-serve":
            return "trtllm", i + 2 if nxt == "serve" else i + 1
        elif base == "run_benchmark_serving":
            return "client", i + 1
        elif _PYTHON.match(base) or (w == MARK and nxt == "-m"):
            # an interpreter we cannot name (``"$(command -v python3)" -m sglang.launch_server``)
            # counts only with ``-m`` and a server module after it
            hit = _python(words, i)
            if hit is not None:
                return hit
    return None
