"""Where the project's data folders live: the checkout's top-level folders, or, in an installed
package, the same folders inside it (`susbench/data/`, put there by setup.py); `$SUSBENCH_ROOT` overrides
both."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

REPO_ROOT = Path(os.environ.get("SUSBENCH_ROOT", Path(__file__).resolve().parents[2]))
"""The checkout (tests, benchmarks, the Dockerfile and git live here; an installed package has none)."""


def _data_root() -> Path:
    packaged = Path(str(files("susbench").joinpath("data")))
    if "SUSBENCH_ROOT" in os.environ or not packaged.is_dir():
        return REPO_ROOT
    return packaged


DATA_ROOT = _data_root()
"""The folder holding extension/, injections/, tasks/, snapshots/, sites/ and study/."""
INJECTIONS_DIR = DATA_ROOT / "injections"
EXTENSION_DIR = DATA_ROOT / "extension"
TASKS_DIR = DATA_ROOT / "tasks"
SNAPSHOTS_DIR = DATA_ROOT / "snapshots"
APPS_DIR = DATA_ROOT / "apps"
"""Each real web application's data: `apps/<name>/app.yaml` and the files its driver installs with."""
DEFAULT_DB = Path("results.duckdb")
"""The results file a command reads and writes when given no --db (in the current folder)."""


def shared_dir() -> Path:
    """The workplace's shared test data (`../shared` beside the checkout, or `$SUSBENCH_SHARED`)."""
    return Path(os.environ.get("SUSBENCH_SHARED", REPO_ROOT.parent / "shared"))


def cache_dir() -> Path:
    """Per-user state (generated CAs, built extensions); never inside a snapshot."""
    root = Path(os.environ.get("SUSBENCH_HOME", Path.home() / ".cache" / "susbench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


SNAPSHOT_SUFFIXES = (".wacz", ".warc", ".warc.gz")


def complete_snapshots(incomplete: str) -> list[str]:
    """Shell completion of a snapshot: files (.wacz, .warc, .warc.gz) and folders under the typed path,
    and the bundled snapshots."""
    head = incomplete[: incomplete.rfind("/") + 1]
    folder = Path(head or ".").expanduser()
    if not folder.is_dir():
        return []
    found = [
        head + path.name + ("/" if path.is_dir() else "")
        for path in sorted(folder.iterdir())
        if (path.is_dir() and not path.name.startswith(".")) or path.name.endswith(SNAPSHOT_SUFFIXES)
    ]
    if SNAPSHOTS_DIR.is_dir():
        found += [os.path.relpath(path) for path in sorted(SNAPSHOTS_DIR.glob("*.wacz"))]
    return sorted({item for item in found if item.startswith(incomplete)})
