"""Stand-ins for ``benchbot trace``: every command that would reach a cluster, a container, a
GPU, an engine or the network, as one program.

A wrapper per name in ``NAMES`` runs ``python3 -I standin.py NAME ARG...``. Each call appends
one JSON line to ``$BENCHBOT_TRACE_LOG`` (tool, argv, cwd, env, role, pid, ppid, detail) and
then behaves as scripted: a launcher (docker, srun, salloc, enroot start, mpirun, numactl)
runs its inner command with the env and cwd the real one would give it; an engine server
stays up for ``$BENCHBOT_TRACE_SERVER_SECONDS``; a benchmark client writes an empty result;
any other python is refused. Nothing here touches the network. See README.md.

Importing this module has no side effects (``bot.trace`` reads ``NAMES``, a literal tuple).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import Any

NAMES = (
    "bash", "srun", "salloc", "sbatch", "sbcast", "scancel", "squeue", "sinfo", "scontrol",
    "docker", "podman", "nerdctl", "enroot", "nvidia-smi", "rocm-smi", "amd-smi", "rocminfo",
    "hf", "huggingface-cli", "pip", "pip3", "uv", "uvx", "curl", "wget", "mpirun", "mpiexec",
    "numactl", "trtllm-llmapi-launch", "vllm", "sglang", "trtllm-serve", "trtllm-bench",
    "python", "python3", "aiperf", "genai-perf", "lm_eval", "lm-eval",
)

REFUSED = 126
Opts = list[tuple[str, str | None]]

# --- record ------------------------------------------------------------------------------


def record(name: str, args: Sequence[str], role: str, detail: Mapping[str, Any] | None = None) -> None:
    """Append one JSON line to $BENCHBOT_TRACE_LOG, in one write (concurrent callers never interleave)."""
    path = os.environ.get("BENCHBOT_TRACE_LOG")
    if not path:
        return
    rec = {"tool": name, "argv": [name, *args], "cwd": _cwd(), "env": dict(os.environ), "role": role,
           "pid": os.getpid(), "ppid": os.getppid(), "detail": dict(detail or {})}
    data = (json.dumps(rec, ensure_ascii=True) + "\n").encode("ascii")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD", "")


def say(text: str, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")
    stream.flush()


def refuse(name: str, args: Sequence[str], reason: str, detail: Mapping[str, Any] | None = None) -> int:
    record(name, args, "refused", {**(detail or {}), "reason": reason})
    say(f"trace: refused to run {name} {' '.join(args)} (only engine and client entry points are stood in)", err=True)
    return REFUSED


def reset_signals() -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec: what
    this process becomes gets the defaults back (``yes | head`` must end quietly)."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)


def _number(var: str, default: float) -> float:
    try:
        return float(os.environ.get(var, ""))
    except ValueError:
        return default


# --- option parsing ----------------------------------------------------------------------


def parse(args: Sequence[str], valued: frozenset[str], whole: frozenset[str] = frozenset(),
          stop: bool = True) -> tuple[Opts, list[str]]:
    """Options up to the first positional (``stop``) or all of them, and the positionals.

    ``--x=v``, ``--x v`` (x in ``valued``), ``-xv``, ``-x v``, clusters ``-abc``; a token in
    ``whole`` or ``valued`` is one option even with one dash (``-np``). ``--`` ends options.
    """
    opts: Opts = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            rest.extend(args[i:])
            break
        if a.startswith("--") or a in whole or a in valued:
            key, eq, val = a.partition("=")
            if eq and key.startswith("--"):
                opts.append((key, val))
            elif a in valued:
                opts.append((a, args[i] if i < len(args) else None))
                i += 1
            else:
                opts.append((a, None))
        elif a.startswith("-") and len(a) > 1:
            for j in range(1, len(a)):
                flag = "-" + a[j]
                if flag in valued:
                    if j + 1 < len(a):
                        opts.append((flag, a[j + 1:]))
                    else:
                        opts.append((flag, args[i] if i < len(args) else None))
                        i += 1
                    break
                opts.append((flag, None))
        else:
            rest.append(a)
            if stop:
                rest.extend(args[i:])
                break
    return opts, rest


def opt(opts: Opts, *names: str) -> str | None:
    """The last value given to any of ``names``."""
    found = None
    for key, val in opts:
        if key in names:
            found = val if val is not None else found
    return found


def value(args: Sequence[str], *names: str) -> str | None:
    """The last value of ``--name V`` or ``--name=V`` in ``args`` whose other options are unknown."""
    found = None
    for i, a in enumerate(args):
        key, eq, val = a.partition("=")
        if eq and key in names:
            found = val
        elif a in names and i + 1 < len(args):
            found = args[i + 1]
    return found


def has(opts: Opts, *names: str) -> bool:
    return any(key in names for key, _ in opts)


def longs(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- bash ----------------------------------------------------------------------------------


def do_bash(name: str, args: list[str]) -> int:
    command = stdin = False
    positional: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("--", "-"):
            stdin |= a == "-"
            positional = args[i:]
            break
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 1
        elif a.startswith("--"):
            continue
        elif a[:1] in "-+" and len(a) > 1:
            command |= a[0] == "-" and "c" in a[1:]
            stdin |= a[0] == "-" and "s" in a[1:]
        else:
            positional = args[i - 1:]
            break
    detail: dict[str, Any] = {}
    role = "other"
    if command:
        detail["command"] = positional[0] if positional else None
    elif positional and not stdin:
        detail = {"script": positional[0], "script_args": positional[1:], "path": os.path.abspath(positional[0])}
        role = "script" if os.path.isfile(positional[0]) else "other"
    record(name, args, role, detail)
    real = os.environ.get("BENCHBOT_TRACE_BASH") or "/bin/bash"
    sys.stdout.flush()
    reset_signals()
    try:
        os.execv(real, ["bash", *args])
    except OSError as exc:
        say(f"trace: cannot run {real}: {exc.strerror}", err=True)
    return 127


# --- GPUs --------------------------------------------------------------------------------------


def _gpus() -> int:
    return max(0, int(_number("BENCHBOT_TRACE_GPUS", 8)))


def _uuid(i: int) -> str:
    return f"GPU-{i:08x}-7ace-4b1d-9e00-{i:012x}"


def _bus(i: int) -> str:
    return f"00000000:{(0x18 + 0x10 * i) & 0xFF:02X}:00.0"


def gpu_field(field: str, i: int, name: str) -> tuple[str, str]:
    """(value, unit) of one ``--query-gpu`` field for GPU ``i``."""
    table: dict[str, tuple[str, str]] = {
        "index": (str(i), ""), "name": (name, ""), "gpu_name": (name, ""), "uuid": (_uuid(i), ""),
        "gpu_uuid": (_uuid(i), ""), "pci.bus_id": (_bus(i), ""), "gpu_bus_id": (_bus(i), ""),
        "memory.total": ("183359", "MiB"), "memory.used": ("0", "MiB"), "memory.free": ("183359", "MiB"),
        "utilization.gpu": ("0", "%"), "utilization.memory": ("0", "%"), "temperature.gpu": ("30", ""),
        "power.draw": ("140.00", "W"), "power.limit": ("1000.00", "W"), "clocks.current.sm": ("1965", "MHz"),
        "clocks.sm": ("1965", "MHz"), "clocks.current.memory": ("3996", "MHz"), "clocks.mem": ("3996", "MHz"),
        "clocks.max.sm": ("1965", "MHz"), "driver_version": ("570.124.06", ""), "count": (str(_gpus()), ""),
        "compute_cap": ("10.0", ""), "pstate": ("P0", ""), "persistence_mode": ("Enabled", ""),
        "timestamp": (time.strftime("%Y/%m/%d %H:%M:%S.000"), ""),
    }
    return table.get(field, ("[N/A]", ""))


def do_nvidia_smi(name: str, args: list[str]) -> int:
    opts, rest = parse(args, longs("-i --id -f --filename -l --loop -lms --loop-ms -d --display --query-gpu --format "
                                   "--query-compute-apps"), stop=False)
    record(name, args, "gpu", {"subcommand": rest[0] if rest else None})
    gname = os.environ.get("BENCHBOT_TRACE_GPU_NAME", "NVIDIA B200")
    ids = opt(opts, "-i", "--id")
    gpus = [int(x) for x in ids.split(",") if x.isdigit()] if ids else list(range(_gpus()))
    fmt = (opt(opts, "--format") or "").split(",")
    if rest:  # topo, nvlink, mig, ...: nothing useful to say
        return 0
    if has(opts, "-L", "--list-gpus"):
        say("\n".join(f"GPU {i}: {gname} (UUID: {_uuid(i)})" for i in gpus))
        return 0
    query = opt(opts, "--query-gpu")
    apps = opt(opts, "--query-compute-apps")
    if query or apps:
        fields = [f.strip() for f in (query or apps or "").split(",") if f.strip()]
        lines = []
        rows = [[gpu_field(f, i, gname) for f in fields] for i in gpus] if query else []
        if "noheader" not in fmt:
            units = rows[0] if rows else [("", "")] * len(fields)
            lines.append(", ".join(f + (f" [{u}]" if u and "nounits" not in fmt else "") for f, (_, u) in
                                   zip(fields, units)))
        for row in rows:
            lines.append(", ".join(v + (f" {u}" if u and "nounits" not in fmt else "") for v, u in row))
        say("\n".join(lines))
        return 0
    out = ["+" + "-" * 77 + "+", "| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8"
           + " " * 5 + "|", "+" + "-" * 77 + "+"]
    out += [f"| {i:3d}  {gname:<24} {_bus(i):<18} 0MiB / 183359MiB   0% |" for i in gpus]
    out += ["+" + "-" * 77 + "+", "| Processes: none" + " " * 61 + "|", "+" + "-" * 77 + "+"]
    say("\n".join(out))
    return 0


def do_amd(name: str, args: list[str]) -> int:
    record(name, args, "gpu", {"subcommand": next((a for a in args if not a.startswith("-")), None)})
    gname = os.environ.get("BENCHBOT_TRACE_GPU_NAME", "AMD Instinct MI300X")
    n = _gpus()
    if name == "rocminfo":
        agents = ["Agent 1", "  Name:                    trace-cpu", "  Device Type:             CPU"]
        for i in range(n):
            agents += [f"Agent {i + 2}", "  Name:                    gfx942",
                       f"  Marketing Name:          {gname}", "  Device Type:             GPU"]
        say("\n".join(agents))
    elif name == "rocm-smi":
        lines = ["=" * 24 + " ROCm System Management Interface " + "=" * 24]
        if "--showmemuse" in args:
            lines += [f"GPU[{i}]\t\t: GPU Memory Allocated (VRAM%): 0" for i in range(n)]
        elif "--showfw" in args:  # scripts read the MEC firmware version (RCCL workarounds)
            lines += [f"GPU[{i}]\t\t: {fw} firmware version: \t{ver}" for i in range(n)
                      for fw, ver in (("MEC", 177), ("MEC2", 177), ("RLC", 78), ("SDMA", 23))]
        else:
            lines += [f"GPU[{i}]\t\t: Card Series: {gname}" for i in range(n)]
        say("\n".join(lines + ["=" * 30 + " End of ROCm SMI Log " + "=" * 30]))
    elif "--json" in args:
        say("[]")
    elif "--csv" in args:
        say("gpu\n" + "\n".join(str(i) for i in range(n)))
    elif args[:1] == ["list"]:
        say("\n".join(f"GPU: {i}\n    BDF: {_bus(i)[4:]}\n    UUID: {_uuid(i)}" for i in range(n)))
    return 0


# --- downloads and installers ------------------------------------------------------------------

HF_VALUED = longs("""
--local-dir --revision --repo-type --include --exclude --token --cache-dir --max-workers
--local-dir-use-symlinks --etag-timeout
""")


def do_hf(name: str, args: list[str]) -> int:
    if args[:1] != ["download"]:
        record(name, args, "other", {"subcommand": args[0] if args else None})
        return 0
    opts, rest = parse(args[1:], HF_VALUED, stop=False)
    repo = rest[0] if rest else ""
    local = opt(opts, "--local-dir")
    if local:
        target = local
    else:
        base = (opt(opts, "--cache-dir") or os.environ.get("HF_HUB_CACHE")
                or (os.environ["HF_HOME"] + "/hub" if os.environ.get("HF_HOME") else None)
                or os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub"))
        kind = {"dataset": "datasets", "space": "spaces"}.get(opt(opts, "--repo-type") or "", "models")
        target = os.path.join(base, f"{kind}--{repo.replace('/', '--')}", "snapshots", "0")
    detail: dict[str, Any] = {"repo": repo, "files": rest[1:], "path": target}
    try:
        os.makedirs(target, exist_ok=True)
        detail["created"] = True
    except OSError as exc:
        detail.update(created=False, error=exc.strerror)
    record(name, args, "other", detail)
    say(target)
    return 0


VENV_TOOLS = ("python", "python3", "pip", "pip3", "aiperf", "hf", "huggingface-cli", "lm_eval", "lm-eval", "uv")


def make_venv(folder: str) -> bool:
    """``python -m venv DIR`` / ``uv venv DIR``: DIR/bin holds the stand-ins' wrappers for what a
    benchmark runs from a venv (its python, pip, aiperf, hf), so ``$VENV/bin/aiperf`` is stood in
    too. False when DIR cannot be written (outside the sandbox's writable places)."""
    wrappers = os.environ.get("BENCHBOT_TRACE_DIR", "")
    try:
        os.makedirs(os.path.join(folder, "bin"), exist_ok=True)
        for tool in VENV_TOOLS:
            src = os.path.join(wrappers, tool)
            if os.path.isfile(src):
                dst = os.path.join(folder, "bin", tool)
                with open(src, "rb") as fh, open(dst, "wb") as out:
                    out.write(fh.read())
                os.chmod(dst, 0o755)
        with open(os.path.join(folder, "pyvenv.cfg"), "w", encoding="utf-8") as fh:
            fh.write("home = /usr/bin\nversion = 3.11.7\n")
    except OSError:
        return False
    return True


def do_pip(name: str, args: list[str]) -> int:
    if name == "uvx" or args[:1] == ["run"] or args[:2] == ["tool", "run"]:
        return refuse(name, args, "uv runs arbitrary code")
    detail: dict[str, Any] = {"subcommand": args[0] if args else None}
    if name == "uv" and args[:1] == ["venv"]:
        folders = [a for a in args[1:] if not a.startswith("-")]
        # ``uv venv --python 3.11 DIR``: the folder is the last operand
        detail["venv"] = folders[-1] if folders else ".venv"
        detail["made"] = make_venv(detail["venv"])
    record(name, args, "other", detail)
    return 0


CURL_VALUED = longs("""
-o --output -w --write-out -H --header -d --data --data-binary --data-raw --data-urlencode --data-ascii --json
-X --request -m --max-time --connect-timeout --retry --retry-delay --retry-max-time -u --user -A --user-agent
-e --referer -b --cookie -c --cookie-jar -F --form -T --upload-file --cacert --cert --key -K --config -x --proxy
--resolve --unix-socket -r --range -z --time-cond -C --continue-at -E -Y --speed-limit -y --speed-time --url
--output-dir --max-filesize --interface --limit-rate
""")


def server_up(wait: float) -> bool:
    """Whether a server stand-in has recorded itself and still runs, waiting up to ``wait`` s: a
    script that polls right after starting one must not see it before its signal handlers are set."""
    path = os.environ.get("BENCHBOT_TRACE_LOG")
    deadline = time.monotonic() + wait
    while path:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                pids = [int(m.group(1)) for m in re.finditer(r'"role": "server", "pid": (\d+)', fh.read())]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                return True
            except PermissionError:
                return True
            except OSError:
                pass
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return False


def do_curl(name: str, args: list[str]) -> int:
    opts, urls = parse(args, CURL_VALUED, stop=False)
    urls += [v for k, v in opts if k == "--url" and v]
    url = urls[0] if urls else ""
    path = re.sub(r"^[a-z]+://[^/]*", "", url)
    api = "/v1/" in path or path.endswith("/v1") or "/health" in path
    body = '{"object":"list","status":"ok","data":[{"id":"model","object":"model"}]}' if api else ""
    out = opt(opts, "-o", "--output")
    files = [out] if out else []
    if has(opts, "-O", "--remote-name") and path.rstrip("/"):
        files.append(path.rstrip("/").rsplit("/", 1)[-1].split("?")[0])
    detail: dict[str, Any] = {"url": url, "method": opt(opts, "-X", "--request"), "files": files}
    if api:
        detail["server_up"] = server_up(_number("BENCHBOT_TRACE_SERVER_WAIT", 2.0))
    record(name, args, "other", detail)
    for f in files:
        if f != "-":
            try:
                open(f, "w").close()
            except OSError:
                pass
    if has(opts, "-I", "--head"):
        say("HTTP/1.1 200 OK\r")
    elif not files or out == "-":
        if body:
            say(body)
    wout = opt(opts, "-w", "--write-out")
    if wout:
        text = re.sub(r"%\{(http_code|response_code)\}", "200", wout)
        text = re.sub(r"%\{[^}]*\}", "0", text).replace("\\n", "\n").replace("\\t", "\t")
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def do_wget(name: str, args: list[str]) -> int:
    opts, urls = parse(args, longs("-O --output-document -o --output-file -a -P --directory-prefix -t --tries "
                                   "-T --timeout --header -e -U --user-agent --post-data"), stop=False)
    out = opt(opts, "-O", "--output-document")
    record(name, args, "other", {"url": urls[0] if urls else "", "files": [out] if out else []})
    if out and out != "-":
        try:
            open(out, "w").close()
        except OSError:
            pass
    return 0


# --- engines and clients -----------------------------------------------------------------------

SERVER_MODULES = ("sglang.launch_server", "sglang_router.launch_router", "sglang_router.launch_server",
                  "vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server",
                  "atom.entrypoints.openai_server")
SERVER_PREFIXES = ("dynamo.", "tensorrt_llm.")
CLIENT_MODULES = ("sglang.bench_serving", "sglang.bench_one_batch_server", "sglang.bench_one_batch",
                  "sglang.bench_offline_throughput", "lm_eval", "aiperf", "genai_perf")
# a repo's own client scripts: benchmark_serving.py and its copies, and trace replayers
# (utils/replay.py, replay_agentic_trace.py) that agentic benchmarks drive
CLIENT_SCRIPT = re.compile(r"(bench(mark)?_serving[^/]*|[^/]*replay[^/]*)\.py$")


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def serve(name: str, args: list[str], detail: dict[str, Any], model_at: int | None = None) -> int:
    """An engine server: up for $BENCHBOT_TRACE_SERVER_SECONDS, down at once on SIGTERM/SIGINT.
    ``model_at``: where the model is a positional argument (``vllm serve MODEL``)."""
    model = value(args, "--model-path", "--model", "--model_path")
    if model is None and model_at is not None and model_at < len(args) and not args[model_at].startswith("-"):
        model = args[model_at]
    detail = {**detail, "model": model, "port": value(args, "--port")}
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    record(name, args, "server", detail)
    say("stand-in server ready", err=True)
    time.sleep(max(0.0, _number("BENCHBOT_TRACE_SERVER_SECONDS", 3.0)))
    return 0


def client(name: str, args: list[str], detail: dict[str, Any]) -> int:
    """A benchmark client: writes ``{}`` where it would write its result, exits 0."""
    made: list[str] = []
    rf, rd = value(args, "--result-filename"), value(args, "--result-dir")
    files = [os.path.join(rd, rf) if rd and not os.path.isabs(rf) else rf] if rf else []
    files += [f for f in (value(args, "--output-file"),) if f]
    dirs = [d for d in (value(args, "--output_path", "--output-path", "--artifact-dir", "--output-artifact-dir"),) if d]
    for d in dirs:
        if d.endswith(".json"):
            files.append(d)
        else:
            try:
                os.makedirs(d, exist_ok=True)
                made.append(d)
            except OSError:
                pass
    for f in files:
        try:
            os.makedirs(os.path.dirname(f) or ".", exist_ok=True)
            with open(f, "w", encoding="utf-8") as fh:
                fh.write("{}\n")
            made.append(f)
        except OSError:
            pass
    record(name, args, "client", {**detail, "results": files, "written": made})
    return 0


def do_vllm(name: str, args: list[str]) -> int:
    if args[:1] == ["serve"]:
        return serve(name, args, {"engine": "vllm", "entry": "vllm serve"}, 1)
    if args[:1] == ["bench"]:
        return client(name, args, {"entry": "vllm bench " + (args[1] if len(args) > 1 else "")})
    record(name, args, "other", {"subcommand": args[0] if args else None})
    if args[:1] in (["--version"], ["-v"]):
        say("0.0.0+trace")
    return 0


def do_sglang(name: str, args: list[str]) -> int:
    if args[:1] == ["serve"]:
        return serve(name, args, {"engine": "sglang", "entry": "sglang serve"}, 1)
    record(name, args, "other", {"subcommand": args[0] if args else None})
    return 0


def do_trtllm(name: str, args: list[str]) -> int:
    if args[:1] in (["--help"], ["-h"], ["--version"]):
        record(name, args, "other", {})
        return 0
    if name == "trtllm-bench":
        return client(name, args, {"entry": name})
    return serve(name, args, {"engine": "trtllm", "entry": name}, 1 if args[:1] == ["serve"] else 0)


def do_client(name: str, args: list[str]) -> int:
    return client(name, args, {"entry": name})


def do_python(name: str, args: list[str]) -> int:
    i = 0
    module = code = script = None
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        a = args[i]
        i += 1
        if a in ("-V", "-VV", "--version"):
            record(name, args, "other", {"version": True})
            say("Python 3.11.7")
            return 0
        if a.startswith("--"):
            continue
        for j in range(1, len(a)):
            if a[j] in "mcXW":
                val = a[j + 1:] or (args[i] if i < len(args) else "")
                i += 0 if a[j + 1:] else 1
                module = val if a[j] == "m" else module
                code = val if a[j] == "c" else code
                break
        if module is not None or code is not None:
            break
    if module is None and code is None and i < len(args):
        script = args[i]
        i += 1
    rest = list(args[i:])
    if code is not None:
        return refuse(name, args, "inline python (-c)", {"code": code})
    if module is not None:
        detail: dict[str, Any] = {"module": module}
        if module in ("pip", "pip3"):
            record(name, args, "other", detail)
            return 0
        if module in ("venv", "virtualenv"):
            folders = [a for a in rest if not a.startswith("-")]
            detail["venv"] = folders[-1] if folders else None
            detail["made"] = bool(folders) and make_venv(folders[-1])
            record(name, args, "other", detail)
            return 0
        if module == "vllm.entrypoints.cli.main" and rest[:1] == ["serve"]:
            return serve(name, args, {**detail, "engine": "vllm"}, i + 1)
        if module == "vllm.entrypoints.cli.main" and rest[:1] == ["bench"]:
            return client(name, args, detail)
        if module in SERVER_MODULES or module.startswith(SERVER_PREFIXES):
            engine = module.split(".")[0].replace("tensorrt_llm", "trtllm").replace("sglang_router", "sglang")
            return serve(name, args, {**detail, "engine": engine})
        if (module in CLIENT_MODULES or module.startswith(("aiperf.", "lm_eval."))
                or module.rsplit(".", 1)[-1] in ("bench_serving", "benchmark_serving")):
            return client(name, args, detail)
        return refuse(name, args, f"python module {module}", detail)
    if script is None or script == "-":
        return refuse(name, args, "python from stdin" if script == "-" else "interactive python")
    if CLIENT_SCRIPT.search(script):
        return client(name, args, {"script": script})
    return refuse(name, args, f"python script {script}", {"script": script})


# --- dispatch ----------------------------------------------------------------------------------

# in containers.py, loaded on use
LAUNCHERS = {
    "docker": "do_docker", "podman": "do_docker", "nerdctl": "do_docker", "enroot": "do_enroot",
    "srun": "do_srun", "salloc": "do_salloc", "sbatch": "do_sbatch", "sbcast": "do_slurm_query",
    "scancel": "do_slurm_query", "squeue": "do_slurm_query", "sinfo": "do_slurm_query",
    "scontrol": "do_slurm_query", "mpirun": "do_mpirun", "mpiexec": "do_mpirun", "numactl": "do_numactl",
    "trtllm-llmapi-launch": "do_passthrough",
}
HANDLERS: dict[str, Callable[[str, list[str]], int]] = {
    "bash": do_bash, "nvidia-smi": do_nvidia_smi, "rocm-smi": do_amd, "amd-smi": do_amd, "rocminfo": do_amd,
    "hf": do_hf, "huggingface-cli": do_hf, "pip": do_pip, "pip3": do_pip, "uv": do_pip, "uvx": do_pip,
    "curl": do_curl, "wget": do_wget, "vllm": do_vllm, "sglang": do_sglang, "trtllm-serve": do_trtllm,
    "trtllm-bench": do_trtllm, "python": do_python, "python3": do_python, "aiperf": do_client,
    "genai-perf": do_client, "lm_eval": do_client, "lm-eval": do_client,
}


def restore_environ() -> None:
    """The env this process was started with. Python itself may add ``LC_CTYPE`` (PEP 538 locale
    coercion, which ``-I`` cannot turn off); /proc/self/environ still holds what exec passed."""
    try:
        with open("/proc/self/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return
    start: dict[str, str] = {}
    for item in raw.split(b"\0"):
        k, eq, v = item.partition(b"=")
        if eq and k:
            start[os.fsdecode(k)] = os.fsdecode(v)
    for key in [k for k in os.environ if k not in start]:
        del os.environ[key]
    os.environ.update({k: v for k, v in start.items() if os.environ.get(k) != v})


def main(argv: list[str]) -> int:
    restore_environ()
    if not argv:
        say("usage: standin.py NAME [ARG...]", err=True)
        return 2
    name, args = argv[0], argv[1:]
    handler = HANDLERS.get(name)
    if name in LAUNCHERS:
        sys.modules.setdefault("standin", sys.modules[__name__])  # containers.py imports this module
        sys.dont_write_bytecode = True  # no __pycache__ next to the stand-ins (read-only in the sandbox)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import containers

        handler = getattr(containers, LAUNCHERS[name])
    if handler is None:
        record(name, args, "other", {"unknown": True})
        return 0
    return handler(name, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
