"""tests/conftest.py refuses test ids too long for an environment string (PYTEST_CURRENT_TEST holds the
id, one string is at most 128 KiB): a pytest run of its own, on a test file written here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import MAX_NODEID, ROOT


def _collect(tmp_path: Path, params: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_collection_modifyitems, "
                                          "pytest_make_parametrize_id\n")
    (tmp_path / "test_blob.py").write_text(f"import pytest\n\n\n@pytest.mark.parametrize('blob', {params})\n"
                                           "def test_blob(blob):\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_long_generated_id_fails_collection_on_every_pytest(tmp_path: Path) -> None:
    """pytest >= 9.2 would shorten this id to blob0 by itself; the conftest spells it out as older ones do."""
    proc = _collect(tmp_path, f"[b'\\x00' * {MAX_NODEID}, pytest.param(b'y' * 1000, id='short')]")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"1 test id(s) over {MAX_NODEID} characters" in proc.stderr
    assert "test_blob.py::test_blob[\\x00\\x00" in proc.stderr and "give these cases a short explicit id" in proc.stderr


def test_explicit_and_short_ids_pass(tmp_path: Path) -> None:
    proc = _collect(tmp_path, "['a' * 100, pytest.param(b'y' * 1000, id='short')]")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_blob.py::test_blob[" + "a" * 100 + "]" in proc.stdout and "test_blob[short]" in proc.stdout
