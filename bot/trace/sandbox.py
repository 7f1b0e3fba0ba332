"""Run one command on a throw-away copy of a repository, inside a bubblewrap (``bwrap``) sandbox.

What ``run`` guarantees, with the sandbox:

- The command sees a copy of the repository (without ``.git``; symbolic links copied as links, never
  followed) at ``workspace``, and starts there. The copy, a fresh ``HOME``, ``/tmp`` (a folder of the
  temp folder, so that what a script wrote there can be read back: ``Outcome.tmp``) and the stand-in
  log are all it can write. ``/usr``, ``/etc``, ``/bin``, ``/lib*`` and the Python installation the
  stand-ins run with are read-only; nothing else of the host is there (no ``/work``, ``/root``,
  ``/home``, ``/sys``). The original folder is never written.
- No network (a network namespace with only its own loopback), its own process, IPC and host-name
  namespaces, no capabilities, ``no_new_privs`` (a set-user-ID program gains nothing). When benchbot
  runs as root, bwrap runs as root (so it can mount what root can read) but the command runs as
  ``nobody`` (uid 65534): the process limit does not bind root, and root's files stay root's.
- Only the given environment, plus ``PATH`` (the stand-in wrappers first), ``HOME``, ``PWD`` and
  the ``BENCHBOT_TRACE_*`` variables.
- Bounded: a wall-clock ``timeout``, then bwrap is killed and every process of the sandbox dies with
  it (``ended="timeout"``); at most ``MAX_PROCS`` processes more for the command's user
  (``RLIMIT_NPROC``); ``timeout`` + 5 s of CPU per process; files of at most ``MAX_FILE``; and
  ``max_output`` bytes kept of stdout and of stderr: a command printing more is killed
  (``ended="output-limit"``), so a runaway loop ends at once, not at the timeout.

What it does not: defend against a kernel exploit or a bug in bwrap; bound memory or disk beyond the
file size. It runs the repository's code: use it on a checkout you trust.

``unsafe_no_sandbox=True`` keeps the copy, ``HOME``, ``PATH``, the environment and the limits but runs
the command directly at the copy's real path (``Outcome.workdir``): ``workspace`` cannot be mounted,
so pointing ``GITHUB_WORKSPACE`` and the like at the copy is the caller's job. Nothing is isolated
then (network, the host's files and ``/tmp``, processes that leave the session), and as root the
process limit does not bind. The temp folder is removed afterwards unless ``keep``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.trace.outcome import Outcome, _outcome, _records
from bot.trace.supervise import _limits, _supervise, _tasks

MAX_PROCS = 512  # processes (threads count) the command may add to its user's
MAX_FILE = 256 << 20  # the largest file it may write
NOBODY = 65534  # the command's uid and gid when benchbot runs as root
INSIDE = "/trace"  # wrappers, stand-ins, HOME and the log, inside the sandbox
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
DRAIN = 2.0  # seconds to read what is left in the pipes once the command ended or was killed
_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]*\Z")
_TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")  # often symlinks into /usr
_SCRATCH = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")
_RESERVED = ("/usr", "/etc", "/proc", "/dev", "/tmp", "/sys", "/opt", "/root", "/run", "/boot", INSIDE,
             *("/" + t for t in _TOP))
# Started as root by bwrap (no user namespace): become ``nobody``, put back LC_CTYPE (Python's C
# locale coercion sets it: argv[2] is "-" for unset, else "=" and the value), run the command.
_SHIM = ("import os,sys\nu=int(sys.argv[1]);os.setgroups([]);os.setresgid(u,u,u);os.setresuid(u,u,u)\n"
         "c=sys.argv[2];os.environ.pop('LC_CTYPE',None)\nif c!='-':os.environ['LC_CTYPE']=c[1:]\n"
         "try:os.execvp(sys.argv[3],sys.argv[3:])\nexcept OSError as e:\n"
         " sys.stderr.write(f'benchbot-sandbox: {sys.argv[3]}: {e.strerror}\\n');os._exit(127)\n")


class SandboxUnavailable(Exception):
    """No bwrap, or bwrap cannot create its namespaces here; the message says which and what to do."""


@functools.cache
def available() -> str | None:
    """None when the sandbox can run here, else why not and what to install (asked once)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ("bubblewrap is not installed (no bwrap on PATH): install it (apt-get install bubblewrap), "
                "or pass --unsafe-no-sandbox on a machine you can throw away")
    drop = os.geteuid() == 0
    cmd = [*_bwrap_args(bwrap, None, "/", drop), "--", *_shim(drop, {}), "true"]
    try:
        done = subprocess.run(cmd, env={"PATH": SYSTEM_PATH}, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{bwrap} could not be run: {e}"
    if done.returncode == 0:
        return None
    why = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return (f"bwrap cannot create a sandbox here ({why}): allow user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ kernel.apparmor_restrict_unprivileged_userns=0 "
            "or an AppArmor profile for bwrap), or run as root with CAP_SYS_ADMIN; else --unsafe-no-sandbox")


def run(repo: Path, argv: list[str], env: Mapping[str, str], *, standins: Path, names: Sequence[str],
        workspace: str = "/github/workspace", timeout: float = 30.0, unsafe_no_sandbox: bool = False,
        max_output: int = 1 << 20, keep: bool = False, label: str | None = None,
        aliases: Sequence[str] = (), scratch: Sequence[str] = (), scratch_dirs: Sequence[str] = ()) -> Outcome:
    """Run ``argv`` from ``workspace`` on a copy of ``repo`` (see the module's docstring). ``names``
    are the commands stood in: each gets a wrapper, first on ``PATH``, that runs
    ``standins/standin.py NAME ARGS...``. ``label`` names the command in the message (default: the
    script of ``bash SCRIPT``, else ``argv[0]``). ``aliases``: further paths the copy is mounted at
    (``/workspace``: the path a container sees, which scripts write to); ``scratch``: top-level
    folders given as empty, writable tmpfs (a cluster's ``/raid``, ``/scratch``, ``/lustre`` that a
    launcher makes folders in: the host's are never visible), and ``scratch_dirs`` folders made in
    them (``/raid/squash``: a launcher's lock file there). Raises SandboxUnavailable (no sandbox here) and
    ValueError (a bad argument); anything the command does is in the Outcome."""
    if not argv:
        raise ValueError("no command to run")
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        raise ValueError(f"not a command name: {bad[0]!r}")
    roots = _python_roots()
    aliases = [a.rstrip("/") for a in aliases if a.rstrip("/") and a.rstrip("/") != workspace.rstrip("/")]
    if not unsafe_no_sandbox:
        for path in (workspace, *aliases):
            _check_workspace(path, roots)
        why = available()
        if why is not None:
            raise SandboxUnavailable(why)
    label = label or _label(argv)
    drop = os.geteuid() == 0 and not unsafe_no_sandbox
    tmp = Path(tempfile.mkdtemp(prefix="benchbot-trace-"))
    try:
        inside = tmp if unsafe_no_sandbox else Path(INSIDE)
        _prepare(tmp, repo, standins, names, inside, drop)
        full = dict(env)
        pwd = str(tmp / "work") if unsafe_no_sandbox else workspace
        full.update(PATH=f"{inside}/bin:{SYSTEM_PATH}", HOME=f"{inside}/home", PWD=pwd,
                    BENCHBOT_TRACE_LOG=f"{inside}/log.jsonl", BENCHBOT_TRACE_DIR=f"{inside}/bin",
                    BENCHBOT_TRACE_BASH=shutil.which("bash", path=SYSTEM_PATH) or "/bin/bash")
        limits = _limits(timeout, _tasks(NOBODY if drop else os.getuid()) + MAX_PROCS)
        if unsafe_no_sandbox:
            out = _supervise(argv, str(tmp / "work"), full, limits, None, timeout, max_output)
        else:
            bwrap = shutil.which("bwrap") or "bwrap"
            status_r, status_w = os.pipe()
            tops = [t for t in dict.fromkeys(scratch) if _SCRATCH.fullmatch(t) and "/" + t not in _RESERVED
                    and not any(p == "/" + t or p.startswith("/" + t + "/") for p in (workspace, *aliases, *roots))]
            made = [d for d in scratch_dirs if posixpath.normpath(d) == d and d.split("/")[1] in tops]
            cmd = [*_bwrap_args(bwrap, tmp, workspace, drop, aliases, tops, made), "--chdir", workspace,
                   "--json-status-fd", str(status_w), "--", *_shim(drop, env), *argv]
            out = _supervise(cmd, "/", full, limits, (status_r, status_w), timeout, max_output)
        records, skipped = _records(tmp / "log.jsonl")
    except BaseException:
        remove(tmp)
        raise
    if not keep:
        remove(tmp)
    return _outcome(out, label, timeout, max_output, unsafe_no_sandbox, records, skipped, tmp if keep else None)


def remove(path: Path) -> None:
    """Remove a (kept) temp folder, whatever the command left in it: folders it made read-only are
    made writable first (not needed as root), never through a symbolic link it made."""
    if os.geteuid() != 0:
        for root, dirs, _ in os.walk(path):
            for name in dirs:
                with contextlib.suppress(OSError):
                    if not os.path.islink(p := os.path.join(root, name)):
                        os.chmod(p, 0o700)
    shutil.rmtree(path, ignore_errors=True)  # does not follow links


def _bwrap_args(bwrap: str, tmp: Path | None, workspace: str, drop: bool, aliases: Sequence[str] = (),
                scratch: Sequence[str] = (), scratch_dirs: Sequence[str] = ()) -> list[str]:
    """bwrap's options up to the command: namespaces, then the mounts, then a read-only root.
    ``drop``: bwrap runs as root, without a user namespace, keeping only the capabilities the shim
    needs to become ``nobody``; otherwise bwrap makes a user namespace (as an ordinary user)."""
    a = [bwrap, "--die-with-parent", "--new-session"]
    if drop:
        a += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
              "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        a += ["--unshare-all", "--cap-drop", "ALL"]
    a += ["--hostname", "benchbot-trace", "--ro-bind", "/usr", "/usr"]
    for top in ("/" + t for t in _TOP):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            a += ["--ro-bind", top, top]
    if os.path.isdir("/etc"):
        a += ["--ro-bind", "/etc", "/etc"]
    made: set[str] = set()

    def mount(kind: str, src: Path | str, dest: str) -> None:
        parent = posixpath.dirname(dest)
        parents = []
        while parent != "/" and parent not in made:  # bwrap would make them 0700: the shim's user could not pass
            parents.append(parent)
            made.add(parent)
            parent = posixpath.dirname(parent)
        for p in reversed(parents):
            a.extend(["--perms", "0755", "--dir", p])
        a.extend([kind, str(src), dest])

    roots = _python_roots()
    if not any(r == "/opt" or r.startswith("/opt/") for r in roots):
        # a writable, empty /opt: benchmark scripts make tool venvs there (/opt/aiperf/venv)
        a += ["--perms", "0777", "--tmpfs", "/opt"]
    for root in roots:
        mount("--ro-bind", root, root)
    for top in scratch:
        a += ["--perms", "1777", "--tmpfs", "/" + top]
        made.add("/" + top)
    for folder in scratch_dirs:
        parts = folder.split("/")
        for i in range(3, len(parts) + 1):
            sub = "/".join(parts[:i])
            if sub not in made:
                a += ["--perms", "1777", "--dir", sub]
                made.add(sub)
    a += ["--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm", "--proc", "/proc"]
    if tmp is None:
        a += ["--perms", "1777", "--tmpfs", "/tmp"]
    else:
        mount("--bind", tmp / "tmp", "/tmp")
        for name, kind in (("standins", "--ro-bind"), ("bin", "--ro-bind"), ("home", "--bind"),
                           ("log.jsonl", "--bind")):
            mount(kind, tmp / name, f"{INSIDE}/{name}")
        for where in (workspace, *aliases):
            mount("--bind", tmp / "work", where)
    return a + ["--remount-ro", "/"]


def _shim(drop: bool, env: Mapping[str, str]) -> list[str]:
    lc_ctype = "=" + env["LC_CTYPE"] if "LC_CTYPE" in env else "-"
    return [_python(), "-I", "-S", "-c", _SHIM, str(NOBODY), lc_ctype] if drop else []


def _python() -> str:
    """The interpreter the wrappers run: sys.executable's real path (not a venv's link to it)."""
    return os.path.realpath(sys.executable)


def _python_roots() -> list[str]:
    """The folders the interpreter needs, read-only: its installation (and the base installation,
    for an interpreter copied into a venv). A venv's site-packages is not needed: the wrappers run
    the real interpreter with -I, which sees the standard library only."""
    roots: list[str] = []
    for p in (posixpath.dirname(posixpath.dirname(_python())), os.path.realpath(sys.base_prefix)):
        if p == "/" or any(p == r or p.startswith(r + "/") for r in ("/usr", "/etc", *roots)):
            continue
        roots = [r for r in roots if not r.startswith(p + "/")] + [p]
    return roots


def _check_workspace(workspace: str, roots: Sequence[str]) -> None:
    if not workspace.startswith("/") or posixpath.normpath(workspace) != workspace or workspace == "/":
        raise ValueError(f"workspace must be a normalized absolute path other than /: {workspace!r}")
    for r in (*_RESERVED, *roots):
        if workspace == r or workspace.startswith(r + "/") or r.startswith(workspace + "/"):
            raise ValueError(f"workspace {workspace} overlaps {r}, which the sandbox mounts itself")


def _label(argv: Sequence[str]) -> str:
    shell = posixpath.basename(argv[0]) in ("bash", "sh", "dash", "zsh")
    return argv[1] if shell and len(argv) > 1 and not argv[1].startswith("-") else argv[0]


def _prepare(tmp: Path, repo: Path, standins: Path, names: Sequence[str], inside: Path, drop: bool) -> None:
    """The temp folder: work (the copy), home, tmp, log.jsonl (written by the command), bin (the
    wrappers) and standins (a copy, readable by all), the last two root's when ``drop``."""
    _copy(repo, tmp / "work")
    _copy(standins, tmp / "standins")
    for path in (tmp / "standins", *(tmp / "standins").rglob("*")):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
    (tmp / "home").mkdir(mode=0o700)
    (tmp / "tmp").mkdir()
    (tmp / "tmp").chmod(0o1777)
    (tmp / "log.jsonl").touch(mode=0o600)
    (tmp / "bin").mkdir()
    (tmp / "bin").chmod(0o755)
    python, standin = shlex.quote(_python()), shlex.quote(f"{inside}/standins/standin.py")
    for name in names:
        wrapper = tmp / "bin" / name
        wrapper.write_text(f'#!/bin/sh\nexec {python} -I {standin} {name} "$@"\n', encoding="utf-8")
        wrapper.chmod(0o755)
    if drop:
        for top in ("work", "home", "tmp", "log.jsonl"):
            os.lchown(tmp / top, NOBODY, NOBODY)
            for root, dirs, files in os.walk(tmp / top):
                for name in dirs + files:
                    os.lchown(os.path.join(root, name), NOBODY, NOBODY)


def _copy(src: Path, dst: Path) -> None:
    """src's tree into dst (new): folders, regular files (with modes and times) and symbolic links
    (as links); ``.git`` and ``__pycache__``, FIFOs, sockets and devices are left out."""
    dst.mkdir(mode=0o700)
    modes = [(str(dst), src.stat().st_mode)]
    stack = [(str(src), str(dst))]
    while stack:
        s, d = stack.pop()
        with os.scandir(s) as entries:
            for e in entries:
                target = os.path.join(d, e.name)
                if e.name in (".git", "__pycache__"):
                    continue
                if e.is_symlink():
                    os.symlink(os.readlink(e.path), target)
                elif e.is_dir(follow_symlinks=False):
                    os.mkdir(target, 0o700)
                    modes.append((target, e.stat(follow_symlinks=False).st_mode))
                    stack.append((e.path, target))
                elif e.is_file(follow_symlinks=False):
                    shutil.copy2(e.path, target, follow_symlinks=False)
    for path, mode in reversed(modes):  # after the contents: a read-only folder is filled first
        os.chmod(path, stat.S_IMODE(mode))
