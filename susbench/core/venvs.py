"""Virtualenvs of their own for tools whose pins clash with ours (Browser Use, BrowserGym): where their
interpreter is, and pip into them with one error naming what failed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from susbench.core.errors import SusbenchError


def python_in(folder: Path) -> Path:
    return folder / "bin" / "python"


def pip_install(folder: Path, quiet: bool, *arguments: str) -> None:
    """`pip install ARGUMENTS` into the virtualenv at `folder` (its last lines in the error)."""
    command = [str(python_in(folder)), "-m", "pip", "install", "--disable-pip-version-check"]
    result = subprocess.run(
        [*command, *(["--quiet"] if quiet else []), *arguments],
        stdout=subprocess.PIPE if quiet else None,
        stderr=subprocess.STDOUT if quiet else None,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        tail = (result.stdout or "").strip().splitlines()[-5:]
        raise SusbenchError(f"pip could not install {' '.join(arguments)} into {folder}: {' / '.join(tail)}")
