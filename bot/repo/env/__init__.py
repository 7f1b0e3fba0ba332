"""What a launcher starts with: the profile of the repo's conventions (``profile``), env
templates rendered for an (entry, point, node) (``envrender``), the workflow path that passes
them (``wfenv``), the launcher env of each run (``launchenv``), the points evaluated per group
(``points``). May import ``bot.repo.workflows``, ``bot.repo.cache``, ``bot.repo.load`` and
``bot.repo.files``.
"""
