"""``bot.shell.front.same``: two parses of a script are the same when their statements are, whatever
the comments and the layout; otherwise the head line of the first difference. Both front-ends."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.shell.front.bashlex_front import parse as bashlex_parse
from bot.shell.front.parse import parse as ts_parse
from bot.shell.front.same import UNKNOWN_LINE, first_difference
from bot.shell.ir import nodes as ir

BASE = """#!/usr/bin/env bash
# Kimi K2.5 on MI300X
set -euo pipefail
vllm serve "$MODEL" --tensor-parallel-size "$TP" \\
    --port 8888 > server.log 2>&1 &
if [ "$SPEC" = "mtp" ]; then
  ARGS="--speculative-config x"   # the draft model
fi
"""

Parse = Callable[[str, bytes], ir.Script]
FRONTS = [pytest.param(ts_parse, id="tree-sitter"), pytest.param(bashlex_parse, id="bashlex")]


def _diff(parse: Parse, old: str, new: str) -> int | None:
    a, b = parse("s.sh", old.encode()), parse("s.sh", new.encode())
    assert not a.errors and not b.errors
    return first_difference(a, b)


@pytest.mark.parametrize("parse", FRONTS)
@pytest.mark.parametrize("old, new", [
    pytest.param("# Kimi K2.5 on MI300X", "# Kimi K2.5 INT4 on MI300X (AMD)", id="comment-edited"),
    pytest.param("  # the draft model", "", id="trailing-comment-removed"),
    pytest.param("set -euo pipefail\n", "\n# strict mode\nset -euo pipefail\n\n", id="lines-around"),
    pytest.param('  ARGS="', '      ARGS="', id="indentation"),
    pytest.param('"$TP" \\\n    --port', '"$TP" --port', id="continuation-joined"),
    pytest.param("--port 8888 >", "--port   8888   >", id="spacing-between-words"),
])
def test_comments_and_layout_are_not_a_difference(parse: Parse, old: str, new: str) -> None:
    assert old in BASE
    assert _diff(parse, BASE, BASE.replace(old, new)) is None


@pytest.mark.parametrize("parse", FRONTS)
@pytest.mark.parametrize("old, new, line", [  # the line of the innermost node around the change
    ("--port 8888", "--port 8889", 5),  # the changed word's line, inside a statement starting at 4
    ('"--speculative-config x"', '"--speculative-config  x"', 7),  # spacing inside quotes is data
    ("#!/usr/bin/env bash", "#!/bin/sh", 1),  # the interpreter
])
def test_a_changed_statement_is_found_at_its_head_line(parse: Parse, old: str, new: str, line: int) -> None:
    assert old in BASE
    assert _diff(parse, BASE, BASE.replace(old, new)) == line


@pytest.mark.parametrize("parse", FRONTS)
def test_a_here_document_s_text_counts(parse: Parse) -> None:
    """Its spacing is data; bashlex keeps no here-document text: then the bytes decide."""
    doc = "cat <<EOF > conf.yaml\nmax_batch: 64\nEOF\n"
    assert _diff(parse, doc, doc) is None
    found = _diff(parse, doc, doc.replace("max_batch: 64", "max_batch:  64"))
    assert found == (2 if parse is ts_parse else UNKNOWN_LINE)


def test_added_and_removed_statements() -> None:
    assert _diff(ts_parse, BASE, BASE + "wait_for_server 8888\n") == 9
    assert _diff(ts_parse, BASE, BASE.replace("set -euo pipefail\n", "")) == 3  # the next statement, now at 3
    assert _diff(ts_parse, BASE + "wait_for_server 8888\n", BASE) is not None


def test_parse_errors_and_opaque_constructs_compare_by_bytes() -> None:
    broken = "if then fi (\n"
    a = ts_parse("s.sh", broken.encode())
    assert a.errors
    assert first_difference(a, ts_parse("s.sh", broken.encode())) is None
    assert first_difference(a, ts_parse("s.sh", ("# c\n" + broken).encode())) == UNKNOWN_LINE
    opaque = ir.Script("s.sh", (ir.Opaque("coproc", ir.Pos(1, 1, 1, 10, 0, 9)),), source=b"coproc x\n")
    same_text = ir.Script("s.sh", (ir.Opaque("coproc", ir.Pos(2, 1, 2, 10, 4, 13)),), source=b"# c\ncoproc x\n")
    other = ir.Script("s.sh", (ir.Opaque("coproc", ir.Pos(1, 1, 1, 10, 0, 9)),), source=b"coproc y\n")
    assert first_difference(opaque, same_text) is None
    assert first_difference(opaque, other) == 1
