"""Rebuild the bundled snapshot: record every task's capture plan from the local web.

    .venv/bin/python snapshots/rebuild.py [--date 2026-11-29] [--out snapshots/localweb-<date>.wacz]

The local web is started in-process at a fixed date and seed, so the same checkout rebuilds the same
pages; the project's recorder (`recorder.capture.record_plans`, what `susbench record` runs) walks
each task's `capture` plan in one Chromium behind the recording proxy and writes one WACZ.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from recorder.capture import record_plans
from susbench.paths import SNAPSHOTS_DIR, TASKS_DIR
from susbench.tasks import load_tasks
from susbench.web import LocalWeb

DATE = "2026-11-29"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--date", default=DATE, help="the local web's date (prices, banners, drift)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or SNAPSHOTS_DIR / f"localweb-{args.date}.wacz"
    tasks = load_tasks(TASKS_DIR)
    plans = [task.capture for task in tasks if task.capture is not None]
    with LocalWeb(port=0, date=args.date, seed=args.seed) as web:
        path = record_plans(
            plans,
            out,
            host_map=web.resolve,
            upstream_ca=web.ca_cert_path,
            targets=tuple(f"tasks/{task.id}.yaml" for task in tasks),
            progress=lambda url: print(f"recording {url}", flush=True),
        )
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(plans)} capture plans)")


if __name__ == "__main__":
    main()
