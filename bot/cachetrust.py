"""Whom benchbot's persistent cache (``bot.cache``) trusts, and how its entries are sealed.

An entry's key is public (the content it was made from and benchbot's code hash), so whoever
can write the cache folder can put an entry under any key. What that folder is decides:

- **A key** (``BENCHBOT_CACHE_KEY``, at least ``MIN_KEY_CHARS`` characters, from a secret the
  cache never holds): every entry written carries an HMAC-SHA256, under a key derived from
  the secret, of its kind, its key and its payload; an entry is read only when its MAC
  verifies (``hmac.compare_digest``). An entry moved to another key, or made without the
  key, is a miss. Wherever the folder came from (a CI cache another job saved), only what a
  run holding the secret wrote is used.
- **CI without a key** (``CI`` or ``GITHUB_ACTIONS`` set, as every CI service does): nothing
  is read from the folder and nothing written; it may hold what a pull request's code saved
  (docs/security.md). Each process still shares its own work in memory.
- **A developer's folder without a key**: entries carry a SHA-256 of the same (a damaged
  entry is a miss), and the folder is used only when it is this user's and no other user can
  write to it (owned by the effective user; not writable by others, nor by a group other than
  the user's own): the same trust as the user's own files. ``bot.cache`` makes its folder
  ``0700``.

Everything is read from the environment when asked (each cache call), never at import time.
The secret and the key derived from it appear in no message, no ``repr`` and no entry.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

KEY_ENV = "BENCHBOT_CACHE_KEY"
MIN_KEY_CHARS = 32  # e.g. `openssl rand -hex 32` (64): short enough to guess offline it is not
_LABEL = b"benchbot-cache entry v2"


@dataclass(frozen=True)
class Trust:
    """What this process may do with the cache folder."""

    mac_key: bytes | None = field(default=None, repr=False)  # None: entries are checksummed, not sealed
    ci: bool = False
    short_key: bool = False  # a key was given but is too short to use (treated as none)

    @property
    def sealed(self) -> bool:
        return self.mac_key is not None

    @property
    def usable(self) -> bool:
        """Whether entries may be read and written at all (the folder check aside)."""
        return self.mac_key is not None or not self.ci

    def describe(self) -> str:
        """One line for ``benchbot cache info`` (never the key)."""
        if self.mac_key is not None:
            return "entries sealed and verified with BENCHBOT_CACHE_KEY (HMAC-SHA256)"
        why = f"{KEY_ENV} is shorter than {MIN_KEY_CHARS} characters and ignored; " if self.short_key else ""
        if self.ci:
            return f"{why}CI without {KEY_ENV}: the folder is neither read nor written"
        return f"{why}entries checksummed (SHA-256); a folder other users can write is not used"


def in_ci() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return os.environ.get("GITHUB_ACTIONS", "") == "true" or ci not in ("", "0", "false", "no")


@lru_cache(maxsize=4)
def _derive(secret: str) -> bytes:
    return hmac.new(secret.encode("utf-8", "surrogateescape"), _LABEL, hashlib.sha256).digest()


_last: list[tuple[tuple[str, str, str], Trust]] = []  # the environment last asked about, and its answer


def current() -> Trust:
    """The trust of this process now (the environment as it is; each cache call asks)."""
    env = os.environ
    seen = (env.get(KEY_ENV, ""), env.get("CI", ""), env.get("GITHUB_ACTIONS", ""))
    if _last and _last[0][0] == seen:
        return _last[0][1]
    secret = seen[0]
    ci = in_ci()
    trust = Trust(_derive(secret), ci) if len(secret) >= MIN_KEY_CHARS else Trust(None, ci, short_key=bool(secret))
    _last[:] = [(seen, trust)]
    return trust


def seal(trust: Trust, kind: str, k: str, payload: bytes) -> bytes:
    """The header line of an entry (without its newline)."""
    if trust.mac_key is not None:
        mac = hmac.new(trust.mac_key, _context(kind, k), hashlib.sha256)
        mac.update(payload)
        return b"benchbot-cache 2 hmac " + mac.hexdigest().encode()
    h = hashlib.sha256(_context(kind, k))
    h.update(payload)
    return b"benchbot-cache 2 sha256 " + h.hexdigest().encode()


def verify(trust: Trust, kind: str, k: str, head: bytes, payload: bytes) -> bool:
    """Whether ``head`` is the header this process would write for the entry: sealed with its
    key when it has one (an unsealed entry is refused), checksummed otherwise."""
    return hmac.compare_digest(head, seal(trust, kind, k, payload))


def _context(kind: str, k: str) -> bytes:
    """What a MAC binds besides the payload: an entry is valid under its own kind and key only."""
    return _LABEL + b"\0" + kind.encode() + b"\0" + k.encode() + b"\0"


_folders: dict[Path, bool] = {}


def folder_is_private(folder: Path) -> bool:
    """Whether only this user can write ``folder`` (True when it does not exist yet: it is
    made ``0700``). Asked once per folder in a process."""
    got = _folders.get(folder)
    if got is None:
        if not hasattr(os, "geteuid"):  # not POSIX: no owner to compare with
            return True
        try:
            st = folder.stat()
        except FileNotFoundError:
            return True  # not remembered: the next call sees what was made
        except OSError:
            got = False
        else:
            mode = st.st_mode
            got = stat.S_ISDIR(mode) and st.st_uid == os.geteuid() and not mode & stat.S_IWOTH and \
                not (mode & stat.S_IWGRP and st.st_gid != os.getegid())
        _folders[folder] = got
    return got
