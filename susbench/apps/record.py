"""`susbench apps record`: an app served for a date, every task's flow recorded into one WACZ.

The snapshot is written beside its destination under a temporary name and moved into place only
when the recording finished and the app's content was still what the date and seed give; its
manifest (`<snapshot>.json`) keeps the content digest the app was recorded with.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from datetime import date as Date
from pathlib import Path

from susbench.apps.base import AppError, Log
from susbench.apps.serve import serve_app
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.catalog.tasksets import APP_SNAPSHOTS_DIR, APP_TASKS_DIR
from susbench.core.models import Frozen


class AppSnapshot(Frozen):
    """What a recorded app snapshot was made from (`snapshots/apps/<app>-<date>.json`)."""

    app: str
    software: str
    version: str
    date: Date
    seed: int
    hosts: tuple[str, ...]
    content_sha256: str
    content_items: int
    tasks: tuple[str, ...]
    recorded_at: datetime
    seconds: float


class RecordedApp(Frozen):
    snapshot: Path
    manifest: Path


def app_tasks_dir(name: str) -> Path:
    return APP_TASKS_DIR / name


def default_snapshot_path(name: str, day: Date) -> Path:
    return APP_SNAPSHOTS_DIR / f"{name}-{day.isoformat()}.wacz"


def record_app(
    name: str,
    day: Date,
    seed: int = 0,
    out: Path | None = None,
    log: Log | None = None,
    selector: str = "all",
) -> RecordedApp:
    """Record the capture plan of each of the app's tasks `selector` picks (all by default) from the
    app served for `day` and `seed`."""
    from susbench.recorder.capture import record_plans

    say = log or (lambda line: None)
    injections = {injection.id: injection for injection in load_injections()}
    catalog = load_tasks(app_tasks_dir(name), injections) if app_tasks_dir(name).is_dir() else []
    tasks = [task for task in select_tasks(catalog, selector, injections) if task.capture is not None]
    if not tasks:
        raise AppError(
            name, f"no task with a capture plan in {app_tasks_dir(name)}", "write the app's tasks first"
        )
    target = out or default_snapshot_path(name, day)
    target.parent.mkdir(parents=True, exist_ok=True)
    # In a hidden folder beside the target under the target's own name (a snapshot's id is its
    # file's stem), moved into place when whole.
    scratch = target.parent / f".{target.stem}.partial"
    scratch.mkdir(exist_ok=True)
    partial = scratch / target.name
    started = time.monotonic()
    try:
        with serve_app(name, day, seed, log=say) as served:
            say(f"recording {len(tasks)} task flows from {served.front.loopback}:{served.front.port}")
            record_plans(
                [task.capture for task in tasks if task.capture is not None],
                partial,
                host_map=served.front.resolve,
                upstream_ca=served.front.ca_cert_path,
                targets=tuple(f"tasks/apps/{name}/{task.id}.yaml" for task in tasks),
                progress=lambda url: say(f"  {url}"),
            )
            digest = served.verify()
        os.replace(partial, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    manifest = AppSnapshot(
        app=name,
        software=served.driver.spec.title,
        version=served.driver.spec.version,
        date=day,
        seed=seed,
        hosts=served.driver.spec.hosts,
        content_sha256=digest.sha256,
        content_items=len(digest.items),
        tasks=tuple(task.id for task in tasks),
        recorded_at=datetime.now(UTC).replace(microsecond=0),
        seconds=round(time.monotonic() - started, 1),
    )
    manifest_path = target.with_suffix(".json")
    manifest_path.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return RecordedApp(snapshot=target, manifest=manifest_path)
