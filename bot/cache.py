"""benchbot's persistent cache: small files in the user cache directory, by content key.

Where: ``$BENCHBOT_CACHE_DIR`` when set, else the platform's user cache directory
(``platformdirs``: ``~/.cache/benchbot`` on Linux). ``--no-cache`` (or
``BENCHBOT_NO_CACHE=1``) turns it off for a run; ``benchbot cache clear`` empties it and
``benchbot cache info`` says where it is and how large.

Entries are written to a temporary file in the same folder and renamed into place, so
concurrent processes never see half an entry (the last writer of a key wins; both wrote
the same bytes). The folder is input like any other: who may have written it decides what
is read (``bot.cachetrust``). Each entry starts with a header holding an HMAC of its kind,
key and payload under a key from ``BENCHBOT_CACHE_KEY`` (required in CI: without it the
folder is neither read nor written there), or, on a developer's own folder without a key, a
SHA-256 of the same. An entry that does not verify is a miss (and removed), never data, and
so is anything that is not a regular file (a link is not followed, a FIFO not waited on) or is
larger than ``MAX_ENTRY_BYTES``; what verifies is decoded as JSON within budgets
(``bot.cachejson``), never executed. The folder is kept under
``MAX_BYTES``: a process's first write walks the folder for its size, later writes add
their bytes to that figure, and the folder is walked again (pruned) only when the figure
passes ``MAX_BYTES`` (a cold lint of a large repo writes thousands of entries: a walk every
few dozen of them was a quarter of it). The least recently used entries go (a hit touches
its entry). Other processes' writes are seen at the next walk: the bound is kept within what
the processes running at once write between two walks. A cache that cannot be
written (read-only home, full disk) is silently a cache that misses: the lint never fails
because of it.

What is cached (callers own their keys, which must cover every input), all of it data:
- ``eval``: launcher evaluations (``bot.repo.cache.evalcache``); ``syntax`` and ``needs``: a
  script's syntax check and the variables it needs, by its text (``bot.repo.files.parsed``);
  ``recipe``: a recipe's containers (``bot.repo.load.recipefile``); ``envs``: the envs the
  workflows hand the launchers (``bot.repo.cache.envcache``); ``lint``: a whole lint's findings,
  by tree content and configuration (``bot.lintcache``).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import stat
import threading
from functools import lru_cache
from importlib.resources import files as resource_files
from pathlib import Path
from typing import Any

import platformdirs

from bot import cachejson, cachetrust

MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # a file larger than any entry benchbot writes is not read
# a planted link or FIFO: refused, never followed or waited on
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_KEY = re.compile(r"[0-9a-f]{16,128}\Z")
# an entry's folder: the first hex digit of its key (16 folders a kind: few to make, small to list)
FANOUT = 1
_KINDS = re.compile(r"[a-z][a-z0-9-]{0,31}\Z")
_disabled = False
_lock = threading.Lock()
_known: dict[Path, int] = {}  # folder -> its bytes at this process's last walk, plus what it wrote since


def disable(off: bool = True) -> None:
    """``--no-cache``: every lookup misses and nothing is written (this process)."""
    global _disabled
    _disabled = off


def enabled() -> bool:
    return not _disabled and os.environ.get("BENCHBOT_NO_CACHE", "") in ("", "0")


def root() -> Path:
    env = os.environ.get("BENCHBOT_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("benchbot", appauthor=False))


@lru_cache(maxsize=1)
def code_hash() -> str:
    """The SHA-256 of benchbot's own files (its code and data): in every key, so that an
    entry made by other code (another version, an edited checkout) is never used. The
    schemas are data of the package (``bot._schemas``) that an editable install keeps
    outside ``bot/`` (the top-level ``schemas/``): they are hashed wherever they are."""
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parent
    for p in sorted(pkg.rglob("*")):
        if p.suffix in (".py", ".json") and p.is_file():
            h.update(str(p.relative_to(pkg)).encode() + b"\0")
            h.update(p.read_bytes())
    schemas = Path(str(resource_files("bot._schemas")))
    if not schemas.resolve().is_relative_to(pkg):  # installed inside bot/: hashed above
        for p in sorted(schemas.glob("*.json")):
            h.update(b"_schemas/" + p.name.encode() + b"\0")
            h.update(p.read_bytes())
    return h.hexdigest()


def key(*parts: str | bytes) -> str:
    """A key from its inputs (benchbot's ``code_hash`` always among them)."""
    h = hashlib.sha256(code_hash().encode())
    for p in parts:
        b = p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


def _path(kind: str, k: str, base: Path | None = None) -> Path:
    if not _KINDS.match(kind) or not _KEY.match(k):
        raise ValueError(f"bad cache key {kind}/{k}")
    return (root() if base is None else base) / kind / k[:FANOUT] / k


def persistent() -> bool:
    """Whether this process reads and writes the cache folder (on, and trusted: see
    ``bot.cachetrust``). Off, each process still shares its own work in memory."""
    return enabled() and _trusted(cachetrust.current(), root())


def _trusted(trust: cachetrust.Trust, base: Path) -> bool:
    """Whether ``trust`` allows using the folder ``base``."""
    return trust.usable and (trust.sealed or cachetrust.folder_is_private(base))


def get(kind: str, k: str) -> bytes | None:
    """The payload kept under ``kind``/``k``, when it verifies (see the module's docstring)."""
    if not enabled():
        return None
    base = root()
    path = _path(kind, k, base)
    trust = cachetrust.current()
    if not _trusted(trust, base):
        return None
    data = _read(path)
    if data is None:
        return None
    head, sep, payload = data.partition(b"\n")
    if not sep or not cachetrust.verify(trust, kind, k, head, payload):
        try:
            path.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return payload


def get_json(kind: str, k: str, max_bytes: int = cachejson.MAX_BYTES, max_depth: int = cachejson.MAX_DEPTH) -> Any:
    """The JSON value kept under ``kind``/``k`` (``bot.cachejson``'s budgets); None on a miss.
    A value that is refused is a miss too: the caller checks the shape it relies on."""
    payload = get(kind, k)
    if payload is None:
        return None
    try:
        return cachejson.loads(payload, max_bytes=max_bytes, max_depth=max_depth)
    except cachejson.Refused:
        return None


def _read(path: Path) -> bytes | None:
    """The bytes of a regular file of at most ``MAX_ENTRY_BYTES``; None for anything else
    (missing, a link, a FIFO, a folder, too large)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        chunks = []
        left = st.st_size + 1  # one byte more than it says: a file that grew meanwhile then fails to verify
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= MAX_ENTRY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def put(kind: str, k: str, payload: bytes) -> None:
    if not enabled():
        return
    base = root()
    path = _path(kind, k, base)
    trust = cachetrust.current()
    if not _trusted(trust, base):
        return
    data = cachetrust.seal(trust, kind, k, payload) + b"\n" + payload
    if not _write(base, path, data):
        return
    with _lock:
        now = _known.get(base)
        due = now is None or now + len(data) > MAX_BYTES
        if now is not None and not due:
            _known[base] = now + len(data)  # a rewritten key counts twice: a walk comes early, never late
    if due:
        prune(MAX_BYTES)


_folders: set[Path] = set()  # entry folders this process made or found (a cold lint writes into hundreds)
_serial = itertools.count()


def _write(base: Path, path: Path, data: bytes) -> bool:
    """Write one entry: a temporary file of this process in the entry's folder, renamed into
    place. A cold lint writes about a thousand entries, so this makes the fewest system calls
    it can: a folder is made once (then remembered), a temporary name is this process's own
    (``O_EXCL`` still refuses one that exists). False when it could not be written."""
    folder = path.parent
    for _ in range(3):
        if folder not in _folders:
            try:
                try:
                    folder.mkdir(exist_ok=True)
                except FileNotFoundError:  # the first entry of its kind
                    base.mkdir(mode=0o700, parents=True, exist_ok=True)  # the cache's own 0700
                    folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                return False
            _folders.add(folder)
        tmp = folder / f".tmp-{os.getpid()}-{threading.get_ident()}-{next(_serial)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileNotFoundError:  # the folder went (``cache clear`` meanwhile): made again
            _folders.discard(folder)
            continue
        except FileExistsError:  # left by a process that had this pid: the next name
            continue
        except OSError:
            return False
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        return True
    return False


def _entries() -> list[tuple[float, int, Path]]:
    out: list[tuple[float, int, Path]] = []
    base = root()
    if not base.is_dir():
        return out
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            p = Path(dirpath) / name
            try:
                st = p.stat()
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, p))
    return out


def size() -> tuple[int, int]:
    """(entries, bytes) in the cache folder."""
    entries = _entries()
    return len(entries), sum(s for _, s, _ in entries)


def prune(max_bytes: int) -> int:
    """Remove least recently used entries until the folder holds at most ``max_bytes``."""
    with _lock:
        entries = sorted(_entries())
        total = sum(s for _, s, _ in entries)
        removed = 0
        for _, s, p in entries:
            if total <= max_bytes:
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= s
            removed += 1
        _known[root()] = total
        return removed


def clear() -> int:
    """Remove every entry; the number removed."""
    return prune(-1)
