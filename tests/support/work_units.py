"""What one worker of `make test` runs whole (a work unit), and the seconds each took in the last
profile (tests/data/module_seconds.yaml, written by `python -m tools.durations LOG --write`): read by
the scheduler (tests/support/tiers.py) and written by the profile's tool."""

from __future__ import annotations

from pathlib import Path

import yaml

DATA = Path(__file__).parents[1] / "data"
MODULE_SECONDS = DATA / "module_seconds.yaml"
WORK_UNITS = DATA / "work_units.yaml"
SPREAD = frozenset(yaml.safe_load(WORK_UNITS.read_text(encoding="utf-8"))["spread"])


def module_of(test: str) -> str:
    return test.split("::", 1)[0]


def work_unit_key(test: str) -> str:
    """A spread module's tests are timed one by one (a long one must start early); the others by module."""
    module = module_of(test)
    return test if module in SPREAD else module
