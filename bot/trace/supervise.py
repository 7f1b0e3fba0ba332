"""Running the sandboxed command: its process limits, the supervision of its output and its
time, and the kill of everything it left (``bot.trace.sandbox`` builds the command)."""

from __future__ import annotations

import contextlib
import math
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_FILE = 256 << 20  # the largest file the command may write
DRAIN = 2.0  # seconds to read what is left in the pipes once the command ended or was killed


def _tasks(uid: int) -> int:
    """Tasks (threads) of ``uid`` now: what RLIMIT_NPROC counts."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            lines = Path(entry.path, "status").read_text().splitlines()
            fields = dict(line.split(":", 1) for line in lines if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields.get("Threads", "1"))
        except (OSError, ValueError, KeyError):
            continue
    return count


def _limits(timeout: float, nproc: int) -> Callable[[], None]:
    cpu = math.ceil(timeout) + 5
    wanted = ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_FSIZE, MAX_FILE), (resource.RLIMIT_NPROC, nproc),
              (resource.RLIMIT_CORE, 0))

    def apply() -> None:  # in the child, before bwrap (or the command) starts
        for res, value in wanted:
            hard = resource.getrlimit(res)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(res, (value, value))

    return apply


@dataclass
class _Run:
    rc: int | None  # None: could not start
    ended: str
    out: bytes
    err: bytes
    cut: list[str]  # "stdout" / "stderr": more was printed than kept
    status: bytes  # bwrap's --json-status-fd documents
    seconds: float
    error: str = ""


def _child(limits: Callable[[], None]) -> None:
    """In the child before exec: the limits, and stdout/stderr (pipes of ours) opened to every
    user, so that the command, run as ``nobody``, can reopen them (``tee /dev/stderr``)."""
    limits()
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)


def _supervise(cmd: list[str], cwd: str, env: dict[str, str], limits: Callable[[], None],
               status: tuple[int, int] | None, timeout: float, max_output: int) -> _Run:
    """Start cmd in a new session; read its stdout, stderr (and bwrap's status) as they come; kill
    its process group at the timeout or past max_output, and in any case once the leader has exited
    (what it left running), before the leader is reaped: so the group id cannot be anyone else's."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=status[1:] if status else (),
                                preexec_fn=lambda: _child(limits), start_new_session=True)
    except OSError as e:
        if status:
            os.close(status[0])
        return _Run(None, "error", b"", b"", [], b"", time.monotonic() - start, f"{cmd[0]}: {e.strerror or e}")
    finally:
        if status:
            os.close(status[1])
    assert proc.stdout is not None and proc.stderr is not None
    streams = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    if status:
        streams[status[0]] = "status"
    try:
        ended, bufs, cut = _watch(proc.pid, streams, start + timeout, max_output)
    finally:  # also on an exception (Ctrl-C): nothing is left running
        _kill(proc.pid)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        if status:
            os.close(status[0])
    return _Run(proc.returncode, ended, bytes(bufs["stdout"]), bytes(bufs["stderr"]), cut,
                bytes(bufs.get("status", b"")), time.monotonic() - start)


def _watch(pid: int, streams: dict[int, str], until: float,
           max_output: int) -> tuple[str, dict[str, bytearray], list[str]]:
    """Read the streams until the command has ended and they are closed (or DRAIN seconds later)."""
    bufs = {name: bytearray() for name in streams.values()}
    cut: list[str] = []
    ended, leader_done, finished = "exit", False, False
    sel = selectors.DefaultSelector()
    pidfd = os.pidfd_open(pid)
    try:
        for fd in (*streams, pidfd):
            sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if not finished and now >= until:
                ended, finished, until = "timeout", True, now + DRAIN
                _kill(pid)
            if finished and (now >= until or (leader_done and not sel.get_map())):
                return ended, bufs, cut
            for key, _ in sel.select(max(0.0, until - now)):
                if key.fd == pidfd:
                    sel.unregister(pidfd)
                    leader_done = True
                    if not finished:
                        finished, until = True, time.monotonic() + DRAIN
                    _kill(pid)  # what the command left running (without a sandbox, no namespace ends it)
                    continue
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fd)
                    continue
                name = streams[key.fd]
                room = max_output - len(bufs[name])
                bufs[name] += data[:room]
                if len(data) > room and name != "status":
                    if name not in cut:
                        cut.append(name)
                    if not finished:
                        ended, finished, until = "output-limit", True, time.monotonic() + DRAIN
                        _kill(pid)
    finally:
        sel.close()
        os.close(pidfd)


def _kill(pgid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)
