"""Small builders shared by the serve tests."""

from __future__ import annotations

from bot.serve.model import File, Tok


def toks(line: str, path: str = "s.sh", line_no: int = 10) -> list[Tok]:
    """One token per whitespace-separated word, all on ``path:line_no``."""
    return [Tok(w, f"{path}:{line_no}") for w in line.split()]


def lined(*words: str, path: str = "s.sh") -> list[Tok]:
    """One token per argument, word i on line i + 1 (so sources are distinguishable)."""
    return [Tok(w, f"{path}:{i + 1}") for i, w in enumerate(words)]


def yaml_file(path: str, text: str, src: str = "s.sh:3") -> dict[str, File]:
    return {path: File(path, text, src)}
