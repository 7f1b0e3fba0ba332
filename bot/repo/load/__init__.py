"""Reading the repository's files into typed records with positions: YAML with positions and
budgets (``yamlfile``), master configs and runners.yaml (``configs``, with ``recover`` for a file
that does not load whole), JSON Schemas and their generated fast validators (``schema``,
``_fastschema_*``), the speculator policy (``speculators``), the performance changelog
(``changelog``), external tools' recipe files (``recipefile``). May import ``bot.repo.files``.
"""
