"""The launches of the entries: which server and client each (entry, point, launcher) starts,
read from the repo's facts with the serve sinks on (``gather``), for multinode hand-offs from
their recipes (``multinode``), the parallel sizes they run (``parallel``), and the speculative
view the spec rules judge (``specview``, ``specstatic``). Above ``bot.repo`` and ``bot.serve``
(the engine models, normalization and tables, which import no repo): facts only.
"""
