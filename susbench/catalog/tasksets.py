"""Task sets: which tasks run on which snapshot.

`localweb` is the task catalog in `tasks/` on the bundled snapshot of the local web. `realpages` is
`tasks/realpages/` on real pages: its snapshot is built into the cache from `../shared/realdata`
(`susbench.core.paths.shared_dir()`) the first time it is needed, because those pages belong to the
sites they came from and are shared for tests and benchmarks only, never bundled. The build is
what `susbench snapshot import` does: the saved product pages under their original URLs (a URL map
made from the folder's `ground-truth.json` and `capture-times.json`), then the real WARCs as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.loading import read_data_file
from susbench.core.models import Frozen
from susbench.core.paths import SNAPSHOTS_DIR, TASKS_DIR, cache_dir, shared_dir

REALPAGES = "realpages"
PRODUCT_PAGES = "product-pages"
WARCS = "warc"
# Bump when the build changes what it writes from the same inputs.
BUILD_VERSION = "1"


FULL = "full"
"""Every named task set at once (`susbench run --task-set full`), each on its own snapshot."""
DEMO = "demo"
"""The demo's balanced subset of the catalog (`susbench.controller.catalog_runs`), each task set on
its own snapshot."""
Source = Literal["synthetic", "real app", "saved page", "folder"]
"""Where a task set's pages come from: the synthetic local web, a real web application run here, or
saved real pages; a folder given by path is none of the catalog's own."""


class TaskSet(Frozen):
    """A folder of tasks and where its snapshot comes from."""

    name: str
    description: str
    tasks_dir: Path
    built: bool = Field(description="its snapshot is built from ../shared into the cache (else: bundled)")
    app: bool = Field(
        default=False, description="a real web application's tasks, on its own bundled snapshot"
    )
    source: Source = "folder"


APP_TASKS_DIR = TASKS_DIR / "apps"
APP_SNAPSHOTS_DIR = SNAPSHOTS_DIR / "apps"


def _app_task_sets() -> dict[str, TaskSet]:
    """One task set per app with tasks in tasks/apps/<app>/ (`susbench apps`)."""
    folders = sorted(folder for folder in APP_TASKS_DIR.glob("*") if folder.is_dir())
    return {
        folder.name: TaskSet(
            name=folder.name,
            description=f"the {folder.name} app's tasks, on its newest bundled snapshot (snapshots/apps/)",
            tasks_dir=folder,
            built=False,
            app=True,
            source="real app",
        )
        for folder in folders
    }


TASK_SETS = {
    "localweb": TaskSet(
        name="localweb",
        description="the local web's eight synthetic sites, on the bundled snapshot",
        tasks_dir=TASKS_DIR,
        built=False,
        source="synthetic",
    ),
    REALPAGES: TaskSet(
        name=REALPAGES,
        description="real product pages and web archives from ../shared/realdata, built into the cache",
        tasks_dir=TASKS_DIR / REALPAGES,
        built=True,
        source="saved page",
    ),
    **_app_task_sets(),
}


def task_set(name: str) -> TaskSet:
    """A named task set, or a folder of task files (e.g. drafted by `susbench tasks draft`)."""
    if name in TASK_SETS:
        return TASK_SETS[name]
    folder = Path(name)
    if folder.is_dir():
        return TaskSet(name=name, description=f"the tasks in {folder}", tasks_dir=folder, built=False)
    raise SusbenchError(
        f"--task-set {name!r}: no such task set or folder; expected one of {', '.join(TASK_SETS)} or a folder"
    )


def task_set_snapshot(chosen: TaskSet) -> Path | None:
    """The snapshot a task set runs on: built now for `realpages` (once; then reused from the
    cache), an app's newest in snapshots/apps/, None for the bundled one."""
    if chosen.app:
        return app_snapshot(chosen.name)
    return build_realpages_snapshot() if chosen.built else None


def app_snapshot(name: str) -> Path:
    """The newest bundled snapshot of the app `name` (snapshots/apps/<name>-<date>.wacz)."""
    found = sorted(APP_SNAPSHOTS_DIR.glob(f"{name}-*.wacz"))
    if not found:
        raise SusbenchError(
            f"{APP_SNAPSHOTS_DIR}: no snapshot of the app {name!r}; "
            f"record one with `susbench apps record {name}`"
        )
    return found[-1]


def realdata_folder() -> Path:
    folder = shared_dir() / "realdata"
    if not (folder / PRODUCT_PAGES).is_dir():
        raise SusbenchError(
            f"{folder}: the real pages are not there; the realpages snapshot is built from "
            "../shared/realdata (set SUSBENCH_SHARED to the shared/ folder)"
        )
    return folder


def _captured(stamp: str) -> datetime:
    """`/product-extraction-benchmark/20210203105656/https://...` -> 2021-02-03T10:56:56Z."""
    digits = stamp.strip("/").split("/")[1]
    return datetime.strptime(digits[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def write_url_map(product_pages: Path, out: Path) -> Path:
    """The URL map of the saved product pages (absolute file names), from the folder's own data."""
    truths = read_data_file(product_pages / "ground-truth.json")
    times = read_data_file(product_pages / "capture-times.json")
    if not isinstance(truths, dict) or not isinstance(times, dict):
        raise SusbenchError(f"{product_pages}: ground-truth.json and capture-times.json must be objects")
    entries = {
        str(product_pages / f"{stem}.html.gz"): {
            "url": truth["url"],
            "captured_at": _captured(times[stem]).isoformat(),
        }
        for stem, truth in sorted(truths.items())
    }
    out.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return out


def _inputs_digest(files: list[Path]) -> str:
    digest = hashlib.sha256(BUILD_VERSION.encode())
    for path in files:
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_realpages_snapshot(
    realdata: Path | None = None, cache: Path | None = None, announce: Callable[[str], None] = to_stderr
) -> Path:
    """The realpages snapshot in the cache, named by a digest of its inputs: built if missing, and
    `announce`d first (it takes about a minute, and nothing else is printed meanwhile)."""
    # Imported here: reading the task sets (`run --help`) needs no archive code.
    from susbench.snapshot import import_warc
    from susbench.snapshot.saved import load_url_map

    realdata = realdata or realdata_folder()
    product_pages = realdata / PRODUCT_PAGES
    warcs = sorted(path for path in (realdata / WARCS).iterdir() if path.name.endswith((".warc", ".warc.gz")))
    inputs = sorted(product_pages.iterdir()) + warcs
    folder = cache or cache_dir() / REALPAGES
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{REALPAGES}-{_inputs_digest(inputs)}.wacz"
    if out.is_file():
        return out
    size_mb = sum(path.stat().st_size for path in inputs) / 1e6
    announce(
        f"building the realpages snapshot from {realdata} ({len(inputs)} files, {size_mb:.0f} MB; about "
        f"a minute, once: it is kept as {out})"
    )
    with tempfile.TemporaryDirectory(prefix=".realpages-", dir=folder) as scratch:
        url_map = write_url_map(product_pages, Path(scratch) / "urls.json")
        built = import_warc(
            warcs, Path(scratch) / out.name, snapshot_id=REALPAGES, saved=load_url_map(url_map)
        )
        os.replace(built, out)
    return out
