"""Every package under bot/ ships: pyproject lists packages explicitly (schemas/ is mapped in)."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def test_every_bot_package_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bot").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert "bot._schemas" in listed
