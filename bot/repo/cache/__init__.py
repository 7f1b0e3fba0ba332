"""The persistent caches of a lint's work, as stores the gatherers call (keyed get and put):
launcher and script evaluations (``evalcache``), rendered launcher envs (``envcache``). They take
a ``bot.repo.files.host.Host``, never Facts. May import ``bot.repo.files``.
"""
