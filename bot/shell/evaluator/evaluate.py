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

from bot.shell.evaluator.assign import Assigns
from bot.shell.evaluator.control import Control
from bot.shell.evaluator.execute import Execute
from bot.shell.evaluator.expand import Expand
from bot.shell.evaluator.options import (  # noqa: F401 - the public names, importable from here
    DEFAULT_WRAPPERS,
    PREFIX_COMMANDS,
    SHELLS,
    FileSystem,
    Options,
    PathResult,
    Result,
    Sink,
)
from bot.shell.evaluator.reads import Handoffs
from bot.shell.evaluator.serving import Serving
from bot.shell.evaluator.state import (  # noqa: F401
    Dispatch,
    Event,
    Exited,
    Handed,
    Loc,
    Ran,
    Read,
    Served,
    Sourced,
    State,
    Var,
    Wrote,
)
from bot.shell.ir.values import Unk, Val  # noqa: F401


class Evaluator(Control, Execute, Handoffs, Serving, Assigns, Expand):
    """The partial evaluator: ``Evaluator(fs, options).run(script, env) -> Result``.

    Its parts, all in ``bot.shell.evaluator``: ``core`` (state, budget, statements),
    ``assign``, ``control``, ``execute`` (commands), ``sinks`` (what commands run), ``serving``
    (servers and clients, with ``Options.sinks``), ``reads`` (``set -u``, reads of unset
    variables, env checks, ``Options.handoffs``) and ``expand`` (words and tests).
    """


__all__ = ["DEFAULT_WRAPPERS", "PREFIX_COMMANDS", "SHELLS", "Sink",
           "Dispatch", "Event", "Evaluator", "Exited", "FileSystem", "Handed", "Loc", "Options", "PathResult", "Ran",
           "Read", "Result", "Served", "Sourced", "State", "Unk", "Val", "Var", "Wrote"]
