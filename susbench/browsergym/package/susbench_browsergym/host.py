"""The SusBench install this virtualenv serves: its interpreter (written by `install-browsergym`), and
the catalog it reports (`python -m susbench.browsergym.catalog`), asked once per process."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HOST_FILE = "susbench-host.json"
PYTHON_VARIABLE = "SUSBENCH_PYTHON"


def host_python() -> Path:
    """`$SUSBENCH_PYTHON`, else the interpreter `susbench agents install-browsergym` recorded here."""
    if os.environ.get(PYTHON_VARIABLE):
        return Path(os.environ[PYTHON_VARIABLE])
    host = Path(sys.prefix) / HOST_FILE
    if not host.is_file():
        raise RuntimeError(
            f"{host}: missing; make this virtualenv with `susbench agents install-browsergym` "
            f"(or name SusBench's interpreter in ${PYTHON_VARIABLE})"
        )
    return Path(json.loads(host.read_text(encoding="utf-8"))["python"])


@functools.cache
def catalog() -> dict[str, Any]:
    """The tasks with their task sets and step limits, and the install's Chromium."""
    result = subprocess.run(
        [str(host_python()), "-m", "susbench.browsergym.catalog"], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        tail = " / ".join(result.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"{host_python()} -m susbench.browsergym.catalog failed: {tail}")
    return json.loads(result.stdout)
