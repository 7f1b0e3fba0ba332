"""Partial evaluation of a shell script under a concrete environment.

The evaluator walks the IR with a set of *paths* (``State``). Everything it can know
(assignments, parameter expansions, ``[[ ]]`` tests, ``-f`` checks against the repo tree,
``$(...)`` of ``printf``/``echo``, functions, ``source``) it computes; everything else
(the output of ``salloc``, the exit status of ``docker``) is ``Unk``. Where a condition
is unknown the path forks; the number of live paths is bounded, and when the bound is
hit, paths are merged (differing variables become unknown) and ``bound_hit`` is set.

It never runs anything. What it records are *events*: scripts dispatched
(``bash X``, ``exec bash X``, ``$(bash X)``, ``bash -c "... X ..."``, ``srun ... X``)
and files sourced.
"""

from __future__ import annotations

from bot.shell.assign import Assigns
from bot.shell.control import Control
from bot.shell.execute import Execute
from bot.shell.expand import Expand
from bot.shell.options import (  # noqa: F401 - the public names, importable from here
    DEFAULT_WRAPPERS,
    PREFIX_COMMANDS,
    SHELLS,
    FileSystem,
    Options,
    PathResult,
    Result,
    Sink,
)
from bot.shell.reads import Handoffs
from bot.shell.serving import Serving
from bot.shell.state import Dispatch, Event, Exited, Handed, Loc, Ran, Read, Served, Sourced, State, Var, Wrote  # noqa: F401
from bot.shell.values import Unk, Val  # noqa: F401


class Evaluator(Control, Execute, Handoffs, Serving, Assigns, Expand):
    """The partial evaluator: ``Evaluator(fs, options).run(script, env) -> Result``.

    Its parts: :mod:`bot.shell.core` (state, budget, statements), :mod:`bot.shell.assign`, :mod:`bot.shell.control`,
    :mod:`bot.shell.execute` (commands), :mod:`bot.shell.sinks` (what commands run),
    :mod:`bot.shell.serving` (servers and clients, with ``Options.sinks``), :mod:`bot.shell.reads`
    (``set -u``, reads of unset variables, env checks, ``Options.handoffs``) and
    :mod:`bot.shell.expand` (words and tests).
    """


__all__ = ["DEFAULT_WRAPPERS", "PREFIX_COMMANDS", "SHELLS", "Sink",
           "Dispatch", "Event", "Evaluator", "Exited", "FileSystem", "Handed", "Loc", "Options", "PathResult", "Ran",
           "Read", "Result", "Served", "Sourced", "State", "Unk", "Val", "Var", "Wrote"]
