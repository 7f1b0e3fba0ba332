"""Where a node of the map links: a GitHub blob URL at the commit when the checkout's remote
``origin`` is on GitHub, else the file's path relative to the page.

The remote and the commit are read as text from the checkout's ``.git`` (its ``config``, and
``bot.recipes.gitrev`` for the commit): the folder is input, so no git command is run on it.
Only the owner and the repository name are taken from the remote's URL (never credentials).
"""

from __future__ import annotations

import os
import re
import stat
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# path, line (0: the whole file) -> the link target, or None for no link
Link = Callable[[str, int], str | None]

_CONFIG_MAX = 256 << 10
_SECTION = re.compile(r'\s*\[\s*remote\s+"origin"\s*\]\s*(?:[#;].*)?\Z', re.I)
_ANY_SECTION = re.compile(r"\s*\[")
_URL = re.compile(r"\s*url\s*=\s*(.*?)\s*(?:[#;].*)?\Z", re.I)
_OWNER = r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))"
_NAME = r"(?P<name>[A-Za-z0-9._-]{1,100}?)"
_GITHUB = [
    re.compile(rf"(?:https?|git|ssh)://(?:[^@/]*@)?github\.com(?::\d+)?/{_OWNER}/{_NAME}(?:\.git)?/?\Z", re.I),
    re.compile(rf"(?:[A-Za-z0-9._-]+@)?github\.com:{_OWNER}/{_NAME}(?:\.git)?/?\Z", re.I),
]


@dataclass(frozen=True)
class Remote:
    """A GitHub repository and the commit files are linked at; ``prefix``: the benchmark repo's
    folder inside the git repository (``examples/seed/``, or "" at its top)."""

    owner: str
    name: str
    commit: str
    prefix: str = ""

    def blob(self, path: str, line: int = 0) -> str:
        quoted = urllib.parse.quote(f"{self.prefix}{path}", safe="/")
        anchor = f"#L{line}" if line > 0 else ""
        return (f"https://github.com/{urllib.parse.quote(self.owner)}/{urllib.parse.quote(self.name)}"
                f"/blob/{self.commit}/{quoted}{anchor}")


def github_repo(url: str) -> tuple[str, str] | None:
    """(owner, name) of a GitHub remote URL (https, ssh or scp-like), else None."""
    for pattern in _GITHUB:
        m = pattern.match(url.strip())
        if m and m.group("name") not in (".", ".."):
            return m.group("owner"), m.group("name")
    return None


def _small_text(path: Path, limit: int = _CONFIG_MAX) -> str | None:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def git_top(start: str) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``.git`` (a folder or a file)."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _gitdirs(top: Path) -> list[Path]:
    """The checkout's git folder and, for a worktree, its common folder (where ``config`` is)."""
    dotgit = top / ".git"
    gitdir = dotgit
    if dotgit.is_file():
        text = _small_text(dotgit, 4096) or ""
        if not text.startswith("gitdir:"):
            return []
        gitdir = Path(text[len("gitdir:"):].strip())
        gitdir = gitdir if gitdir.is_absolute() else top / gitdir
    out = [gitdir]
    common = _small_text(gitdir / "commondir", 4096)
    if common and common.strip():
        out.append(gitdir / common.strip())
    return out


def origin_url(top: Path) -> str | None:
    """The URL of remote ``origin`` in the checkout's git config (read as text), or None."""
    for gitdir in reversed(_gitdirs(top)):
        text = _small_text(gitdir / "config")
        if text is None:
            continue
        inside = False
        for line in text.splitlines():
            if _ANY_SECTION.match(line):
                inside = bool(_SECTION.match(line))
                continue
            m = _URL.match(line) if inside else None
            if m:
                return m.group(1).strip('"')
    return None


def remote_of(path: str, commit: str | None = None, full_tree: bool = False) -> Remote | None:
    """The GitHub remote of the checkout ``path`` is in, at ``commit`` (default: the checkout's
    HEAD), or None when its origin is not on GitHub or the commit cannot be read.
    ``full_tree``: the map's paths are relative to the git repository's top (a ``--rev`` tree),
    not to ``path``."""
    from bot.recipes.gitrev import git_revision

    top = git_top(path)
    if top is None:
        return None
    url = origin_url(top)
    repo = github_repo(url) if url else None
    commit = commit or git_revision(top)
    if repo is None or commit is None:
        return None
    rel = os.path.relpath(Path(path).resolve(), top)
    prefix = "" if rel == "." or full_tree else rel.replace(os.sep, "/") + "/"
    return Remote(repo[0], repo[1], commit, prefix)


def linker(remote: Remote | None, root: str | None, page_dir: str) -> Link:
    """Links for the map: blob URLs on ``remote``; else each file's path relative to the page's
    folder (``page_dir``) when the files are in the work tree ``root``; else no link."""
    if remote is not None:
        return remote.blob
    if root is None:
        return lambda _path, _line: None
    base = os.path.relpath(os.path.abspath(root), os.path.abspath(page_dir))

    def relative(path: str, _line: int) -> str | None:
        rel = path if base == "." else f"{base.replace(os.sep, '/')}/{path}"
        return urllib.parse.quote(rel, safe="/")

    return relative
