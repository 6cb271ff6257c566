"""Soak: a long `susbench run` of scripted episodes, watched for growth, leaks and lost episodes.

A benchmark, not a CI test. The real command runs `--parallel` episodes at once (default 4) of the
`random` baseline over every task, repeated more often than it can finish, for `--minutes` (default
30); then it gets SIGINT, as a person would stop it, and finishes the episodes under way. Every
`--every` seconds it samples the controller's RSS and open descriptors, each worker's (the worker
runs the replayer in direct mode, Playwright's client and the episode's operator), and the Chromium
processes alive. Reported:
- growth after warm-up: the median of the last window against the median of the first window after
  `--warmup` minutes (goal < 10%), for the controller and for the workers (summed);
- leftovers: processes of the run (found by a mark every child inherits) still alive 20 s after the
  command exited (goal 0);
- lost episodes: reported stored by the command but absent from the database, or stored as `error`
  (goal 0), and duplicates (the database refuses them, so 0 by construction; checked anyway).

    .venv/bin/python -m benchmarks.soak [--minutes 30] [--parallel 4] [--every 10] [--warmup M]
        [--out benchmarks/results/soak-DATE.md]
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks., tests.

from susbench.core.paths import REPO_ROOT
from susbench.results.store import Store
from tests.support.processes import ProcessInfo, Watch, descendants, marked_env, new_mark

KIB = 1024
MIB = 1024 * KIB
REPEATS_PER_MINUTE = 6  # repeats of the task set planned per soak minute: more than a run finishes (it
# is stopped by time), yet small, since the controller holds the whole plan (10,000 repeats: ~1 GB)
LEFTOVER_GRACE_S = 20.0
STOP_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Sample:
    minute: float
    controller_rss_mib: float
    controller_fds: int
    workers: int
    workers_rss_mib: float
    workers_fds: int
    chromium: int
    stored: int


def rss_mib(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * KIB / MIB
    return 0.0


def fds(pid: int) -> int:
    try:
        return sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return 0


def workers(below: list[ProcessInfo], controller: int) -> list[ProcessInfo]:
    """The pool's worker processes: the controller's spawned children (not its resource tracker)."""
    return [p for p in below if p.ppid == controller and "multiprocessing.spawn" in p.cmdline]


class StoredCounter:
    """Counts the command's `episode ...` lines (one per stored episode) as they are printed."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.count = 0
        self.tail: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.count += line.startswith("episode ")
            self.tail = [*self.tail[-20:], line.rstrip()]

    def join(self) -> None:
        self._thread.join(timeout=30)


def sample(controller: int, started: float, counter: StoredCounter) -> Sample:
    below = descendants(controller)
    pool = workers(below, controller)
    return Sample(
        minute=round((time.monotonic() - started) / 60, 2),
        controller_rss_mib=round(rss_mib(controller), 1),
        controller_fds=fds(controller),
        workers=len(pool),
        workers_rss_mib=round(sum(rss_mib(p.pid) for p in pool), 1),
        workers_fds=sum(fds(p.pid) for p in pool),
        chromium=sum(1 for p in below if "chromium" in p.name),
        stored=counter.count,
    )


def growth(samples: list[Sample], field: str, warmup: float, window: float) -> float | None:
    """Relative growth of `field`: median of the last window against the first window after warm-up,
    counted from the first stored episode (start-up and planning are not the steady state)."""
    running = [s for s in samples if s.stored > 0]
    if not running:
        return None
    warmup += running[0].minute
    end = samples[-1].minute
    first = [getattr(s, field) for s in samples if warmup <= s.minute < warmup + window]
    last = [getattr(s, field) for s in samples if s.minute >= end - window]
    if not first or not last or end - window < warmup + window:
        return None
    return statistics.median(last) / statistics.median(first) - 1


def stored_episodes(db: Path) -> tuple[int, int, int]:
    """(rows, distinct episode ids, error outcomes) in the database."""
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT count(*), count(DISTINCT episode_id), count(*) FILTER (outcome = 'error') "
            "FROM episode_outcomes"
        )
    total, distinct, errors = rows[0]
    return int(total), int(distinct), int(errors)


def soak(minutes: float, parallel: int, every: float, warmup: float) -> dict[str, object]:
    mark = new_mark()
    watch = Watch(mark)
    with tempfile.TemporaryDirectory(prefix="susbench-soak-") as folder:
        db = Path(folder) / "soak.duckdb"
        command = [sys.executable, "-m", "susbench", "run", "--operator", "random", "--tasks", "all"]
        repeats = max(3, math.ceil(minutes * REPEATS_PER_MINUTE))
        command += ["--repeats", str(repeats), "--parallel", str(parallel), "--db", str(db)]
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=marked_env(mark, PYTHONUNBUFFERED="1", COLUMNS="200"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        counter = StoredCounter(process)
        started = time.monotonic()
        samples: list[Sample] = []
        while time.monotonic() - started < minutes * 60 and process.poll() is None:
            samples.append(sample(process.pid, started, counter))
            print(json.dumps(asdict(samples[-1])), flush=True)
            time.sleep(every)
        process.send_signal(signal.SIGINT)
        stop_started = time.monotonic()
        exit_code = process.wait(timeout=STOP_TIMEOUT_S)
        stop_s = time.monotonic() - stop_started
        counter.join()
        left = watch.wait_until_gone(LEFTOVER_GRACE_S)
        survivors = watch.stop_all()
        watch.stop()
        rows, distinct, errors = stored_episodes(db) if db.exists() else (0, 0, 0)
    window = max(1.0, minutes / 5)
    return {
        "minutes": minutes,
        "parallel": parallel,
        "exit_code": exit_code,
        "stop_s": round(stop_s, 1),
        "reported_stored": counter.count,
        "stored": rows,
        "distinct": distinct,
        "errors": errors,
        "lost": max(0, counter.count - rows) + errors,
        "leftovers": [f"{p.pid} {p.cmdline[:120]}" for p in left],
        "survivors_after_kill": len(survivors),
        "warmup_min": warmup,
        "window_min": window,
        "controller_rss_growth": growth(samples, "controller_rss_mib", warmup, window),
        "workers_rss_growth": growth(samples, "workers_rss_mib", warmup, window),
        "controller_fds_growth": growth(samples, "controller_fds", warmup, window),
        "workers_fds_growth": growth(samples, "workers_fds", warmup, window),
        "tail": counter.tail[-3:],
        "samples": [asdict(s) for s in samples],
    }


def first_stored(samples: list[dict[str, float]]) -> float | str:
    return next((s["minute"] for s in samples if s["stored"] > 0), "never")


def percent(value: object) -> str:
    return "n/a (run too short)" if not isinstance(value, float) else f"{100 * value:+.1f}%"


def report(result: dict[str, object], note: str) -> str:
    samples = result["samples"]
    assert isinstance(samples, list)
    lines = [
        f"# Soak, {date.today().isoformat()}",
        "",
        f"`python -m benchmarks.soak --minutes {result['minutes']:g} --parallel {result['parallel']}`: "
        "the `random` baseline over every task, on the bundled snapshot (direct replay), stopped by "
        "SIGINT at the end.",
        "",
        note,
        "",
        "| figure | value | goal |",
        "|---|---|---|",
        f"| controller RSS growth after {result['warmup_min']:g} min warm-up "
        f"(median of last {result['window_min']:g} min vs first) | "
        f"{percent(result['controller_rss_growth'])} | < 10% |",
        f"| warm-up counted from the first stored episode, at minute {first_stored(samples)} | | |",
        f"| workers' RSS growth (summed), same windows | {percent(result['workers_rss_growth'])} | < 10% |",
        f"| controller open fds growth | {percent(result['controller_fds_growth'])} | flat |",
        f"| workers' open fds growth | {percent(result['workers_fds_growth'])} | flat |",
        f"| leftover processes 20 s after exit | {len(result['leftovers'])} | 0 |",  # type: ignore[arg-type]
        f"| lost episodes (reported but not stored, or `error`) | {result['lost']} | 0 |",
        f"| episodes stored / reported / distinct | {result['stored']} / {result['reported_stored']} / "
        f"{result['distinct']} | equal |",
        f"| exit code after SIGINT; time to stop | {result['exit_code']}; {result['stop_s']} s | 130 |",
        "",
        "## Samples",
        "",
        "| minute | controller RSS MiB | fds | workers | workers RSS MiB | fds | Chromium procs | stored |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['minute']} | {s['controller_rss_mib']} | {s['controller_fds']} | {s['workers']} | "
        f"{s['workers_rss_mib']} | {s['workers_fds']} | {s['chromium']} | {s['stored']} |"
        for s in samples
    ]
    if result["leftovers"]:
        lines += ["", "Leftovers:", *(f"- {entry}" for entry in result["leftovers"])]  # type: ignore[union-attr]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=None, help="minutes (default: a fifth of the run)")
    parser.add_argument("--note", default="", help="a line about the machine (load, other work)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "benchmarks" / "results" / f"soak-{date.today().isoformat()}.md",
    )
    args = parser.parse_args()
    warmup = args.warmup if args.warmup is not None else args.minutes / 5
    result = soak(args.minutes, args.parallel, args.every, warmup)
    args.out.write_text(report(result, args.note))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
