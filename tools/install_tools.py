"""The outside tools some tests drive, installed by `make tools` (part of `make test`'s set-up) and
never by a test: pywb, py-wacz and Browser Use in virtualenvs of their own in the cache (each pins
packages ours cannot share; a fresh clone reuses them), and ReplayWeb.page's two scripts from npm
(where each lives: tests/support/outside_tools.py).

`python -m tools.install_tools` installs whatever is missing, the four at once (they wait on the
network, not the CPU), each under a lock.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from susbench.agents import browser_use_env
from susbench.core.errors import SusbenchError
from susbench.core.paths import cache_dir
from tests.support.outside_tools import (
    PYWB_SCRIPT,
    PYWB_VENV,
    RWP_FILES,
    RWP_PACKAGE,
    WACZ_PACKAGE,
    WACZ_VENV,
    replaywebpage_dir,
)

INSTALL_TIMEOUT_S = 900


def install_pywb() -> Path:
    subprocess.run(
        ["bash", str(PYWB_SCRIPT)],
        env={**os.environ, "PYWB_VENV": str(PYWB_VENV)},
        check=True,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    return PYWB_VENV


def install_wacz(venv: Path = WACZ_VENV) -> Path:
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "bin" / "wacz").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
            subprocess.run(
                [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", WACZ_PACKAGE],
                check=True,
                timeout=INSTALL_TIMEOUT_S,
                capture_output=True,
            )
    return venv


def install_replaywebpage() -> Path:
    """`npm pack` the package into a temporary folder and keep its ui.js and sw.js in the cache."""
    folder = replaywebpage_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "replaywebpage.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all((folder / name).is_file() for name in RWP_FILES):
            return folder
        with tempfile.TemporaryDirectory(prefix="susbench-rwp-") as tmp:
            subprocess.run(
                ["npm", "pack", RWP_PACKAGE], cwd=tmp, check=True, capture_output=True, timeout=600
            )
            (tarball,) = Path(tmp).glob("*.tgz")
            folder.mkdir(parents=True, exist_ok=True)
            with tarfile.open(tarball) as archive:
                for name in RWP_FILES:
                    source = archive.extractfile(f"package/{name}")
                    if source is None:
                        raise OSError(f"{tarball.name} has no package/{name}")
                    (folder / name).write_bytes(source.read())
    return folder


INSTALLS: dict[str, Callable[[], Path]] = {
    "pywb": install_pywb,
    "py-wacz": install_wacz,
    browser_use_env.REQUIREMENT: browser_use_env.install,
    "ReplayWeb.page": install_replaywebpage,
}


def _timed(name: str, install: Callable[[], Path]) -> str:
    started = time.monotonic()
    try:
        where = install()
    except (OSError, SusbenchError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", None) or exc
        return f"FAILED {name}: {str(detail)[-2000:]}"
    return f"{name}: {where} ({time.monotonic() - started:.0f} s)"


def main() -> int:
    with ThreadPoolExecutor(len(INSTALLS)) as pool:
        lines = list(pool.map(lambda item: _timed(*item), INSTALLS.items()))
    print("\n".join(lines))
    return 1 if any(line.startswith("FAILED") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
