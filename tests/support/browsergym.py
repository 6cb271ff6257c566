"""The BrowserGym driver (tests/browsergym/driver.py) as a process in BrowserGym's own
virtualenv, made by `make test`'s set-up (`susbench agents install-browsergym`), never here; its
fixtures are in tests/browsergym/conftest.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from susbench.browsergym import environment

# Not in this folder: run as a script, its folder comes first on sys.path, and this module would
# stand in for the browsergym package.
DRIVER = Path(__file__).parents[1] / "browsergym" / "driver.py"


class Driver:
    """One driver process: each call is one command line and one answer line. Its episodes run this
    checkout's `susbench` (`$SUSBENCH_PYTHON`), whichever checkout last installed the shared virtualenv."""

    def __init__(self, python: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(python), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env={**(os.environ if env is None else env), environment.PYTHON_VARIABLE: sys.executable},
        )

    def call(self, op: str, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"op": op, **command}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, (
            f"the BrowserGym driver stopped (exit status {self.process.wait()}); see its stderr above"
        )
        return json.loads(line)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(60)
