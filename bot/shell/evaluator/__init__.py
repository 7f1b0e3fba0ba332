"""The partial evaluator: a script's IR under a concrete environment -> what it dispatches,
sources, reads, serves (``evaluate.Evaluator``). Its mixins (``core``, ``control``, ``execute``,
``expand``, ``assign``, ``builtins``, ``arith``, ``reads``, ``sinks``, ``serving``, ``written``),
its state (``state``, ``varmap``), its budget (``budget``, ``steps``), options and results
(``options``), word operations (``wordops``), and dispatch slicing (``slicing``, ``quiet``: the
statements it may skip). May import ``bot.shell.ir``; nothing of the front-ends or outside
``bot.shell``.
"""
