"""Shell completion for what the commands take: task selectors, operator names, snapshot files.

Typer calls these with the word typed so far; a broken catalog must not break the shell, so a
catalog that fails to load completes nothing rather than printing an error mid-line.
"""

from __future__ import annotations

import os
from pathlib import Path

from susbench.errors import SusbenchError
from susbench.models import PATTERN_TYPES
from susbench.operators import operator_names
from susbench.paths import SNAPSHOTS_DIR
from susbench.tasks import load_tasks

SNAPSHOT_SUFFIXES = (".wacz", ".warc", ".warc.gz")


def complete_tasks(incomplete: str) -> list[str]:
    """`--tasks` takes comma-separated selectors: complete the last one, keep the ones before it."""
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    try:
        tasks = load_tasks()
    except SusbenchError:
        return []
    selectors = ["all", *PATTERN_TYPES, *sorted({task.site for task in tasks}), *(task.id for task in tasks)]
    return [prefix + selector for selector in selectors if selector.startswith(last)]


def complete_operators(incomplete: str) -> list[str]:
    return [name for name in operator_names() if name.startswith(incomplete)]


def complete_snapshots(incomplete: str) -> list[str]:
    """Snapshot files (.wacz, .warc, .warc.gz) and folders under the typed path; the bundled ones too."""
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
