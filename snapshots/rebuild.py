"""Rebuild the bundled snapshot: record every task's capture plan from the local web.

    .venv/bin/python snapshots/rebuild.py [--date 2026-11-29] [--out snapshots/localweb-<date>.wacz]

The local web is started in-process at a fixed date and seed, so the same checkout rebuilds the same
pages; the project's recorder (`susbench.recorder.capture.record_plans`, what `susbench record` runs) walks
each task's capture plan in a fresh browser session of its own behind the recording proxy and
writes one WACZ, its records labelled with the task's session. The new snapshot is written beside
the old one and replaces it only once it verifies and holds every task's session; a failed
attempt (a step that timed out on a busy machine) is recorded again from scratch.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.core.errors import SusbenchError
from susbench.core.models import Task
from susbench.core.paths import SNAPSHOTS_DIR, TASKS_DIR
from susbench.recorder.capture import record_plans
from susbench.snapshot import Snapshot, verify_snapshot
from susbench.web import LocalWeb

DATE = "2026-11-29"


def record(tasks: list[Task], out: Path, date: str, seed: int) -> Path:
    """One recording of every task's plan into `out`."""
    with LocalWeb(port=0, date=date, seed=seed) as web:
        return record_plans(
            [task.capture_plan() for task in tasks],
            out,
            host_map=web.resolve,
            upstream_ca=web.ca_cert_path,
            targets=tuple(f"tasks/{task.id}.yaml" for task in tasks),
            progress=lambda url: print(f"recording {url}", flush=True),
        )


def problems(path: Path, tasks: list[Task]) -> list[str]:
    """What makes a recording unfit to bundle: a failed verification, or a task whose session
    lacks its start page."""
    found = list(verify_snapshot(path).problems)
    with Snapshot.open(path) as snapshot:
        pages = {(entry.session, entry.url) for entry in snapshot.entries() if entry.status == 200}
    for task in tasks:
        if (task.capture_plan().id, task.start_url) not in pages:
            found.append(f"{task.id}: its session has no recorded 200 for {task.start_url}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--date", default=DATE, help="the local web's date (prices, banners, drift)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--attempts", type=int, default=3, help="recordings tried before giving up")
    args = parser.parse_args()
    out: Path = args.out or SNAPSHOTS_DIR / f"localweb-{args.date}.wacz"
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = load_tasks(TASKS_DIR, {injection.id: injection for injection in load_injections()})
    for attempt in range(1, args.attempts + 1):
        with tempfile.TemporaryDirectory(prefix=".rebuild-", dir=out.parent) as staging_dir:
            staging = Path(staging_dir) / out.name
            try:
                record(tasks, staging, args.date, args.seed)
            except SusbenchError as exc:
                print(f"attempt {attempt} failed: {exc}", file=sys.stderr, flush=True)
                continue
            found = problems(staging, tasks)
            if not found:
                staging.replace(out)
                print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(tasks)} task sessions)")
                return 0
        print(f"attempt {attempt} is unfit: {'; '.join(found)}", file=sys.stderr, flush=True)
    print(f"gave up after {args.attempts} attempts; {out} is unchanged", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
