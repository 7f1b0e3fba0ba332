"""The repository's files: a tree behind one interface (``tree``: a work tree, an index; ``git``:
any revision, read with git, no checkout), what a cache asks of the facts it works for
(``host``), and the per-lint memo of parses and reads (``parsed``). The bottom of ``bot.repo``:
imports nothing of its other parts.
"""
