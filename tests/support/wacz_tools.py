"""Webrecorder's py-wacz (`wacz validate`, `wacz create`, `cdxj-indexer`) in its own virtualenv in the
cache (tests/support/outside_tools.py; installed by `make tools`: py-wacz pins a typer older than ours).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WaczTools:
    venv: Path

    def run(self, tool: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / tool), *args], capture_output=True, text=True, timeout=600, cwd=cwd
        )

    def validate(self, wacz: Path) -> subprocess.CompletedProcess[str]:
        """`wacz validate -f WACZ`: exit 0 and "Validation succeeded" when Webrecorder accepts it."""
        return self.run("wacz", "validate", "-f", str(wacz))
