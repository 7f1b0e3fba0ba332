"""Analyses over the IR that do not evaluate: what a benchmark script requires from its
environment, read from its text (``needs``). May import ``bot.shell.ir`` and
``bot.shell.evaluator``'s records; nothing outside ``bot.shell``.
"""
