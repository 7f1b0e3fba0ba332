"""What a sandboxed run left (``bot.trace.sandbox.run``): its ``Outcome``, read from the supervisor's
``_Run`` (exit status, how it ended, its output cut at ``max_output``), bwrap's status documents and
the stand-ins' JSON log (opened without following a link, read only if it is a regular file)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.trace.supervise import _Run


@dataclass(frozen=True)
class Outcome:
    code: int | None  # exit status of the command (None: killed, or it never started)
    ended: str  # "exit" | "timeout" | "output-limit" | "error" (the sandbox or the command could not start)
    message: str  # one line, e.g. "trace: runners/launch_x.sh exited 0"
    stdout: str  # at most max_output bytes, then a note saying it was cut
    stderr: str
    records: list[dict[str, Any]]  # the stand-in log's JSON lines (objects), in order
    skipped: int  # log lines that were no JSON object
    seconds: float  # from the start of the command (or of bwrap) to its end
    tempdir: Path | None = None  # kept (``keep=True``) temp folder; ``remove(tempdir)`` when done

    @property
    def workdir(self) -> Path | None:
        """The copy of the repository (``workspace`` inside the sandbox), when kept."""
        return None if self.tempdir is None else self.tempdir / "work"

    @property
    def tmp(self) -> Path | None:
        """What was ``/tmp`` inside the sandbox, when kept."""
        return None if self.tempdir is None else self.tempdir / "tmp"



def _records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The log's JSON objects, and how many lines were something else. The log is opened without
    following a link and read only if it is a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return [], 0
    with os.fdopen(fd, "rb") as f:
        data = f.read() if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    records: list[dict[str, Any]] = []
    skipped = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            records.append(obj)
        else:
            skipped += 1
    return records, skipped


def _statuses(data: bytes) -> dict[str, Any]:
    """bwrap's status documents, one a line (``{"child-pid": N, ...}``, then ``{"exit-code": N}``), merged."""
    merged: dict[str, Any] = {}
    for line in data.splitlines():
        with contextlib.suppress(ValueError):
            doc = json.loads(line)
            merged.update(doc if isinstance(doc, dict) else {})
    return merged


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n and n % (1 << 20) == 0 else f"{n} bytes"


def _text(data: bytes, name: str, cut: Sequence[str], max_output: int) -> str:
    text = data.decode("utf-8", errors="replace")
    return text + f"\n[benchbot: {name} cut at {_size(max_output)}]\n" if name in cut else text


def _outcome(r: _Run, label: str, timeout: float, max_output: int, unsafe: bool, records: list[dict[str, Any]],
             skipped: int, kept: Path | None) -> Outcome:
    suffix = " (no sandbox)" if unsafe else ""
    code: int | None = None
    ended = r.ended
    note = next((line for line in reversed(r.err.decode(errors="replace").splitlines())
                 if line.startswith(("bwrap: ", "benchbot-sandbox: "))), "")
    if r.rc is None:
        message = f"trace: could not start {label}: {r.error}{suffix}"
    elif ended == "timeout":
        message = f"trace: {label} ran out of its {timeout:g} s (killed){suffix}"
    elif ended == "output-limit":
        message = f"trace: {label} printed more than {_size(max_output)} on {r.cut[0]} (killed){suffix}"
    elif not unsafe and ("exit-code" not in _statuses(r.status) or (r.rc == 127 and note.startswith("benchbot-"))):
        # bwrap could not set the sandbox up or start the command (it reports no exit code then),
        # or the shim could not start it
        ended, message = "error", f"trace: could not start {label} in the sandbox: {note or f'bwrap exited {r.rc}'}"
    elif r.rc < 0:
        message = f"trace: {label} was killed by {_signal(-r.rc)}{suffix}"
    else:
        code = r.rc
        # bwrap reports a command killed by signal N as 128 + N
        why = f" (128 + {_signal(code - 128)})" if not unsafe and 128 < code < 128 + 65 else ""
        message = f"trace: {label} exited {code}{why}{suffix}"
    return Outcome(code, ended, message, _text(r.out, "stdout", r.cut, max_output),
                   _text(r.err, "stderr", r.cut, max_output), records, skipped, round(r.seconds, 3), kept)


def _signal(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
