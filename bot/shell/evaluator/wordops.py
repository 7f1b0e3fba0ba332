"""Word and statement helpers of the evaluator: which commands are inert, field
splitting, path normalization, and re-basing the positions of a parsed string."""

from __future__ import annotations

import posixpath
import re

from bot.shell.ir import nodes as ir
from bot.shell.ir.values import Part, Unk, Val, concat, known, leading, lit

# Utilities that never run a script of the repo (wrappers such as srun, docker, env,
# timeout are *not* here: they can).
INERT_COMMANDS = frozenset({
    "echo", "printf", "mkdir", "rm", "rmdir", "cp", "mv", "chmod", "chown", "touch", "sleep", "ls", "cat", "tee",
    "grep", "egrep", "sed", "awk", "tar", "gzip", "scancel", "squeue", "sinfo", "sacct", "scontrol", "sbcast",
    "nvidia-smi", "rocm-smi", "amd-smi", "python3", "python", "pip", "curl", "wget", "ln", "find", "head", "tail",
    "wc", "sort", "uniq", "cut", "tr", "jq", "yq", "date", "pkill", "kill", "sync", "df", "du", "hostname",
    "whoami", "id", "stat", "unsquashfs", "git", "rsync", "scp", "mount", "umount", "xxd", "md5sum", "sha256sum",
    "base64", "diff", "cmp", "nproc", "free", "uname", "ps", "pgrep", "lsof", "nc", "ping", "which", "type",
    "hf", "huggingface-cli", "gh", "seq", "paste", "column", "fold", "rev", "zcat", "unzip", "logger",
})
_INERT_CACHE: dict[int, tuple[ir.Command, bool]] = {}
# Parameters bash or the runner sets: never "unset" reads.
_SPECIAL = frozenset({
    "@", "*", "#", "?", "$", "!", "-", "0", "_", "FUNCNAME", "LINENO", "RANDOM", "SECONDS", "BASHPID",
    "EPOCHSECONDS", "EPOCHREALTIME", "PWD", "OLDPWD", "PPID", "UID", "EUID", "HOSTNAME", "HOSTTYPE", "OSTYPE",
    "MACHTYPE", "IFS", "PS4", "SHLVL", "GROUPS", "DIRSTACK", "PIPESTATUS", "OPTIND", "OPTARG", "SHELLOPTS",
    "BASHOPTS", "SRANDOM", "HISTCMD",
})


def special(name: str) -> bool:
    return name in _SPECIAL or name.isdigit() or name.startswith("BASH")


def _inert(cmd: ir.Command) -> bool:
    hit = _INERT_CACHE.get(id(cmd))
    if hit is not None and hit[0] is cmd:
        return hit[1]
    name = cmd.words[0].literal()
    value = name in INERT_COMMANDS and not any(_has_effect(w) for w in cmd.words)
    if len(_INERT_CACHE) > 200_000:
        _INERT_CACHE.clear()
    _INERT_CACHE[id(cmd)] = (cmd, value)
    return value


CmdInfo = tuple[str | None, bool, tuple[bool, ...] | None, tuple[bool, ...]]
_CMD_CACHE: dict[int, tuple[ir.Command, CmdInfo]] = {}


def cmd_info(cmd: ir.Command) -> CmdInfo:
    """What the evaluator asks of a command's text on every run, worked out once per command:
    its first word's literal text (None: not a literal; no words: None), whether it redirects
    stdout (``_redirects_stdout``), per word whether ``_split_fields`` splits it (None: no
    word is split), and per assignment whether its value has a ``$(...)``."""
    hit = _CMD_CACHE.get(id(cmd))
    if hit is not None and hit[0] is cmd:
        return hit[1]
    split = tuple(_splits(w) for w in cmd.words)
    info = (cmd.words[0].literal() if cmd.words else None, _redirects_stdout(cmd.redirects),
            split if any(split) else None,
            tuple(any(isinstance(p, ir.CmdSub) for p in (a.value.parts if a.value else ())) for a in cmd.assigns))
    if len(_CMD_CACHE) > 200_000:
        _CMD_CACHE.clear()
    _CMD_CACHE[id(cmd)] = (cmd, info)
    return info


def _splits(w: ir.Word) -> bool:
    """Whether ``_split_fields`` splits the word's value (an unquoted expansion)."""
    return any(isinstance(p, (ir.Param, ir.CmdSub)) and not getattr(p, "quoted", False) for p in w.parts)


def _has_effect(w: ir.Word) -> bool:
    """A word whose expansion can run something or change the state: ``$(...)``,
    ``${X:=d}``, ``${X:?msg}``."""
    for p in w.parts:
        if isinstance(p, ir.CmdSub):
            return True
        if isinstance(p, ir.Param):
            if p.op in ("=", ":=", "?", ":?"):
                return True
            if (p.arg is not None and _has_effect(p.arg)) or (p.arg2 is not None and _has_effect(p.arg2)):
                return True
    return False


def _describe(stmt: ir.Stmt) -> str:
    """A short name for a statement in a budget message: its command, or its kind."""
    if isinstance(stmt, ir.Command):
        if stmt.words:
            name = stmt.words[0].literal()
            return name[:40] if name else "command"
        return stmt.assigns[0].name + "=..." if stmt.assigns else "command"
    if isinstance(stmt, ir.FuncDef):
        return f"{stmt.name}()"
    if isinstance(stmt, ir.Opaque):
        return stmt.kind
    return type(stmt).__name__.lower().rstrip("_")


def _strip_trailing_newlines(v: Val) -> Val:
    if v and isinstance(v[-1], str):
        tail = v[-1].rstrip("\n")
        return v[:-1] + ((tail,) if tail else ())
    return v


def _norm(v: Val) -> Val:
    k = known(v)
    if k is not None:
        n = posixpath.normpath(k) if k else k
        return lit("" if n == "." else n)
    head = leading(v)
    if head.startswith("./"):
        head = head[2:]
        while head.startswith("./"):
            head = head[2:]
        return concat(lit(head), v[1:])
    if "/./" in head or "//" in head:
        head = re.sub(r"/(\./)+", "/", head).replace("//", "/")
        return concat(lit(head), v[1:])
    return v


def _looks_like_script(v: Val) -> bool:
    if not v:
        return False
    last = v[-1]
    if not isinstance(last, str):
        return False
    text = "".join(p for p in v if isinstance(p, str))
    return last.endswith(".sh") and ":" not in text and not leading(v).startswith("-")


def _cmd_name(argv: list[Val]) -> str:
    k = known(argv[0]) if argv else None
    return k or "command"


def _redirects_stdout(redirects: tuple[ir.Redirect, ...]) -> bool:
    for r in redirects:
        if r.op in (">", ">>", "&>", "&>>", ">|") and r.fd in (None, 1):
            return True
        if r.op == ">&" and r.fd in (None, 1):
            return True
    return False


def fields(v: Val) -> list[Val]:
    """``v`` split at the blanks of its known text, as an unquoted ``$X`` splits; an unknown
    part stays inside the field it touches (what it holds is not known, its blanks neither)."""
    out: list[Val] = []
    cur: list[Part] = []
    for p in v:
        if isinstance(p, Unk):
            cur.append(p)
            continue
        pieces = re.split(r"[ \t\n]+", p)
        for i, piece in enumerate(pieces):
            if i:
                if cur:
                    out.append(concat(tuple(cur)))
                cur = []
            if piece:
                cur.append(piece)
    if cur:
        out.append(concat(tuple(cur)))
    return out


def _split_fields(argv: list[Val], words: tuple[ir.Word, ...]) -> tuple[list[Val], list[int]]:
    """Field splitting for unquoted expansions whose value is known (``$CMD`` arrays).

    Returns the fields and, for each, the index of the word it came from.
    """
    return _split_by(argv, [_splits(w) for w in words])


def _split_by(argv: list[Val], split: list[bool] | tuple[bool, ...] | None) -> tuple[list[Val], list[int]]:
    """``_split_fields`` with the words' ``_splits`` given (``cmd_info``; None: none is split)."""
    if split is None:
        return argv, list(range(len(argv)))
    out: list[Val] = []
    widx: list[int] = []
    for i, (v, s) in enumerate(zip(argv, split)):
        if s:
            k = known(v)
            if k is not None:
                fields = k.split()
                out.extend(lit(x) for x in fields)
                widx.extend([i] * len(fields))
                continue
            if not v:
                continue
        out.append(v)
        widx.append(i)
    return out, widx


def _word_at(cmd: ir.Command, idx: int, widx: list[int] | None) -> ir.Word | None:
    i = widx[idx] if widx is not None and idx < len(widx) else idx
    return cmd.words[i] if i < len(cmd.words) else None


def _word_is_quoted(w: ir.Word) -> bool:
    return all(getattr(p, "quoted", False) for p in w.parts)


def _join_words(vals: list[Val]) -> Val:
    parts: list[Val] = []
    for i, v in enumerate(vals):
        if i:
            parts.append(lit(" "))
        parts.append(v)
    return concat(*parts)


_SHIFT_CACHE: dict[tuple[int, int], tuple[tuple[ir.Stmt, ...], tuple[ir.Stmt, ...]]] = {}


def _shift_lines(body: tuple[ir.Stmt, ...], offset: int) -> tuple[ir.Stmt, ...]:
    """Re-base positions of a parsed string (``bash -c``, ``eval``) onto its file."""
    if offset <= 0:
        return body
    key = (id(body), offset)
    hit = _SHIFT_CACHE.get(key)
    if hit is not None and hit[0] is body:
        return hit[1]
    shifted = _shift(body, offset)
    if len(_SHIFT_CACHE) > 4096:
        _SHIFT_CACHE.clear()
    _SHIFT_CACHE[key] = (body, shifted)
    return shifted


def _shift(body: tuple[ir.Stmt, ...], offset: int) -> tuple[ir.Stmt, ...]:
    import dataclasses

    def fix(obj: object) -> object:
        if isinstance(obj, ir.Pos):
            return ir.Pos(obj.line + offset, obj.col, obj.end_line + offset, obj.end_col)
        if isinstance(obj, tuple):
            return tuple(fix(x) for x in obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.replace(obj, **{f.name: fix(getattr(obj, f.name))
                                               for f in dataclasses.fields(obj)})
        return obj

    return fix(body)  # type: ignore[return-value]
