"""The language both front-ends produce and the evaluator reads: the IR (``nodes``), partially
known values (``values``, with ``stars`` for text-and-``*`` globs), word helpers shared by the
front-ends (``words``), the nesting limit and iterative walks (``nesting``), and the cheap
``__init__`` of the frozen records made by the hundred thousand (``frozen``).
The bottom of ``bot.shell``: imports nothing of its other parts, nothing outside it.
"""
