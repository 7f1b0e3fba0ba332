"""Word helpers shared by both shell front-ends."""

from __future__ import annotations

from bot.shell.ir import nodes as ir


def merge(parts: list[ir.Part]) -> list[ir.Part]:
    out: list[ir.Part] = []
    for p in parts:
        if isinstance(p, ir.Lit) and out and isinstance(out[-1], ir.Lit) and out[-1].quoted == p.quoted:
            out[-1] = ir.Lit(out[-1].text + p.text, p.quoted)
        else:
            out.append(p)
    return out


def unescape_heredoc(text: str) -> str:
    """The text of an unquoted here-document: a backslash quotes only ``$``, `` ` ``, ``\\``
    and a newline (as in double quotes, without ``"``)."""
    return _unescape(text, "$`\\\n")


def _unescape(text: str, escapable: str | None) -> str:
    """Drop the backslash before an escapable character (any, when None); a
    backslash-newline is a line continuation and disappears whole."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and (escapable is None or text[i + 1] in escapable):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_unquoted(text: str) -> str:
    return _unescape(text, None)


def unescape_backquoted(text: str) -> str:
    """The body of `` `...` ``: a backslash quotes only ``$``, `` ` `` and ``\\``."""
    return _unescape(text, "$`\\")


def unescape_dq(text: str) -> str:
    """Inside double quotes only ``$ ` " \\`` and newline are escapable."""
    return _unescape(text, '$`"\\\n')


def ansi_c(text: str) -> str:
    table = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "r": "\r", "a": "\a", "e": "\x1b"}
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in table:
            out.append(table[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
