"""Where the outside tools some tests drive live (pywb, py-wacz, Browser Use, ReplayWeb.page), in the
cache (~/.cache/susbench). `make tools` installs them (tools/install_tools.py), never a test: a test
whose tool is missing fails with a message naming `make tools`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import pytest

from susbench.agents import browser_use_env
from susbench.core.errors import SusbenchError
from susbench.core.paths import REPO_ROOT, cache_dir

INSTALL_TARGET = "make tools"

PYWB_SCRIPT = Path(REPO_ROOT) / "benchmarks" / "setup_pywb.sh"
PYWB_VENV = cache_dir() / "venvs" / "pywb"
WACZ_PACKAGE = "wacz==0.5.0"  # py-wacz 0.5.0 pins typer==0.11.1; we need typer>=0.12
WACZ_VENV = cache_dir() / "venvs" / WACZ_PACKAGE.replace("==", "-")
RWP_PACKAGE = "replaywebpage@2.4.6"  # AGPL-3.0-or-later; used as a tool, not shipped
RWP_FILES = ("ui.js", "sw.js")


def missing(tool: str, where: Path) -> NoReturn:
    """Fail the asking test: the tool belongs to the set-up, which has not installed it."""
    pytest.fail(f"{tool} is not installed at {where}: run `{INSTALL_TARGET}` (part of `make test`)")


def replaywebpage_dir() -> Path:
    return cache_dir() / RWP_PACKAGE.replace("@", "-")


def pywb_venv() -> Path:
    if not (PYWB_VENV / "bin" / "wayback").is_file():
        missing("pywb", PYWB_VENV)
    return PYWB_VENV


def wacz_venv() -> Path:
    if not (WACZ_VENV / "bin" / "wacz").is_file():
        missing("py-wacz", WACZ_VENV)
    return WACZ_VENV


def browser_use_python() -> Path:
    try:
        return browser_use_env.installed_python()
    except SusbenchError:
        missing(browser_use_env.REQUIREMENT, browser_use_env.venv_dir())


def replaywebpage() -> Path:
    folder = replaywebpage_dir()
    if not all((folder / name).is_file() for name in RWP_FILES):
        missing("ReplayWeb.page", folder)
    return folder
