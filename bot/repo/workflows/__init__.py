"""The workflow model: GitHub Actions workflows parsed (``ghparse``, ``ghnodes``), their
``${{ }}`` expressions (``ghexpr``), the calls that reach a runner launcher (``wfcalls``,
``workflows``). May import ``bot.repo.load`` and ``bot.repo.files``.
"""
