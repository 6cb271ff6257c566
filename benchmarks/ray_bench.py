"""The Ray backend against the local pool (a benchmark, not a test), side by side in one invocation.

Throughput: episodes per minute of the `naive` baseline over the same tasks with the local backend at
--parallel 1, 2 and 4, and with Ray (an embedded node with --browsers browsers). Each figure is the
run's wall time, worker start-up included; Ray's own start (`ray.init`) is timed apart, since a
cluster is started once for many runs.
Leak check: --episodes scripted episodes (whole repeats of the task set, so at least that many) on
Ray (and, with --leak-backends ray local, on the local pool at as many workers as browsers): the
controller's RSS after every stored episode, and the Chromium and Ray processes left once the run and
the Ray session are over (found by a mark in the environment every child inherits).

    .venv/bin/python -m benchmarks.ray_bench [--tasks all] [--parallel 1 2 4] [--browsers 2] [--episodes 200]
        [--leak-backends ray local] [--no-throughput]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks., tests.

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import ExecutorFactory, RunOptions, RunSummary, run_benchmark
from susbench.controller.pool import LocalProcessPool
from susbench.distributed import RayCluster
from susbench.records.episode import EpisodeRecord
from tests.support.processes import MARK_VARIABLE, Watch, new_mark

MIB = 1024 * 1024


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / MIB
    raise RuntimeError("no VmRSS in /proc/self/status")


class RssTrace:
    """A RunObserver that samples the controller's RSS after every stored episode."""

    def __init__(self) -> None:
        self.samples: list[float] = []

    def started(self, summary: RunSummary) -> None:
        return None

    def stored(self, record: EpisodeRecord, summary: RunSummary) -> None:
        self.samples.append(rss_mib())


def slope_per_100(samples: list[float]) -> float:
    """Least-squares growth of RSS in MiB per 100 episodes over the second half (after warm-up)."""
    half = samples[len(samples) // 2 :]
    if len(half) < 2:
        return float("nan")
    xs = range(len(half))
    x_mean, y_mean = statistics.fmean(xs), statistics.fmean(half)
    num = sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, half, strict=True))
    den = sum((x - x_mean) ** 2 for x in xs)
    return 100 * num / den


@dataclass(frozen=True)
class Row:
    backend: str
    episodes: int
    outcomes: dict[str, int]
    wall_s: float

    @property
    def per_min(self) -> float:
        return 60 * self.episodes / self.wall_s


def timed_run(label: str, options: RunOptions, executor: ExecutorFactory) -> Row:
    started = time.monotonic()
    summary = run_benchmark(options, executor=executor)
    result = Row(label, summary.stored, dict(summary.outcomes), time.monotonic() - started)
    print(json.dumps({**asdict(result), "episodes_per_min": round(result.per_min, 1)}), flush=True)
    return result


def throughput(args: argparse.Namespace, work: Path) -> list[Row]:
    rows = []
    for parallel in args.parallel:
        options = RunOptions(
            tasks=args.tasks, operator="naive", parallel=parallel, db=work / f"p{parallel}.duckdb"
        )
        rows.append(timed_run(f"local --parallel {parallel}", options, LocalProcessPool))
    started = time.monotonic()
    with RayCluster(browsers_per_node=args.browsers) as cluster:
        print(json.dumps({"ray_start_s": round(time.monotonic() - started, 1)}), flush=True)
        options = RunOptions(tasks=args.tasks, operator="naive", db=work / "ray.duckdb")
        rows.append(timed_run(f"ray, {args.browsers} browsers", options, cluster.executor))
    return rows


def left_behind(watch: Watch) -> dict[str, list[str]]:
    """This benchmark's processes still running 2 minutes after its runs and Ray sessions closed, by
    kind (the local pool's multiprocessing resource tracker lives as long as this process, by design)."""
    kinds: dict[str, list[str]] = {"chromium": [], "ray": [], "playwright": [], "other": []}
    for info in watch.wait_until_gone(timeout=120):
        if info.name.startswith("chromium"):
            kind = "chromium"
        elif info.name.startswith(("ray::", "raylet", "gcs_server")) or "/ray/" in info.cmdline:
            kind = "ray"
        elif "playwright" in info.cmdline:
            kind = "playwright"
        else:
            kind = "other"
        kinds[kind].append(f"{info.pid} {info.cmdline[:120]}")
    return kinds


def leak_check(args: argparse.Namespace, work: Path, watch: Watch, backend: str) -> dict[str, object]:
    injections = {injection.id: injection for injection in load_injections()}
    tasks = select_tasks(load_tasks(injections=injections), args.tasks, injections)
    repeats = math.ceil(args.episodes / len(tasks))
    trace = RssTrace()
    db = work / f"leak-{backend}.duckdb"
    if backend == "ray":
        options = RunOptions(tasks=args.tasks, operator="naive", repeats=repeats, db=db)
        with RayCluster(browsers_per_node=args.browsers) as cluster:
            summary = run_benchmark(options, trace, executor=cluster.executor)
    else:
        options = RunOptions(
            tasks=args.tasks, operator="naive", repeats=repeats, parallel=args.browsers, db=db
        )
        summary = run_benchmark(options, trace, executor=LocalProcessPool)
    samples = trace.samples
    marks = [10, len(samples) // 2, len(samples)]
    result: dict[str, object] = {
        "backend": backend,
        "episodes": summary.stored,
        "outcomes": dict(summary.outcomes),
        "rss_mib_at": {n: round(samples[n - 1], 1) for n in marks if 0 < n <= len(samples)},
        "rss_mib_max": round(max(samples), 1),
        "rss_growth_mib_per_100_episodes_second_half": round(slope_per_100(samples), 2),
        "left_behind": left_behind(watch),
    }
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--browsers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=200, help="leak check: at least this many (0: skip)")
    parser.add_argument("--leak-backends", nargs="+", choices=["ray", "local"], default=["ray"])
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args()
    mark = new_mark()
    os.environ[MARK_VARIABLE] = mark
    watch = Watch(mark, roots=[os.getpid()])
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="susbench-raybench-") as folder:
        rows = [] if args.no_throughput else throughput(args, Path(folder))
        leaks = [
            leak_check(args, Path(folder), watch, backend) for backend in args.leak_backends if args.episodes
        ]
    print(f"load average at end: {os.getloadavg()}", flush=True)
    same = next((r for r in rows if r.backend == f"local --parallel {args.browsers}"), None)
    if rows:
        print("\n| backend | episodes | wall | episodes/min | vs local at the same parallelism |")
        print("|---|---|---|---|---|")
    for r in rows:
        ratio = "" if same is None else f"{r.per_min / same.per_min:.2f}"
        print(f"| {r.backend} | {r.episodes} | {r.wall_s:.0f} s | {r.per_min:.1f} | {ratio} |")
    for leak in leaks:
        print(f"\nleak check: {json.dumps(leak)}")


if __name__ == "__main__":
    main()
