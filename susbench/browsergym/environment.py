"""BrowserGym's own virtualenv, beside the main install rather than inside it.

browsergym-core 0.14.3 pins playwright==1.44 (and greenlet, gymnasium, numpy ...), where this project
drives Chromium with Playwright 1.65: one interpreter cannot import both. So BrowserGym and
`susbench_browsergym` (this folder's `package/`) live in a virtualenv of their own under the cache
folder, made once from PyPI by `susbench agents install-browsergym`. Its tasks start our episodes
with this install's `susbench` (whose interpreter they are told in `susbench-host.json`) and attach
to the episode's Chromium over CDP, so the process boundary costs one connection, not a second
browser stack.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import sys
import venv
from pathlib import Path

from susbench.core.errors import SusbenchError
from susbench.core.paths import cache_dir
from susbench.core.venvs import pip_install, python_in

REQUIREMENTS = ("browsergym-core==0.14.3", "browsergym-experiments==0.14.3")
PACKAGE = Path(__file__).with_name("package")
# Both also named in package/susbench_browsergym/host.py, which runs in the other virtualenv.
HOST_FILE = "susbench-host.json"
PYTHON_VARIABLE = "SUSBENCH_PYTHON"
READY_MARK = ".susbench-ready"


def venv_dir() -> Path:
    return cache_dir() / "venvs" / "browsergym-0.14.3"


def _fingerprint() -> str:
    """What the virtualenv was made from: the requirements and our package's sources."""
    digest = hashlib.sha256()
    for path in sorted([*PACKAGE.rglob("*.py"), PACKAGE / "pyproject.toml"]):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return f"{' '.join(REQUIREMENTS)} {digest.hexdigest()[:16]}"


def installed_python(folder: Path | None = None) -> Path:
    """The interpreter of a ready BrowserGym virtualenv, or one error saying how to make it."""
    folder = folder or venv_dir()
    mark = folder / READY_MARK
    if mark.is_file() and mark.read_text(encoding="utf-8").strip() == _fingerprint():
        return python_in(folder)
    raise SusbenchError(
        f"{folder}: no BrowserGym virtualenv of this version here; make it with "
        "`susbench agents install-browsergym`"
    )


def install(folder: Path | None = None, quiet: bool = True) -> Path:
    """Make the virtualenv from PyPI, once (other processes wait for the first); its interpreter.
    Our package is re-installed, without its dependencies, when its sources changed; `susbench-host.json`
    names the install that ran this last (a second checkout re-points it at itself)."""
    folder = folder or venv_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mark = folder / READY_MARK
        if not (mark.is_file() and mark.read_text(encoding="utf-8").strip() == _fingerprint()):
            _build(folder, quiet)
            mark.write_text(_fingerprint() + "\n", encoding="utf-8")
        host = {"python": sys.executable}
        (folder / HOST_FILE).write_text(json.dumps(host, indent=1) + "\n", encoding="utf-8")
    return python_in(folder)


def _build(folder: Path, quiet: bool) -> None:
    if not python_in(folder).is_file() or not (folder / ".browsergym-installed").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
        pip_install(folder, quiet, *REQUIREMENTS)
        (folder / ".browsergym-installed").write_text(" ".join(REQUIREMENTS) + "\n", encoding="utf-8")
    build = folder / "build-susbench-browsergym"
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(PACKAGE, build)
    pip_install(folder, quiet, "--no-deps", "--force-reinstall", str(build))
    # its own dependencies beyond BrowserGym's: pandas and tqdm, which browsergym.experiments imports
    pip_install(folder, quiet, str(build))
    shutil.rmtree(build, ignore_errors=True)
