"""Where the project's data folders live (the repo root in a checkout; overridable by env)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(os.environ.get("SUSBENCH_ROOT", Path(__file__).resolve().parents[1]))
INJECTIONS_DIR = REPO_ROOT / "injections"
EXTENSION_DIR = REPO_ROOT / "extension"
TASKS_DIR = REPO_ROOT / "tasks"
SNAPSHOTS_DIR = REPO_ROOT / "snapshots"


def shared_dir() -> Path:
    """The workplace's shared test data (`../shared` beside the checkout, or `$SUSBENCH_SHARED`)."""
    return Path(os.environ.get("SUSBENCH_SHARED", REPO_ROOT.parent / "shared"))


def cache_dir() -> Path:
    """Per-user state (generated CAs, built extensions); never inside a snapshot."""
    root = Path(os.environ.get("SUSBENCH_HOME", Path.home() / ".cache" / "susbench"))
    root.mkdir(parents=True, exist_ok=True)
    return root
