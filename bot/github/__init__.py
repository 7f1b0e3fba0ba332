"""Everything that talks to GitHub: one narrow port (:mod:`bot.github.port`), one PyGithub
adapter (:mod:`bot.github.adapter`), event routing (:mod:`bot.github.event`) and the pure
planning of reviews and summary comments (:mod:`bot.github.review`).

The GitHub layer never analyses: it runs :func:`bot.lint.lint` and turns findings into
comments.
"""
