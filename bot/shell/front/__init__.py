"""The two front-ends: shell source bytes -> the IR (``bot.shell.ir.nodes``).

``parse`` (tree-sitter-bash, the primary one: ``parse_tree`` the parser and its syntax errors,
``parse_cmds``, ``parse_cond``, ``parse_words`` the conversion) and ``bashlex_front`` (the
second, where the tree-sitter wheel is missing: ``bashlex_convert``, ``bashlex_cmds``,
``bashlex_cond``, ``bashlex_words``); ``same`` compares two parses (the differential test).
May import ``bot.shell.ir``; nothing of the evaluator, and nothing outside ``bot.shell``.
"""
