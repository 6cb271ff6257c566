"""The suite's two tiers and how `make test` spreads it over processes.

`make check` passes `--fast-tier`: every test not marked `e2e` or `container`, with Chromium, Xvfb,
xdotool, x11vnc and the container engines replaced by stand-ins that fail, naming the missing mark,
so a test that starts one without its mark fails loudly instead of slowing the inner loop.

`make test` runs pytest-xdist with the scheduler below: a module goes to one worker whole, so its
module fixtures are built once, and the container modules (tests/container/) go to one worker
together: the warm container and the image are made in one process, and two containers never
start at once on a small machine. The modules tests/data/work_units.yaml names `spread` have no
module fixture and are long: their tests are handed out one by one, so no worker holds one of them
to the end. Work units are handed out longest first, by the seconds of the last profile
(tests/data/module_seconds.yaml, written by `python -m tools.durations LOG --write`: a spread
module's tests each with their own seconds), so the run does not end waiting on one worker's long
unit; a unit the profile does not know counts as an average one.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
import yaml
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

from tests.support.work_units import MODULE_SECONDS, work_unit_key

SLOW_MARKS = ("e2e", "container")
CONTAINER_FOLDER = "tests/container/"
SHARED_CONTAINER = "container tests"
GUARDED = ("chromium", "chromium-browser", "google-chrome", "Xvfb", "xdotool", "x11vnc", "docker", "podman")
GUARD_EXIT = 97
GUARD_SCRIPT = """#!/bin/sh
echo "make check (--fast-tier) runs no browser, container or X server, yet a test started" \\
  "$(basename "$0"): mark that test @pytest.mark.e2e (or container)" >&2
exit {code}
"""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast-tier",
        action="store_true",
        help="only tests needing no browser, container or X server; any that starts one fails",
    )


def _install_guard() -> Path:
    """Stand-ins first on PATH (inherited by every subprocess) and as the configured Chromium."""
    folder = Path(tempfile.mkdtemp(prefix="susbench-fast-tier-"))
    for name in GUARDED:
        script = folder / name
        script.write_text(GUARD_SCRIPT.format(code=GUARD_EXIT), encoding="utf-8")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["SUSBENCH_CHROMIUM"] = str(folder / "chromium")
    os.environ["DOCKER_HOST"] = f"unix://{folder}/no-container-engine-in-the-fast-tier.sock"
    return folder


_GUARD = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--fast-tier"):
        config.stash[_GUARD] = _install_guard()
    # xdist would order the modules by their number of tests; ours keeps the collection's order,
    # which pytest_collection_modifyitems below makes longest first.
    config.option.loadscopereorder = False


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_GUARD, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def work_unit(nodeid: str) -> str:
    """What one worker runs whole: the test's module, all container modules together, or the test
    alone in a spread module."""
    unit = work_unit_key(nodeid)
    return SHARED_CONTAINER if unit.startswith(CONTAINER_FOLDER) else unit


class ModuleScheduling(LoadScopeScheduling):
    """Whole modules to workers, as they free up; the container modules as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)


def _longest_first(items: list[pytest.Item]) -> None:
    """Items ordered by their work unit's seconds in the last profile, longest first (stable)."""
    known = yaml.safe_load(MODULE_SECONDS.read_text(encoding="utf-8")) if MODULE_SECONDS.exists() else {}
    units: dict[str, float] = {}
    for key, seconds in (known or {}).items():
        units[work_unit(key)] = units.get(work_unit(key), 0.0) + float(seconds)
    average = sum(units.values()) / len(units) if units else 0.0

    def seconds(item: pytest.Item) -> float:
        return units.get(work_unit(item.nodeid), average)

    items.sort(key=lambda item: -seconds(item))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> ModuleScheduling:
    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--fast-tier"):
        _longest_first(items)
        return
    slow = [item for item in items if any(item.get_closest_marker(mark) for mark in SLOW_MARKS)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        chosen = set(slow)
        items[:] = [item for item in items if item not in chosen]
