"""Episode overhead and throughput on the bundled snapshot (a benchmark, not a test).

Overhead: a fresh browser with the extension, through the replay proxy, until the task's start
page has loaded (the controller's `ready` event). Throughput: episodes per minute of the `naive`
baseline over every task at --parallel 1, 2 and 4.

    .venv/bin/python benchmarks/episode_bench.py [--snapshot S.wacz] [--parallel 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store


def measure(parallel: int, snapshot: Path | None, tasks: str, work: Path) -> dict[str, float]:
    db = work / f"bench-p{parallel}.duckdb"
    started = time.monotonic()
    summary = run_benchmark(
        RunOptions(tasks=tasks, operator="naive", snapshot=snapshot, parallel=parallel, db=db)
    )
    wall = time.monotonic() - started
    with Store(db, read_only=True) as store:
        _, ready = store.query(
            "SELECT (ev.ts_ms - epoch_ms(e.started_at)) / 1000.0 FROM events ev "
            "JOIN episodes e USING (episode_id) WHERE ev.kind = 'ready'"
        )
        _, durations = store.query("SELECT duration_s FROM episodes")
    overheads = [row[0] for row in ready]
    return {
        "parallel": parallel,
        "episodes": summary.stored,
        "wall_s": round(wall, 1),
        "episodes_per_min": round(60 * summary.stored / wall, 1),
        "ready_median_s": round(statistics.median(overheads), 2) if overheads else float("nan"),
        "episode_median_s": round(statistics.median(row[0] for row in durations), 2)
        if durations
        else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=None)
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="susbench-bench-") as folder:
        for parallel in args.parallel:
            print(json.dumps(measure(parallel, args.snapshot, args.tasks, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
