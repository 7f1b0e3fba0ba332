"""Server and benchmark-client commands, normalized to each engine's own canonical names.

``detect(words)`` finds the launch in a command line; ``normalize(engine, toks, files, env)``
(and ``normalize_client(toks)``) turn the arguments into a :class:`bot.serve.model.Command`.
Facts only: nothing here judges a command.
"""

from bot.serve.client import normalize_client
from bot.serve.engines import detect
from bot.serve.normalize import normalize

__all__ = ["detect", "normalize", "normalize_client"]
