"""Every benchmark in its smallest mode, one after another: that each still runs (`make bench-smoke`).

    .venv/bin/python benchmarks/smoke.py [NAME ...]

A benchmark nobody runs rots (the replay benchmark failed on an import for days). Each script of
`benchmarks/` is listed in SMOKE with the arguments of its smallest run; a script missing from the
list fails the run, so a new benchmark is listed when it is added. Figures from a smoke run mean
nothing and no timing is asserted: a benchmark fails its smoke run only by exiting non-zero (or by
passing its time limit). Reports go to a temporary folder, except what the scripts print.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
OUT = "{out}"
LIMIT_S = 600
# The benchmarks that run episodes run one task's.
SMALLEST_TASK = "voltcart-mouse-cart"
HELPERS = {
    "replay_anchors.py": "the anchors replay_bench.py starts (nginx, mitmdump, pywb)",
    "browser_use_alone.py": "Browser Use on its own, run by browser_use_overhead.py",
    "smoke.py": "this runner",
}
SMOKE: dict[str, list[str]] = {
    "replay_bench.py": ["--smoke", "--out", OUT],
    "help_bench.py": ["--smallest", "--out", f"{OUT}/help.md"],
    "chromium_launch.py": ["--launches", "1", "--out", f"{OUT}/chromium-launch.md"],
    "record_bench.py": ["--loads", "1"],
    "replay_sessions_bench.py": ["--rounds", "1", "--passes", "1", "--out", f"{OUT}/replay-sessions.md"],
    "pattern_surface_bench.py": ["--loads", "1", "--idle-s", "0.5"],
    "agent_overhead.py": ["--steps", "1", "--out", f"{OUT}/agent-overhead.md"],
    "episode_bench.py": ["--tasks", SMALLEST_TASK, "--parallel", "1"],
    "worker_memory.py": ["--warmup", "1", "--episodes", "2"],
    "soak.py": [
        "--minutes",
        "0.2",
        "--parallel",
        "1",
        "--every",
        "2",
        "--warmup",
        "0",
        "--out",
        f"{OUT}/soak.md",
    ],
    "ray_bench.py": ["--tasks", SMALLEST_TASK, "--parallel", "1", "--browsers", "1", "--episodes", "0"],
    "container_bench.py": ["--tasks", SMALLEST_TASK, "--rounds", "1"],
    "browser_use_overhead.py": ["--repeats", "1", "--tasks", "1", "--out", f"{OUT}/browser-use.md"],
    "browsergym_overhead.py": ["--repeats", "1", "--tasks", "1", "--out", f"{OUT}/browsergym.md"],
    "people_remote_latency.py": [
        *("--inputs", "1", "--seconds", "1", "--rounds", "1", "--out", f"{OUT}/remote-latency.md")
    ],
    "real_traffic_roundtrip.py": ["--archives", "books.toscrape.warc", "--out", f"{OUT}/real-traffic.md"],
    "anchor_goal.py": ["--split", "tune", "--pages", "1", "--skip-others", "--out", f"{OUT}/anchors.md"],
    "apps_bench.py": ["--smallest", "--out", f"{OUT}/apps.md"],
    "catalog_full.py": ["--smallest", "--out", f"{OUT}/catalog-full.md"],
    "local_model_bench.py": [
        *("run", "--port", "0", "--max-steps", "1", "--tasks", SMALLEST_TASK),
        *("--out", f"{OUT}/local-model.json"),
    ],
}


def unlisted() -> list[str]:
    """Scripts of benchmarks/ that neither have a smoke run nor are a helper of one."""
    return sorted(
        path.name
        for path in BENCHMARKS.glob("*.py")
        if path.name not in SMOKE and path.name not in HELPERS and path.name != "__init__.py"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only these scripts (default: all)")
    args = parser.parse_args()
    missing = unlisted()
    if missing:
        raise SystemExit(f"benchmarks/smoke.py: no smoke run listed for {', '.join(missing)}")
    chosen = args.names or list(SMOKE)
    unknown = [name for name in chosen if name not in SMOKE]
    if unknown:
        raise SystemExit(f"benchmarks/smoke.py: unknown benchmark {', '.join(unknown)}")
    results: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-smoke-") as out:
        for name in chosen:
            command = [sys.executable, str(BENCHMARKS / name), *(a.replace(OUT, out) for a in SMOKE[name])]
            print(f"== bench-smoke: {name} {' '.join(command[2:])}", flush=True)
            start = time.monotonic()
            try:
                code = subprocess.run(command, cwd=ROOT, timeout=LIMIT_S, check=False).returncode
            except subprocess.TimeoutExpired:
                code = -1
            results.append((name, code, time.monotonic() - start))
    print("\n| benchmark | smoke run | s |\n|---|---|---|")
    for name, code, seconds in results:
        verdict = "ok" if code == 0 else ("timed out" if code == -1 else f"exit {code}")
        print(f"| {name} | {verdict} | {seconds:.0f} |")
    failed = [name for name, code, _ in results if code != 0]
    if failed:
        raise SystemExit(f"bench-smoke: {len(failed)} benchmark(s) no longer run: {', '.join(failed)}")


if __name__ == "__main__":
    main()
