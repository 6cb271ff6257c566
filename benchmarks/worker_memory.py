"""Where a worker's memory goes, episode after episode: the soak's worker growth, taken apart.

One worker's episode loop (`EpisodeRunner`: its replay server, Playwright's client, the operator)
runs in this process under `tracemalloc`, the `random` baseline over every task on the bundled
snapshot, as `susbench run` would hand the episodes to a worker. After `--warmup` episodes the
allocations are snapshotted; after `--episodes` more, the lines whose live memory grew most are
listed with their growth per episode, beside the process's RSS growth per episode, the replay log's
length and the reply cache's fill (bounded by `susbench.replayer.service.CACHE_BYTES`). `tracemalloc` slows
allocation, so episodes here take longer than in a run.

    .venv/bin/python -m benchmarks.worker_memory [--warmup 10] [--episodes 40] [--top 12]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks., tests.

from benchmarks.soak import rss_mib
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.controller.options import RunOptions
from susbench.controller.planning import EpisodeJob
from susbench.controller.run import run_benchmark
from susbench.records.episode import EpisodeRecord
from susbench.replayer.service import CACHE_BYTES, ThreadedReplayServer

KIB = 1024


class TracedWorker:
    """An executor of one in-process worker that snapshots allocations between two episode counts."""

    def __init__(self, setup: WorkerSetup, warmup: int, episodes: int, top: int) -> None:
        self._runner = EpisodeRunner(setup)
        self._warmup = warmup
        self._episodes = episodes
        self._top = top

    def __enter__(self) -> TracedWorker:
        self._runner.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._runner.__exit__(exc_type, exc, tb)

    def replayer(self) -> tuple[int, float]:
        """(entries in the replay log, MiB of bodies in the reply cache)."""
        replay = self._runner.traffic.replay
        if not isinstance(replay, ThreadedReplayServer):
            return 0, 0.0
        return len(replay.log), replay.cached_bytes / KIB / KIB

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        tracemalloc.start(8)
        before: tracemalloc.Snapshot | None = None
        rss_before, replayer_before = 0.0, (0, 0.0)
        for done, job in enumerate(jobs[: self._warmup + self._episodes], start=1):
            on_result(self._runner.run(job))
            if done == self._warmup:
                gc.collect()
                before, rss_before, replayer_before = (
                    tracemalloc.take_snapshot(),
                    rss_mib(os.getpid()),
                    self.replayer(),
                )
        gc.collect()
        after, rss_after = tracemalloc.take_snapshot(), rss_mib(os.getpid())
        assert before is not None, "fewer jobs than warm-up episodes"
        count = self._episodes
        traced = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
        print(f"{count} episodes after {self._warmup} warm-up episodes")
        per_episode = (rss_after - rss_before) * KIB / count
        print(f"RSS: {rss_before:.1f} -> {rss_after:.1f} MiB, {per_episode:+.1f} KiB/episode")
        print(f"traced Python memory: {traced / KIB / count:+.1f} KiB/episode")
        (log_before, cache_before), (log_after, cache_after) = replayer_before, self.replayer()
        print(f"replay log: {log_before} -> {log_after} entries")
        bound = CACHE_BYTES / KIB / KIB
        print(f"reply cache: {cache_before:.1f} -> {cache_after:.1f} MiB (bound {bound:g} MiB)")
        print(f"top {self._top} lines by growth (KiB per episode, allocations at the end):")
        for stat in after.compare_to(before, "lineno")[: self._top]:
            frame = stat.traceback[0]
            print(f"  {stat.size_diff / KIB / count:+8.1f}  {stat.count:7d}  {frame.filename}:{frame.lineno}")
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="susbench-worker-memory-") as folder:
        options = RunOptions(operator="random", repeats=20, db=Path(folder) / "memory.duckdb")
        run_benchmark(
            options, executor=lambda setup, _: TracedWorker(setup, args.warmup, args.episodes, args.top)
        )


if __name__ == "__main__":
    main()
