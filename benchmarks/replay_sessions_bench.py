"""Session-aware matching benchmark (not a test): what answering from a task's session first costs.

Run: `.venv/bin/python benchmarks/replay_sessions_bench.py [--rounds 9] [--passes 20] [--base REV]`.
On the bundled snapshot, every task's own recorded requests are looked up (`--passes` times per
round, a new episode each pass) as an episode of that task would ask for them, with three indexes
side by side in one process, rounds interleaved: the index before sessions (`replayer/matching.py`
at git revision REV), today's index asked with no session, and today's index asked with the task's
session. Reported, as process CPU time (less disturbed by other work on the machine than wall
time): index build time and lookups per CPU second, medians over the rounds; and the index's
memory (tracemalloc peak while building).
The markdown report is printed and saved to `benchmarks/results/replay-sessions-<date>.md`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import tracemalloc
import types
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from susbench.controller import default_snapshot
from susbench.replayer.matching import ReplayIndex
from susbench.snapshot import IndexEntry, Snapshot

ROOT = Path(__file__).resolve().parents[1]
BASE_REV = "d69ea12"
MOVED = {"susbench.errors": "susbench.core.errors", "susbench.loading": "susbench.core.loading",
         "susbench.models": "susbench.core.models"}  # fmt: skip
"""Modules the floor-plan move (2026-12-01) put into susbench.core, as the base revision imports them."""
Request = tuple[str, str, str | None]


def base_module(rev: str) -> types.ModuleType:
    """`replayer/matching.py` as it was at `rev`, loaded under another name."""
    source = subprocess.run(
        ["git", "show", f"{rev}:replayer/matching.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for old, new in MOVED.items():
        source = source.replace(f"from {old} import", f"from {new} import")
    module = types.ModuleType("matching_before_sessions")
    module.__file__ = str(ROOT / "replayer" / "matching.py")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{rev}:replayer/matching.py", "exec"), module.__dict__)
    return module


def timed(build: Callable[[], Any]) -> tuple[Any, float, float]:
    """The built object, seconds taken, and the tracemalloc peak in MB (measured in a second build)."""
    started = time.process_time()
    built = build()
    seconds = time.process_time() - started
    tracemalloc.start()
    build()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return built, seconds, peak


def lookups_per_s(index: Any, requests: list[Request], passes: int, with_session: bool) -> float:
    started = time.process_time()
    for _ in range(passes):
        index.new_episode()
        for method, url, session in requests:
            if with_session:
                index.lookup(method, url, b"", session)
            else:
                index.lookup(method, url, b"")
    return passes * len(requests) / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--passes", type=int, default=20, help="passes over the requests per round")
    parser.add_argument("--base", default=BASE_REV, help="git revision of the index before sessions")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "benchmarks" / "results" / f"replay-sessions-{datetime.now(UTC):%Y-%m-%d}.md",
    )
    args = parser.parse_args()
    path = default_snapshot()
    with Snapshot.open(path) as snapshot:
        entries: list[IndexEntry] = list(snapshot.entries())
    requests = [(e.method, e.url, e.session) for e in sorted(entries, key=lambda e: (e.session or "", e.seq))]
    before = base_module(args.base)
    builders: dict[str, Callable[[], Any]] = {
        "before sessions": lambda: before.ReplayIndex(entries),
        "sessions, asked without": lambda: ReplayIndex(entries),
        "sessions, asked with the task's": lambda: ReplayIndex(entries),
    }
    builds: dict[str, list[float]] = {name: [] for name in builders}
    rates: dict[str, list[float]] = {name: [] for name in builders}
    peaks: dict[str, float] = {}
    for round_number in range(args.rounds):
        names = list(builders)
        order = names[round_number % 3 :] + names[: round_number % 3]
        for name in order:
            index, seconds, peaks[name] = timed(builders[name])
            builds[name].append(seconds)
            with_session = name.endswith("task's")
            rates[name].append(lookups_per_s(index, requests, args.passes, with_session))
    base_rate = statistics.median(rates["before sessions"])
    lines = [
        f"# Session-aware matching, {datetime.now(UTC):%Y-%m-%d}",
        "",
        f"`{path.name}`: {len(entries)} entries, {len({e.session for e in entries})} sessions; "
        f"{len(requests)} lookups (every task's own requests) x {args.passes} passes per round, "
        f"{args.rounds} rounds interleaved, "
        f"medians of process CPU time. Machine: 2 shared cores, loaded by other work; read the ratios.",
        "",
        "| index | build | lookups/s | vs before | memory (tracemalloc peak) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in builders:
        rate = statistics.median(rates[name])
        lines.append(
            f"| {name} | {1000 * statistics.median(builds[name]):.1f} ms | {rate:,.0f} | "
            f"{rate / base_rate:.2f}x | {peaks[name]:.1f} MB |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
