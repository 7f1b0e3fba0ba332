"""bot.trace.sandbox with the real bwrap and real processes: what the command can and cannot reach,
the limits, the environment, the stand-in wrappers and their log, and the unsandboxed mode."""

from __future__ import annotations

import os
import socket
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from bot.trace import sandbox, supervise

ROOT = Path(__file__).resolve().parents[2]
WS = "/github/workspace"
# A stand-in of the stand-ins: log the call; "--garbage" also logs a line that is no JSON object.
STANDIN = """\
import json, os, sys
with open(os.environ["BENCHBOT_TRACE_LOG"], "a") as log:
    log.write(json.dumps({"tool": sys.argv[1], "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\\n")
    if "--garbage" in sys.argv:
        log.write("not json\\n[1, 2]\\n")
"""


@pytest.fixture
def standins(tmp_path: Path) -> Path:
    folder = tmp_path / "standins"
    folder.mkdir()
    (folder / "standin.py").write_text(STANDIN)
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "runners").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")
    (folder / "existing.txt").write_text("original\n")
    (folder / "runners" / "launch.sh").write_text("echo launched\n")
    return folder


def trace(repo: Path, standins: Path, script: str, **kw: object) -> sandbox.Outcome:
    """Run ``script`` as ``bash run.sh`` from the workspace."""
    (repo / "run.sh").write_text(script)
    kw.setdefault("names", ["docker", "srun"])
    return sandbox.run(repo, ["bash", "run.sh"], {}, standins=standins, **kw)  # type: ignore[arg-type]


def marker() -> str:
    """A sleep length no other process uses: found in the command line of both the shell and the sleep."""
    return f"60.{uuid.uuid4().int % 10**9:09d}"


def running(marker: str) -> list[str]:
    """Command lines of the processes holding ``marker`` (``pgrep -f``, without procps)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(cmdline)
    return found


def test_available() -> None:
    assert sandbox.available() is None


# --- the file system -------------------------------------------------------------------------

ESCAPES = {
    "etc": ("echo x > /etc/benchbot-escape", "/etc/benchbot-escape"),
    "work": (f"echo x > {ROOT}/ESCAPE", f"{ROOT}/ESCAPE"),
    "home-up": ("echo x > $HOME/../../escape", "/escape"),
    "root": ("touch /root/escape", "/root/escape"),
}


@pytest.mark.parametrize("case", ESCAPES)
def test_writes_outside_the_copy_fail(repo: Path, standins: Path, case: str) -> None:
    command, host = ESCAPES[case]
    assert not os.path.exists(host)
    out = trace(repo, standins, command + "\n")
    assert out.ended == "exit" and out.code not in (0, None), out
    assert out.message == f"trace: run.sh exited {out.code}"
    assert any(why in out.stderr for why in ("Read-only file system", "Permission denied", "No such file")), out
    assert not os.path.exists(host)


def test_the_original_folder_and_links_out_of_the_copy(repo: Path, standins: Path, tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (repo / "out").symlink_to(host)
    out = trace(repo, standins, f"echo x > {repo}/escape; r1=$?\necho x > out/escape; r2=$?\n"
                f"readlink out\nexit $((r1 * 10 + r2))\n")
    assert out.code == 11 and out.stdout == f"{host}\n", out
    assert not (repo / "escape").exists() and list(host.iterdir()) == []


def test_writes_inside_stay_in_the_copy(repo: Path, standins: Path) -> None:
    script = ("echo changed > existing.txt && echo new > new.txt && mkdir -p d/e && echo deep > d/e/f\n"
              "echo home > $HOME/h && echo tmp > /tmp/t && pwd && test ! -e .git && readlink link\n")
    (repo / "link").symlink_to("/etc/hostname")
    out = trace(repo, standins, script, keep=True)
    try:
        assert (out.code, out.stdout) == (0, f"{WS}\n/etc/hostname\n"), out
        assert out.workdir is not None and out.tmp is not None and out.tempdir is not None
        assert (out.workdir / "existing.txt").read_text() == "changed\n"
        assert (out.workdir / "d" / "e" / "f").read_text() == "deep\n"
        assert (out.tmp / "t").read_text() == "tmp\n"
        assert os.readlink(out.workdir / "link") == "/etc/hostname"
    finally:
        if out.tempdir is not None:
            sandbox.remove(out.tempdir)
    assert (repo / "existing.txt").read_text() == "original\n"
    assert not (repo / "new.txt").exists() and not (repo / "d").exists()


def test_removing_a_kept_folder_does_not_follow_links(repo: Path, standins: Path, tmp_path: Path) -> None:
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    (host / "sub" / "f").write_text("host\n")
    host.chmod(0o751)
    out = sandbox.run(repo, ["bash", "-c", f"ln -s {host} link; ln -s {host}/sub/f flink; mkdir d; chmod 000 d"],
                      {}, standins=standins, names=[], keep=True, unsafe_no_sandbox=True)
    assert out.code == 0 and out.tempdir is not None, out
    sandbox.remove(out.tempdir)
    assert not out.tempdir.exists()
    assert (host / "sub" / "f").read_text() == "host\n" and host.stat().st_mode & 0o777 == 0o751


def test_the_temp_folder_is_removed(repo: Path, standins: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "temp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    # what the command leaves behind does not keep its folder: a folder without permissions
    out = trace(repo, standins, "mkdir -p locked/in && touch locked/in/f && chmod 000 locked/in locked\n")
    assert out.code == 0 and out.tempdir is None, out
    assert list(base.iterdir()) == []


def test_nothing_else_of_the_host_is_there(repo: Path, standins: Path) -> None:
    out = trace(repo, standins, "ls / | tr '\\n' ' '; test -e /work || test -e /sys || test -e /home || echo hidden\n")
    assert out.code == 0, out
    # /opt: an empty tmpfs of the sandbox's own (tool venvs are made there)
    assert set(out.stdout.split()) - {"hidden"} <= {"bin", "dev", "etc", "github", "lib", "lib32", "lib64", "libx32",
                                                    "opt", "proc", "root", "sbin", "tmp", "trace", "usr"}, out
    assert out.stdout.endswith("hidden\n")


# --- network ---------------------------------------------------------------------------------

def test_no_network(repo: Path, standins: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        script = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected\n"
        out = trace(repo, standins, script)
        assert out.code not in (0, None) and "connected" not in out.stdout, out
        # the same outside the sandbox does connect: the server was listening
        out = trace(repo, standins, script, unsafe_no_sandbox=True)
        assert out.code == 0 and out.stdout == "connected\n", out


def test_no_name_resolution(repo: Path, standins: Path) -> None:
    out = trace(repo, standins, "getent hosts example.com\n")
    assert out.code not in (0, None) and out.stdout == "", out


# --- limits ----------------------------------------------------------------------------------

def test_timeout_kills_everything(repo: Path, standins: Path) -> None:
    mark = marker()
    start = time.monotonic()
    out = sandbox.run(repo, ["bash", "-c", f"sleep {mark} & while :; do :; done # {mark}"], {}, standins=standins,
                      names=[], timeout=1.5)
    assert time.monotonic() - start < 5
    assert (out.ended, out.code) == ("timeout", None), out
    assert out.message == "trace: bash ran out of its 1.5 s (killed)"
    assert running(mark) == []


def test_timeout_without_sandbox_kills_the_group(repo: Path, standins: Path) -> None:
    mark = marker()
    out = trace(repo, standins, f"sleep {mark} & while :; do :; done # {mark}\n", timeout=1.0,
                unsafe_no_sandbox=True, label="the launcher")
    assert out.ended == "timeout" and out.message == "trace: the launcher ran out of its 1 s (killed) (no sandbox)"
    time.sleep(0.2)
    assert running(mark) == []


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandbox", "no-sandbox"])
def test_what_the_command_leaves_running_is_killed(repo: Path, standins: Path, unsafe: bool) -> None:
    mark = marker()
    start = time.monotonic()
    out = sandbox.run(repo, ["bash", "-c", f"sleep {mark} & echo started # {mark}"], {}, standins=standins, names=[],
                      unsafe_no_sandbox=unsafe)
    assert (out.ended, out.code, out.stdout) == ("exit", 0, "started\n"), out
    assert time.monotonic() - start < 3
    time.sleep(0.2)
    assert running(mark) == []


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandbox", "no-sandbox"])
def test_interrupted_run_leaves_nothing_running(repo: Path, standins: Path, unsafe: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    mark = marker()

    def interrupted(*args: object) -> None:
        time.sleep(0.3)
        assert len(running(mark)) >= 2  # bwrap or bash, and sleep
        raise KeyboardInterrupt

    monkeypatch.setattr(supervise, "_watch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sandbox.run(repo, ["bash", "-c", f"sleep {mark}; true # {mark}"], {}, standins=standins, names=[],
                    unsafe_no_sandbox=unsafe)
    time.sleep(0.2)
    assert running(mark) == []


def test_process_limit(repo: Path, standins: Path) -> None:
    mark = marker()
    start = time.monotonic()
    out = trace(repo, standins, f"for i in $(seq 2000); do sleep {mark} & done\nwait\n", timeout=3.0)
    assert time.monotonic() - start < 8
    assert out.ended == "timeout", out
    assert "Resource temporarily unavailable" in out.stderr, out
    assert running(mark) == []


def test_output_limit(repo: Path, standins: Path) -> None:
    start = time.monotonic()
    out = trace(repo, standins, "yes benchbot\n", max_output=1 << 20, timeout=20)
    assert time.monotonic() - start < 5
    assert (out.ended, out.code) == ("output-limit", None), out
    assert out.message == "trace: run.sh printed more than 1 MiB on stdout (killed)"
    kept, note = out.stdout.rsplit("\n[benchbot:", 1)
    assert len(kept) <= 1 << 20 and note == " stdout cut at 1 MiB]\n"
    out = trace(repo, standins, "head -c 1000 /dev/zero | tr '\\0' x; echo warn >&2\n", max_output=1000)
    assert (out.ended, out.code, out.stdout, out.stderr) == ("exit", 0, "x" * 1000, "warn\n"), out


def test_a_killed_command_is_named(repo: Path, standins: Path) -> None:
    out = trace(repo, standins, "kill -XCPU $$\n")
    assert out.code == 128 + 24 and out.message == "trace: run.sh exited 152 (128 + SIGXCPU)", out
    out = trace(repo, standins, "kill -XCPU $$\n", unsafe_no_sandbox=True)
    assert out.code is None and out.message == "trace: run.sh was killed by SIGXCPU (no sandbox)", out


# --- environment and stand-ins ---------------------------------------------------------------

def test_environment(repo: Path, standins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBOT_HOST_SECRET", "x")
    out = sandbox.run(repo, ["env"], {"MODEL": "m", "LC_CTYPE": "C"}, standins=standins, names=["docker"])
    assert out.code == 0, out
    env = dict(line.split("=", 1) for line in out.stdout.splitlines())
    assert env == {"MODEL": "m", "LC_CTYPE": "C", "PATH": "/trace/bin:/usr/local/bin:/usr/bin:/bin",
                   "HOME": "/trace/home", "BENCHBOT_TRACE_LOG": "/trace/log.jsonl", "BENCHBOT_TRACE_DIR": "/trace/bin",
                   "BENCHBOT_TRACE_BASH": env["BENCHBOT_TRACE_BASH"], "PWD": WS}
    assert env["BENCHBOT_TRACE_BASH"] in ("/bin/bash", "/usr/bin/bash")
    out = sandbox.run(repo, ["env"], {}, standins=standins, names=[])
    assert "LC_CTYPE" not in out.stdout, out  # Python's locale coercion in the shim does not leak


def test_wrappers_run_the_standins(repo: Path, standins: Path) -> None:
    out = trace(repo, standins, "command -v docker\ndocker run --gpus all img --garbage\ncd runners && srun -N1 x\n")
    assert (out.code, out.stdout) == (0, "/trace/bin/docker\n"), out
    docker = ["docker", "run", "--gpus", "all", "img", "--garbage"]
    assert out.records == [{"tool": "docker", "argv": docker, "cwd": WS},
                           {"tool": "srun", "argv": ["srun", "-N1", "x"], "cwd": f"{WS}/runners"}]
    assert out.skipped == 2


def test_without_sandbox(repo: Path, standins: Path) -> None:
    out = trace(repo, standins, "pwd; echo $HOME; docker ps; echo x > new.txt\n", unsafe_no_sandbox=True, keep=True)
    try:
        assert out.tempdir is not None and out.workdir is not None
        assert out.code == 0 and out.message == "trace: run.sh exited 0 (no sandbox)", out
        assert out.stdout == f"{out.workdir}\n{out.tempdir}/home\n"
        assert out.records == [{"tool": "docker", "argv": ["docker", "ps"], "cwd": str(out.workdir)}]
        assert (out.workdir / "new.txt").exists() and not (repo / "new.txt").exists()
    finally:
        if out.tempdir is not None:
            sandbox.remove(out.tempdir)


@pytest.mark.parametrize("unsafe", [False, True], ids=["sandbox", "no-sandbox"])
def test_a_command_that_cannot_start(repo: Path, standins: Path, unsafe: bool) -> None:
    out = sandbox.run(repo, ["no-such-command"], {}, standins=standins, names=[], unsafe_no_sandbox=unsafe)
    assert (out.ended, out.code) == ("error", None), out
    assert out.message.startswith("trace: could not start no-such-command") and "No such file" in out.message, out


def test_bad_arguments(repo: Path, standins: Path) -> None:
    for names, workspace in ((["a/b"], WS), ([".hidden"], WS), ([], "relative"), ([], "/usr/ws"), ([], "/"),
                             ([], "/github/../tmp"), ([], "/trace/x")):
        with pytest.raises(ValueError):
            sandbox.run(repo, ["true"], {}, standins=standins, names=names, workspace=workspace)
    with pytest.raises(ValueError):
        sandbox.run(repo, [], {}, standins=standins, names=[])


def test_another_workspace(repo: Path, standins: Path) -> None:
    out = sandbox.run(repo, ["bash", "-c", "pwd; cat runners/launch.sh"], {}, standins=standins, names=[],
                      workspace="/home/runner/work/r/r")
    assert (out.code, out.stdout) == (0, "/home/runner/work/r/r\necho launched\n"), out


def test_unavailable_without_bwrap(monkeypatch: pytest.MonkeyPatch, repo: Path, standins: Path) -> None:
    sandbox.available.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        assert "apt-get install bubblewrap" in (sandbox.available() or "")
        with pytest.raises(sandbox.SandboxUnavailable):
            sandbox.run(repo, ["true"], {}, standins=standins, names=[])
    finally:
        sandbox.available.cache_clear()


def test_scratch_folders_are_empty_writable_and_not_the_hosts(repo: Path, standins: Path) -> None:
    """A launcher's cluster paths (``/raid/squash/x.lock``): empty tmpfs of the sandbox's own."""
    out = trace(repo, standins, "set -e; exec 9>/raid/squash/x.lock; mkdir -p /scratch/a; ls -A /raid/squash; "
                "echo ok\n", scratch=["raid", "scratch", "usr"], scratch_dirs=["/raid/squash"])
    assert out.code == 0 and out.stdout.split() == ["x.lock", "ok"], out
    assert not Path("/raid/squash/x.lock").exists() and not Path("/scratch/a").exists()
