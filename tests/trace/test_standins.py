"""runners/stand-ins/standin.py, run as the sandbox runs it: a wrapper per name, first on PATH,
``exec python -I standin.py NAME "$@"``, a temp folder as cwd and a temp JSON-lines log."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT

STANDINS = ROOT / "runners" / "stand-ins"
STANDIN = STANDINS / "standin.py"
KEYS = {"tool", "argv", "cwd", "env", "role", "pid", "ppid", "detail"}
BASH = shutil.which("bash") or "/bin/bash"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    cached, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ among the stand-ins
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = cached
    return module


class Trace:
    """Wrappers for every stand-in, a work folder, a log, and a way to run a command among them."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.work = root / "work"
        self.home = root / "home"
        self.log = root / "log.jsonl"
        for d in (self.bin, self.work, self.home):
            d.mkdir()
        names = _load("standin_names", STANDIN).NAMES
        for name in names:
            wrapper = self.bin / name
            wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I {shlex.quote(str(STANDIN))} "
                               f'{name} "$@"\n')
            wrapper.chmod(0o755)
        self.env = {"PATH": f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(self.home),
                    "BENCHBOT_TRACE_LOG": str(self.log), "BENCHBOT_TRACE_DIR": str(self.bin),
                    "BENCHBOT_TRACE_BASH": BASH}

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return {**self.env, **(extra or {})}

    def run(self, *argv: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """``argv[0]`` through its wrapper (or as a plain command when it has none)."""
        first = self.bin / argv[0]
        cmd = [str(first) if first.exists() else argv[0], *argv[1:]]
        return subprocess.run(cmd, cwd=cwd or self.work, env=self.environ(env), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def sh(self, script: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """A shell command line run by the real bash, stand-ins first on PATH."""
        return subprocess.run([BASH, "-c", script], cwd=self.work, env=self.environ(env), capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def only(self, tool: str) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["tool"] == tool]


@pytest.fixture
def tr(tmp_path: Path) -> Trace:
    return Trace(tmp_path)


# --- module and record ------------------------------------------------------------------------


def test_names_are_a_literal_tuple_and_import_has_no_side_effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    monkeypatch.setenv("BENCHBOT_TRACE_LOG", str(tmp_path / "log"))
    module = _load("standin_import", STANDIN)
    assert not (tmp_path / "log").exists()
    tree = ast.parse(STANDIN.read_text())
    literal = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "NAMES" for t in n.targets))
    assert literal == module.NAMES and isinstance(module.NAMES, tuple)
    required = {"bash", "srun", "salloc", "sbatch", "sbcast", "scancel", "squeue", "sinfo", "scontrol", "docker",
                "podman", "nerdctl", "enroot", "nvidia-smi", "rocm-smi", "amd-smi", "rocminfo", "hf",
                "huggingface-cli", "pip", "pip3", "uv", "curl", "wget", "mpirun", "vllm", "sglang", "trtllm-serve",
                "python", "python3", "numactl", "aiperf", "lm_eval"}
    assert required <= set(module.NAMES)
    assert not {"sh", "timeout", "nproc"} & set(module.NAMES)
    assert set(module.NAMES) == set(module.HANDLERS) | set(module.LAUNCHERS)


def test_record_has_exactly_the_contract_keys(tr: Trace) -> None:
    proc = tr.run("squeue", "-h", env={"SOME_VAR": "x"})
    assert proc.returncode == 0 and proc.stdout == ""
    (rec,) = tr.records()
    assert set(rec) == KEYS
    assert rec["tool"] == "squeue" and rec["argv"] == ["squeue", "-h"] and rec["role"] == "scheduler"
    assert rec["cwd"] == str(tr.work) and rec["env"]["SOME_VAR"] == "x"
    assert isinstance(rec["pid"], int) and isinstance(rec["ppid"], int) and isinstance(rec["detail"], dict)


def test_without_a_log_nothing_is_written_and_it_still_behaves(tr: Trace) -> None:
    env = tr.environ()
    del env["BENCHBOT_TRACE_LOG"]
    proc = subprocess.run([str(tr.bin / "sbatch"), "job.sh"], cwd=tr.work, env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0 and proc.stdout == "Submitted batch job 4242\n"
    assert not tr.log.exists() and list(tr.work.iterdir()) == []


def test_unknown_name_is_recorded_as_other(tr: Trace) -> None:
    proc = subprocess.run([sys.executable, "-I", str(STANDIN), "frobnicate", "--x"], cwd=tr.work,
                          env=tr.environ(), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    (rec,) = tr.records()
    assert rec["tool"] == "frobnicate" and rec["role"] == "other" and rec["argv"] == ["frobnicate", "--x"]


def test_concurrent_writers_never_interleave(tr: Trace) -> None:
    big = "y" * 100_000  # one line well over PIPE_BUF
    procs = [subprocess.Popen([str(tr.bin / "scancel"), str(i)], cwd=tr.work, env=tr.environ({"BIG": big}),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(20)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    lines = tr.log.read_text().splitlines()
    assert len(lines) == 20
    recs = [json.loads(line) for line in lines]
    assert sorted(r["argv"][1] for r in recs) == sorted(str(i) for i in range(20))
    assert all(r["env"]["BIG"] == big for r in recs) and len({r["pid"] for r in recs}) == 20


# --- bash ---------------------------------------------------------------------------------------


def test_bash_running_a_file_is_a_script_and_runs_for_real(tr: Trace) -> None:
    (tr.work / "bench.sh").write_text('echo "ran $1 $FOO"\n')
    proc = tr.run("bash", "-e", "bench.sh", "arg1", env={"FOO": "bar"})
    assert proc.returncode == 0 and proc.stdout == "ran arg1 bar\n"
    (rec,) = tr.records()
    assert rec["role"] == "script" and rec["argv"] == ["bash", "-e", "bench.sh", "arg1"]
    assert rec["detail"]["script"] == "bench.sh" and rec["detail"]["script_args"] == ["arg1"]
    assert rec["detail"]["path"] == str(tr.work / "bench.sh")


def test_bash_dash_c_and_missing_files_are_other(tr: Trace) -> None:
    proc = tr.run("bash", "-o", "pipefail", "-c", "echo $0-ok; exit 3")
    assert proc.returncode == 3 and proc.stdout == "bash-ok\n"
    proc = tr.run("bash", "missing.sh")
    assert proc.returncode == 127
    first, second = tr.records()
    assert first["role"] == "other" and first["detail"] == {"command": "echo $0-ok; exit 3"}
    assert second["role"] == "other" and second["detail"]["script"] == "missing.sh"


def test_what_a_stand_in_execs_gets_default_signals(tr: Trace) -> None:
    """Python ignores SIGPIPE; bash (and what srun runs) must not inherit that."""
    for argv in (["bash", "-c", "yes | head -n1"], ["srun", "bash", "-c", "yes | head -n1"]):
        proc = tr.run(*argv)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "y\n", ""), argv


def test_env_bash_shebang_scripts_come_through_the_bash_stand_in(tr: Trace) -> None:
    script = tr.work / "launch.sh"
    script.write_text("#!/usr/bin/env bash\necho launched\n")
    script.chmod(0o755)
    proc = tr.sh("./launch.sh")
    assert proc.returncode == 0 and proc.stdout == "launched\n"
    (rec,) = tr.records()
    assert rec["tool"] == "bash" and rec["role"] == "script" and rec["detail"]["script"] == "./launch.sh"


# --- docker ---------------------------------------------------------------------------------------


def test_docker_run_passes_only_dash_e_and_maps_the_workdir(tr: Trace, tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    proc = tr.run("docker", "run", "--rm", "-e", "A", "-e", "B=2", "-v", f"{host}:/workspace/", "-w", "/workspace/",
                  "img", "bash", "-c", "echo $A $B $C; pwd", env={"A": "a-val", "C": "c-val"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["a-val 2", os.path.realpath(host)]
    docker, bash = tr.records()
    assert docker["role"] == "container" and bash["tool"] == "bash" and bash["role"] == "other"
    d = docker["detail"]
    assert d["image"] == "img" and d["inner"] == ["bash", "-c", "echo $A $B $C; pwd"]
    assert d["env_passed"] == {"A": "a-val", "B": "2"} and d["workdir"] == "/workspace/"
    assert d["mounts"] == [[str(host), "/workspace/"]] and d["entered"] is True
    assert os.path.realpath(bash["cwd"]) == os.path.realpath(host)
    assert "C" not in bash["env"] and bash["env"]["A"] == "a-val"
    assert set(bash["env"]) <= {"A", "B", "PATH", "HOME", "TERM", "PWD", "SHLVL", "_", "OLDPWD"} | {
        k for k in bash["env"] if k.startswith("BENCHBOT_TRACE_")}
    assert bash["env"]["PATH"].split(":")[0] == str(tr.bin)


def test_docker_entrypoint_bin_bash_reaches_the_bash_stand_in_and_paths_are_mapped(tr: Trace, tmp_path: Path
                                                                                   ) -> None:
    host = tmp_path / "ws"
    (host / "benchmarks").mkdir(parents=True)
    (host / "benchmarks" / "x.sh").write_text("echo in-x $(pwd)\n")
    proc = tr.run("docker", "run", "--rm", "--network=host", "--gpus", "all", "--ipc=host", "--shm-size", "16g",
                  "--ulimit", "memlock=-1", "--mount", f"type=bind,source={host},target=/ws", "--workdir=/ws",
                  "--entrypoint=/bin/bash", "img", "/ws/benchmarks/x.sh")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"in-x {os.path.realpath(host)}\n"
    docker, bash = tr.records()
    assert docker["detail"]["entrypoint"] == "/bin/bash"
    assert bash["role"] == "script" and bash["argv"] == ["bash", f"{host}/benchmarks/x.sh"]


def test_docker_unset_dash_e_env_file_and_no_command(tr: Trace) -> None:
    proc = tr.run("docker", "run", "-it", "--env=UNSET_ONE", "--env-file", "vars.env", "--name", "n", "img")
    assert proc.returncode == 0 and proc.stdout == ""
    (rec,) = tr.records()
    assert rec["detail"]["env_passed"] == {"UNSET_ONE": None} and rec["detail"]["env_files"] == ["vars.env"]
    assert rec["detail"]["inner"] == []


@pytest.mark.parametrize("tool", ["docker", "podman", "nerdctl"])
def test_docker_other_subcommands(tr: Trace, tool: str) -> None:
    assert tr.run(tool, "pull", "img").returncode == 0
    proc = tr.run(tool, "inspect", "img")
    assert proc.returncode == 0 and proc.stdout.strip() == "[]"
    assert tr.run(tool, "ps", "-a", "-q").stdout == ""
    assert [r["role"] for r in tr.records()] == ["other"] * 3
    assert [r["detail"]["subcommand"] for r in tr.records()] == ["pull", "inspect", "ps"]


def test_docker_detached_runs_in_the_background(tr: Trace) -> None:
    proc = tr.run("docker", "run", "-d", "img", "bash", "-c", "echo done > detached.txt")
    assert proc.returncode == 0 and len(proc.stdout.strip()) == 64
    deadline = time.monotonic() + 10
    while not (tr.work / "detached.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tr.work / "detached.txt").exists()
    assert tr.records()[0]["detail"]["detached"] is True


# --- slurm ---------------------------------------------------------------------------------------


def test_srun_export_none_passes_only_the_listed(tr: Trace) -> None:
    proc = tr.run("srun", "--jobid=77", "--export=NONE,X", "env", env={"X": "x-val", "Y": "y-val"})
    assert proc.returncode == 0, proc.stderr
    env = dict(line.split("=", 1) for line in proc.stdout.splitlines())
    assert env["X"] == "x-val" and "Y" not in env and env["SLURM_JOB_ID"] == "77"
    (rec,) = tr.records()
    assert rec["role"] == "scheduler" and rec["detail"]["export_mode"] == "NONE"
    assert rec["detail"]["env_passed"] == {"X": "x-val"} and rec["detail"]["inner"] == ["env"]


def test_srun_export_default_all_and_all_with_values(tr: Trace) -> None:
    proc = tr.run("srun", "-N1", "-n", "1", "bash", "-c", "echo $Y $PORT", env={"Y": "y-val"})
    assert proc.stdout == "y-val\n"
    proc = tr.run("srun", "--export=ALL,PORT=8888", "bash", "-c", "echo $Y $PORT", env={"Y": "y-val"})
    assert proc.stdout == "y-val 8888\n"


def test_srun_container_maps_mounts_and_workdir(tr: Trace, tmp_path: Path) -> None:
    host = tmp_path / "ws"
    host.mkdir()
    (host / "b.sh").write_text("echo b $(pwd) $MODEL\n")
    proc = tr.run("srun", "--jobid=4242", "--container-image=/sq/img.sqsh",
                  f"--container-mounts={host}:/workspace,/nonexistent:/hf", "--container-mount-home",
                  "--container-workdir=/workspace", "--no-container-entrypoint", "--export=ALL", "bash", "b.sh",
                  env={"MODEL": "m"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"b {os.path.realpath(host)} m\n"
    srun, bash = tr.records()
    assert srun["role"] == "container" and srun["detail"]["image"] == "/sq/img.sqsh"
    assert srun["detail"]["mounts"] == [[str(host), "/workspace"], ["/nonexistent", "/hf"]]
    assert srun["detail"]["host_workdir"] == str(host)
    assert bash["role"] == "script"


def test_salloc_runs_its_command_with_a_job_id(tr: Trace) -> None:
    proc = tr.run("salloc", "--partition=p", "--gres=gpu:8", "bash", "-c", "echo job=$SLURM_JOB_ID")
    assert proc.returncode == 0 and proc.stdout == "job=4242\n"
    assert "salloc: Granted job allocation 4242" in proc.stderr
    proc = tr.sh("salloc -p x --no-shell 2>&1 | grep -oP 'Granted job allocation \\K[0-9]+'")
    assert proc.stdout == "4242\n"
    assert [r["tool"] for r in tr.records()] == ["salloc", "bash", "salloc"]
    assert tr.records()[0]["role"] == "scheduler"


def test_sbatch_records_and_does_not_run(tr: Trace) -> None:
    proc = tr.run("sbatch", "--nodes=2", "-J", "j", "--wrap=touch ran.txt")
    assert proc.returncode == 0 and proc.stdout == "Submitted batch job 4242\n"
    (tr.work / "job.sh").write_text("touch ran.txt\n")
    proc = tr.run("sbatch", "--parsable", "job.sh", "a")
    assert proc.stdout == "4242\n" and not (tr.work / "ran.txt").exists()
    wrap, script = tr.records()
    assert wrap["detail"]["wrap"] == "touch ran.txt" and wrap["detail"]["ran"] is False
    assert script["detail"]["script"] == "job.sh" and script["detail"]["script_args"] == ["a"]
    assert script["detail"]["script_exists"] is True


def test_sbcast_copies_to_the_job_node_which_is_this_machine(tr: Trace) -> None:
    (tr.work / "src.tgz").write_bytes(b"data")
    proc = tr.run("sbcast", "--jobid=4242", "--force", "src.tgz", "dst.tgz")
    assert proc.returncode == 0 and (tr.work / "dst.tgz").read_bytes() == b"data"
    assert tr.records()[0]["detail"]["copied"] is True


@pytest.mark.parametrize("argv, out", [
    (["squeue", "-u", "me"], "JOBID PARTITION"),
    (["squeue", "--name=x", "-h", "-o", "%A"], "4242"),  # the allocation salloc granted
    (["sinfo"], ""), (["scancel", "4242"], ""), (["sbcast", "--jobid=1", "a"], ""),
    (["scontrol", "show", "job", "4242"], ""),
])
def test_slurm_queries(tr: Trace, argv: list[str], out: str) -> None:
    proc = tr.run(*argv)
    assert proc.returncode == 0 and (out in proc.stdout if out else proc.stdout == "")
    if argv[-1] == "%A":
        assert proc.stdout == "4242\n"
    assert tr.records()[0]["role"] == "scheduler"


# --- enroot, mpirun, numactl ---------------------------------------------------------------------


def test_enroot_import_creates_the_file_and_start_runs_its_command(tr: Trace, tmp_path: Path) -> None:
    assert tr.run("enroot", "import", "-o", "img.sqsh", "docker://nvcr.io/x:1").returncode == 0
    assert (tr.work / "img.sqsh").exists()
    assert tr.run("enroot", "create", "-n", "c", "img.sqsh").returncode == 0
    proc = tr.run("enroot", "start", "--rw", "c", "bash", "-c", "echo $A-$B", env={"A": "1", "B": "2"})
    assert proc.stdout == "1-2\n"
    proc = tr.run("enroot", "start", "-e", "A", "--env", "C=3", "-m", f"{tmp_path}:/mnt", "c",
                  "bash", "-c", "echo $A-$B-$C", env={"A": "1", "B": "2"})
    assert proc.stdout == "1--3\n"
    roles = [(r["tool"], r["role"]) for r in tr.records()]
    assert roles == [("enroot", "other"), ("enroot", "other"), ("enroot", "container"), ("bash", "other"),
                     ("enroot", "container"), ("bash", "other")]
    assert tr.records()[4]["detail"]["mounts"] == [[str(tmp_path), "/mnt"]]


def test_mpirun_skips_its_options_and_runs_the_command(tr: Trace) -> None:
    proc = tr.run("mpirun", "-n", "1", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                  "-x", "FOO=1", "-x", "BAR", "--mca", "btl", "tcp", "bash", "-c", "echo $FOO $BAR",
                  env={"BAR": "b"})
    assert proc.returncode == 0 and proc.stdout == "1 b\n"
    mpi = tr.records()[0]
    assert mpi["detail"]["inner"] == ["bash", "-c", "echo $FOO $BAR"] and mpi["detail"]["np"] == "1"
    assert mpi["detail"]["exported"] == {"FOO": "1", "BAR": "b"}
    proc = tr.run("mpiexec", "-np", "2", "trtllm-llmapi-launch", "bash", "-c", "echo inner")
    assert proc.stdout == "inner\n"
    assert [r["tool"] for r in tr.records()][-3:] == ["mpiexec", "trtllm-llmapi-launch", "bash"]


def test_numactl_runs_the_command(tr: Trace) -> None:
    proc = tr.run("numactl", "--cpunodebind=0", "--membind", "0", "-l", "bash", "-c", "echo numa")
    assert proc.returncode == 0 and proc.stdout == "numa\n"
    assert tr.records()[0]["detail"]["inner"] == ["bash", "-c", "echo numa"]
    assert tr.run("numactl", "--show").returncode == 0


# --- GPUs ------------------------------------------------------------------------------------------


def test_nvidia_smi_list_and_queries(tr: Trace) -> None:
    gpus = {"BENCHBOT_TRACE_GPUS": "2"}
    proc = tr.run("nvidia-smi", "-L", env=gpus)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("GPU 1: NVIDIA B200 (UUID: GPU-")
    fields = "index,name,memory.total,memory.used,utilization.gpu,pci.bus_id,uuid"
    proc = tr.run("nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader", env=gpus)
    rows = [line.split(", ") for line in proc.stdout.splitlines()]
    assert len(rows) == 2 and all(len(r) == 7 for r in rows)
    assert rows[1][0] == "1" and rows[1][1] == "NVIDIA B200" and rows[1][3] == "0 MiB" and rows[1][4] == "0 %"
    assert rows[0][2].endswith(" MiB") and rows[0][6].startswith("GPU-") and rows[0][5] != rows[1][5]
    proc = tr.run("nvidia-smi", "--query-gpu=index,memory.used", "--format=csv,nounits", env=gpus)
    assert proc.stdout.splitlines() == ["index, memory.used", "0, 0", "1, 0"]
    proc = tr.run("nvidia-smi", "--query-gpu=memory.total", "--format=csv", "-i", "0")
    assert proc.stdout.splitlines()[0] == "memory.total [MiB]" and len(proc.stdout.splitlines()) == 2
    proc = tr.run("nvidia-smi")
    assert proc.returncode == 0 and "NVIDIA-SMI" in proc.stdout and proc.stdout.count("NVIDIA B200") == 8
    assert {r["role"] for r in tr.records()} == {"gpu"}


def test_amd_tools(tr: Trace) -> None:
    proc = tr.run("rocm-smi", "--showmemuse", env={"BENCHBOT_TRACE_GPUS": "4"})
    assert proc.returncode == 0 and proc.stdout.count("GPU Memory Allocated (VRAM%): 0") == 4
    proc = tr.run("amd-smi", "static", "--json")
    assert proc.returncode == 0 and proc.stdout.strip() == "[]"
    proc = tr.run("rocminfo")
    assert proc.returncode == 0 and proc.stdout.count("gfx942") == 8
    assert [r["role"] for r in tr.records()] == ["gpu"] * 3


# --- downloads and installers ------------------------------------------------------------------------


def test_hf_download_creates_the_local_dir_or_the_cache_snapshot(tr: Trace) -> None:
    proc = tr.run("hf", "download", "org/name", "--local-dir", "models/x", "--revision", "main")
    assert proc.returncode == 0 and proc.stdout == "models/x\n" and (tr.work / "models/x").is_dir()
    proc = tr.run("huggingface-cli", "download", "org/name")
    snap = tr.home / ".cache/huggingface/hub/models--org--name/snapshots/0"
    assert proc.stdout == f"{snap}\n" and snap.is_dir()
    assert tr.run("hf", "auth", "login", "--token", "t").returncode == 0
    recs = tr.records()
    assert recs[0]["role"] == "other" and recs[0]["detail"]["repo"] == "org/name"
    assert recs[1]["detail"]["created"] is True


@pytest.mark.parametrize("argv", [["pip", "install", "-q", "x"], ["pip3", "install", "x"], ["uv", "pip", "install"],
                                  ["uv", "venv"], ["python3", "-m", "pip", "install", "datasets"]])
def test_installers_do_nothing(tr: Trace, argv: list[str]) -> None:
    proc = tr.run(*argv)
    assert proc.returncode == 0 and proc.stdout == ""
    assert tr.records()[0]["role"] == "other"


@pytest.mark.parametrize("argv", [["uv", "run", "x.py"], ["uvx", "tool"]])
def test_uv_run_is_refused(tr: Trace, argv: list[str]) -> None:
    proc = tr.run(*argv)
    assert proc.returncode == 126 and "trace: refused to run" in proc.stderr
    assert tr.records()[0]["role"] == "refused"


def test_curl_answers_health_and_models_without_the_network(tr: Trace) -> None:
    tr.env["BENCHBOT_TRACE_SERVER_WAIT"] = "0"
    proc = tr.run("curl", "-s", "localhost:8888/v1/models")
    assert proc.returncode == 0 and json.loads(proc.stdout)["data"][0]["id"]
    proc = tr.run("curl", "--output", "/dev/null", "--silent", "--fail", "http://0.0.0.0:8888/health")
    assert proc.returncode == 0 and proc.stdout == ""
    proc = tr.run("curl", "-so", "out.bin", "-w", "%{http_code}", "http://example.invalid/file")
    assert proc.stdout == "200" and (tr.work / "out.bin").read_bytes() == b""
    proc = tr.run("curl", "-fsSLO", "https://example.invalid/path/get.sh")
    assert proc.returncode == 0 and (tr.work / "get.sh").exists() and proc.stdout == ""
    proc = tr.run("curl", "-s", "https://example.invalid/other")
    assert proc.returncode == 0 and proc.stdout == ""
    recs = tr.records()
    assert recs[0]["detail"]["url"] == "localhost:8888/v1/models" and recs[2]["detail"]["files"] == ["out.bin"]


def test_wget_creates_its_output_file(tr: Trace) -> None:
    proc = tr.run("wget", "-q", "-O", "data.json", "https://example.invalid/data.json")
    assert proc.returncode == 0 and (tr.work / "data.json").exists()
    assert tr.records()[0]["detail"] == {"url": "https://example.invalid/data.json", "files": ["data.json"]}


# --- engines -----------------------------------------------------------------------------------------


SERVERS = [
    ["vllm", "serve", "org/m", "--port", "8000"],
    ["sglang", "serve", "--model-path", "org/m", "--port", "8000"],
    ["trtllm-serve", "org/m", "--port", "8000"],
    ["python3", "-m", "sglang.launch_server", "--model-path=org/m", "--port=8000"],
    ["python3", "-u", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/m", "--port", "8000"],
    ["python", "-m", "vllm.entrypoints.cli.main", "serve", "org/m", "--port", "8000"],
    ["python3", "-m", "dynamo.frontend", "--model", "org/m", "--port", "8000"],
    ["python3", "-m", "tensorrt_llm.commands.serve", "org/m", "--model", "org/m", "--port", "8000"],
    ["python3", "-m", "atom.entrypoints.openai_server", "--model", "org/m", "--port", "8000"],
    ["python3", "-m", "sglang_router.launch_router", "--model", "org/m", "--port", "8000"],
]


@pytest.mark.parametrize("argv", SERVERS, ids=lambda a: "-".join(a[:3]))
def test_servers_stay_up_for_the_configured_time(tr: Trace, argv: list[str]) -> None:
    start = time.monotonic()
    proc = tr.run(*argv, env={"BENCHBOT_TRACE_SERVER_SECONDS": "0.2"})
    elapsed = time.monotonic() - start
    assert proc.returncode == 0 and "stand-in server ready" in proc.stderr
    assert 0.2 <= elapsed < 5
    (rec,) = tr.records()
    assert rec["role"] == "server" and rec["detail"]["model"] == "org/m" and rec["detail"]["port"] == "8000"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_server_exits_at_once_on_a_signal(tr: Trace, sig: signal.Signals) -> None:
    proc = subprocess.Popen([str(tr.bin / "vllm"), "serve", "m"], cwd=tr.work, stderr=subprocess.PIPE,
                            env=tr.environ({"BENCHBOT_TRACE_SERVER_SECONDS": "60"}), text=True)
    assert proc.stderr is not None
    assert proc.stderr.readline() == "stand-in server ready\n"  # handlers are in place once this is out
    start = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == 0 and time.monotonic() - start < 5
    proc.stderr.close()


def test_a_backgrounded_server_and_its_client_in_a_script(tr: Trace) -> None:
    script = ("vllm serve m --port 8 > server.log 2>&1 &\nSERVER_PID=$!\n"
              "until curl --output /dev/null --silent --fail http://0.0.0.0:8/health; do sleep 1; done\n"
              "vllm bench serve --model m --save-result --result-dir out --result-filename r.json\n"
              "kill $SERVER_PID; wait $SERVER_PID; echo server=$?\n")
    proc = tr.sh(script, env={"BENCHBOT_TRACE_SERVER_SECONDS": "30"})
    assert proc.stdout == "server=0\n"
    assert json.loads((tr.work / "out" / "r.json").read_text()) == {}
    assert sorted(r["role"] for r in tr.records()) == ["client", "other", "server"]
    curl = tr.only("curl")[0]
    assert curl["detail"]["server_up"] is True  # it waited for the server to record itself


# --- clients --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, written", [
    (["vllm", "bench", "serve", "--result-dir", "res", "--result-filename", "a.json"], "res/a.json"),
    (["python3", "utils/bench_serving/benchmark_serving.py", "--model", "m", "--result-dir=res",
      "--result-filename=b.json"], "res/b.json"),
    (["python3", "-m", "sglang.bench_serving", "--backend", "sglang", "--output-file", "c.jsonl"], "c.jsonl"),
    (["python3", "-m", "sglang.bench_one_batch_server", "--result-filename", "d.json"], "d.json"),
    (["python3", "-m", "utils.bench_serving.benchmark_serving", "--result-filename", "e.json"], "e.json"),
    (["aiperf", "profile", "--model", "m", "--artifact-dir", "art"], "art"),
    (["lm_eval", "--model", "local-chat-completions", "--output_path", "ev"], "ev"),
    (["python3", "-m", "lm_eval", "--tasks", "gsm8k"], None),
])
def test_clients_write_an_empty_result(tr: Trace, argv: list[str], written: str | None) -> None:
    proc = tr.run(*argv)
    assert proc.returncode == 0
    (rec,) = tr.records()
    assert rec["role"] == "client"
    if written is not None:
        path = tr.work / written
        assert path.is_dir() or json.loads(path.read_text()) == {}
    if argv[1].endswith(".py"):
        assert rec["detail"]["script"] == argv[1]
    elif argv[1] == "-m":
        assert rec["detail"]["module"] == argv[2]


# --- python ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["python3", "-c", "print(1)"], ["python", "-uc", "print(1)"],
                                  ["python3", "tools/do.py", "--x"], ["python3", "-m", "json.tool"],
                                  ["python3", "-"], ["python3"]])
def test_other_python_is_refused(tr: Trace, argv: list[str]) -> None:
    (tr.work / "tools").mkdir()
    (tr.work / "tools" / "do.py").write_text("open('ran', 'w')\n")
    proc = tr.run(*argv)
    assert proc.returncode == 126 and proc.stdout == ""
    assert proc.stderr.startswith(f"trace: refused to run {argv[0]}")
    assert proc.stderr.rstrip().endswith("(only engine and client entry points are stood in)")
    (rec,) = tr.records()
    assert rec["role"] == "refused" and rec["detail"]["reason"]
    assert not (tr.work / "ran").exists()


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_python_version(tr: Trace, flag: str) -> None:
    proc = tr.run("python3", flag)
    assert proc.returncode == 0 and proc.stdout == "Python 3.11.7\n"


# --- containers.py, in process ------------------------------------------------------------------------


def test_path_translation_uses_the_longest_mount(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "standin", _load("standin", STANDIN))
    containers = _load("containers", STANDINS / "containers.py")
    mounts = [("/host/ws", "/workspace/"), ("/host/hf", "/workspace/hf"), ("volume", "/data")]
    assert containers.to_host("/workspace/", mounts) == "/host/ws/"
    assert containers.to_host("/workspace", mounts) == "/host/ws"
    assert containers.to_host("/workspace/a/b.sh", mounts) == "/host/ws/a/b.sh"
    assert containers.to_host("/workspace/hf/x", mounts) == "/host/hf/x"
    assert containers.to_host("/workspacex", mounts) == "/workspacex"
    assert containers.to_host("/data/x", mounts) == "/data/x"  # a named volume has no host path
    assert containers.to_host("rel/path", mounts) == "rel/path"


# --- what the InferenceX agreement run needed -----------------------------------------------


def test_rocm_smi_shows_firmware_versions(tr: Trace) -> None:
    """``rocm-smi --showfw | grep MEC | head -n 1`` under ``set -o pipefail``: a MEC line is there."""
    proc = tr.sh("set -euo pipefail; v=$(rocm-smi --showfw 2>/dev/null | grep MEC | head -n 1 | awk '{print $NF}');"
                 " echo \"mec=$v\"")
    assert proc.returncode == 0 and proc.stdout.strip() == "mec=177"


@pytest.mark.parametrize("argv", [["uv", "venv", "--python", "3.11", "VENV"], ["python3", "-m", "venv", "VENV"]],
                         ids=["uv", "python"])
def test_a_venv_holds_the_stand_ins(tr: Trace, argv: list[str]) -> None:
    """``$VENV/bin/aiperf profile ...`` after ``uv venv $VENV``: the venv's tools are stand-ins too."""
    venv = tr.work / "venv"
    proc = tr.run(*[str(venv) if a == "VENV" else a for a in argv])
    assert proc.returncode == 0, proc.stderr
    assert (venv / "pyvenv.cfg").is_file()
    assert tr.records()[-1]["detail"]["made"] is True
    client = subprocess.run([str(venv / "bin" / "aiperf"), "profile", "--model", "m"], cwd=tr.work,
                            env=tr.environ(), capture_output=True, text=True, timeout=30)
    assert client.returncode == 0
    assert tr.records()[-1]["role"] == "client" and tr.records()[-1]["tool"] == "aiperf"


def test_a_replay_script_is_a_client(tr: Trace) -> None:
    proc = tr.run("python3", "utils/trace_replay.py", "--port", "8888")
    assert proc.returncode == 0 and tr.records()[-1]["role"] == "client"
