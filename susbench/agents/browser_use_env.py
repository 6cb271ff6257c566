"""Browser Use's own virtualenv, beside the main install rather than inside it.

Browser Use 0.13 pins exact versions of pydantic, rich, click, httpx, aiohttp, anyio and more, and
resolves openai 3.x, whose httpx stack needs h11 0.16 where mitmproxy 11 needs h11 <= 0.14; as an
extra it would pin the whole project to its choices and add about a hundred packages. So it lives
in a virtualenv of its own under the cache folder, made once from PyPI (`susbench agents
install-browser-use`, or the tests' session fixture), and runs as a subprocess
(`browser_use_runner.py`) speaking JSON lines.
"""

from __future__ import annotations

import fcntl
import shutil
import venv
from pathlib import Path

from susbench.core.errors import SusbenchError
from susbench.core.paths import cache_dir
from susbench.core.venvs import pip_install, python_in

REQUIREMENT = "browser-use==0.13.14"
READY_MARK = ".susbench-ready"


def venv_dir() -> Path:
    return cache_dir() / "venvs" / REQUIREMENT.replace("==", "-")


def installed_python(folder: Path | None = None) -> Path:
    """The interpreter of a ready Browser Use virtualenv, or one error saying how to make it."""
    folder = folder or venv_dir()
    mark = folder / READY_MARK
    if mark.is_file() and mark.read_text(encoding="utf-8").strip() == REQUIREMENT:
        return python_in(folder)
    raise SusbenchError(
        f"{folder}: no Browser Use virtualenv ({REQUIREMENT}) here; make it with "
        "`susbench agents install-browser-use` (or name an interpreter with `python:` in --operator-config)"
    )


def install(folder: Path | None = None, quiet: bool = True) -> Path:
    """Make the virtualenv from PyPI, once (other processes wait for the first); its interpreter."""
    folder = folder or venv_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / READY_MARK).is_file():
            return installed_python(folder)
        shutil.rmtree(folder, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
        pip_install(folder, quiet, REQUIREMENT)
        (folder / READY_MARK).write_text(REQUIREMENT + "\n", encoding="utf-8")
    return python_in(folder)


def runner_script() -> Path:
    return Path(__file__).with_name("browser_use_runner.py")
