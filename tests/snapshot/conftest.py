"""The snapshot tests' fixtures: Webrecorder's tools that read our archives, from the cache
(tests/support/outside_tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import outside_tools
from tests.support.wacz_tools import WaczTools


@pytest.fixture(scope="session")
def wacz_tools() -> WaczTools:
    return WaczTools(outside_tools.wacz_venv())


@pytest.fixture(scope="session")
def replaywebpage() -> Path:
    return outside_tools.replaywebpage()
