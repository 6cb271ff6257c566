"""BrowserGym's fixtures: its own virtualenv's Python (made by the set-up, never here) and one driver
process per module (tests/support/browsergym.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from susbench.browsergym import environment
from tests.support.browsergym import Driver


@pytest.fixture(scope="session")
def browsergym_python() -> Path:
    return environment.installed_python()


@pytest.fixture(scope="module")
def browsergym_driver(browsergym_python: Path) -> Iterator[Driver]:
    driver = Driver(browsergym_python)
    yield driver
    driver.stop()
