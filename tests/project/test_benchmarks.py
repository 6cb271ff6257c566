"""Every benchmark still imports and parses its options, in the inner loop (`make check`).

The replay benchmark failed on an import for days because nothing ran it. `make bench-smoke` runs each
benchmark's smallest mode (minutes, with Chromium); this runs each script's `--help` (seconds, no
browser), which imports all of it: a renamed or moved name fails here first. No timing is asserted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from smoke import HELPERS, SMOKE, unlisted  # noqa: E402 - benchmarks/ is not a package

SCRIPTS = sorted(path.name for path in BENCHMARKS.glob("*.py") if path.name not in HELPERS)


def test_every_benchmark_has_a_smoke_run() -> None:
    assert unlisted() == []
    assert set(SMOKE) == set(SCRIPTS) - {"smoke.py"}


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_benchmark_imports_and_parses_its_options(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
