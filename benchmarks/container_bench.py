"""Container vs local browser, side by side in one run (a benchmark, not a test).

Episodes go through the controller's own worker path (`EpisodeRunner.run`, as a `susbench run`
worker runs them: the worker's browsers, the extension handed the episode, the operator acting,
the signed verdict, the episode's request records) with the `naive` baseline on the bundled
snapshot, for three backends:

- local: Chromium on this machine through the worker's direct replayer (`--browser local`);
- container-warm: one container per worker, a fresh browser and profile per episode, started in
  the background as soon as the previous episode ends (`--browser container`);
- container-fresh: a new container per episode.

"ready" is from asking for the episode's browser until the task's start page has loaded (the
`ready` event: `launch_ms + ms`); "episode" is the stored episode's duration, from asking for a
browser until its request records are collected. Each backend runs the tasks as one block (a
warm container's background launch overlaps only its own episodes, as in a real run), the blocks
alternating order round by round. Also: the image's size, and its build time cold (`--cold`: no
layer cache, Debian and PyPI downloads included) and cached (nothing changed).

    DOCKER_HOST=unix:///run/podman/podman.sock .venv/bin/python benchmarks/container_bench.py \
        [--tasks voltcart.test,taskflow.test] [--rounds 2] [--cold] [--image TAG]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from susbench.catalog.tasks import select_tasks
from susbench.container import DEFAULT_IMAGE, ContainerBackend, DockerApiRuntime, build_image
from susbench.container.image import LABEL_CHROMIUM, LABEL_FONTS, host_ca_bundle
from susbench.controller import EpisodeJob, RunOptions, plan_episodes
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.controller.options import SnapshotFacts, snapshot_facts
from susbench.controller.run import load_materials
from susbench.core.digests import tree_sha256
from susbench.records.episode import EpisodeRecord

BACKENDS = ("local", "container-warm", "container-fresh")


def timings(record: EpisodeRecord) -> dict[str, Any]:
    """Seconds to ready and to the end; an episode that never got its start page has no `ready`."""
    ready = [event.detail for event in record.events if event.kind == "ready"]
    return {
        "ready": (ready[0]["launch_ms"] + ready[0]["ms"]) / 1000 if ready else None,
        "episode": record.duration_s,
        "outcome": record.outcome.kind.value,
        "error": record.error,
        "misses": sum(request.miss for request in record.requests),
    }


def summary(name: str, rows: list[dict[str, Any]], local: dict[str, Any] | None) -> dict[str, Any]:
    """Medians over the episodes that reached their start page; errors are counted and named."""
    timed = [row for row in rows if row["ready"] is not None] or [
        {"ready": float("nan"), "episode": float("nan")}
    ]
    ready = statistics.median(row["ready"] for row in timed)
    whole = statistics.median(row["episode"] for row in timed)
    result: dict[str, Any] = {
        "backend": name,
        "episodes": len(rows),
        "ready_median_s": round(ready, 2),
        "episode_median_s": round(whole, 2),
        "episode_total_s": round(sum(row["episode"] for row in rows), 1),
        "outcomes": sorted({row["outcome"] for row in rows}),
        "errors": sorted({row["error"] for row in rows if row["error"]}),
        "replay_misses": sum(row["misses"] for row in rows),
    }
    if local is not None:
        result["ready_ratio"] = round(ready / local["ready_median_s"], 2)
        result["episode_ratio"] = round(whole / local["episode_median_s"], 2)
    return result


def block(
    name: str, setup: WorkerSetup, jobs: list[EpisodeJob], snapshot: SnapshotFacts, runtime: DockerApiRuntime
) -> list[dict[str, Any]]:
    """One worker of backend `name` runs a warm-up episode (page cache, container start), then the jobs."""
    with ExitStack() as stack:
        backend = None
        if name == "container-fresh":
            backend = stack.enter_context(
                ContainerBackend(
                    snapshot.path,
                    image=setup.image or DEFAULT_IMAGE,
                    runtime=runtime,
                    playwright=stack.enter_context(sync_playwright()),
                    fresh_container=True,
                    extension_sha256=tree_sha256(setup.extension_dir),
                )
            )
        runner = stack.enter_context(EpisodeRunner(setup, backend))
        runner.run(jobs[0])
        return [timings(runner.run(job)) for job in jobs]


def compare(snapshot: SnapshotFacts, tasks: str, rounds: int, image: str, runtime: DockerApiRuntime) -> None:
    options = RunOptions(tasks=tasks, operator="naive", snapshot=snapshot.path, db=Path("unused.duckdb"))
    materials = load_materials(options, snapshot)
    chosen = select_tasks(materials.tasks, tasks, materials.injections)
    jobs = plan_episodes("bench", chosen, materials.injections, options)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in BACKENDS}
    with tempfile.TemporaryDirectory(prefix="susbench-bench-") as work:
        local = WorkerSetup(
            mode="snapshot",
            snapshot=snapshot.path,
            extension_dir=materials.extension_dir,
            tmp_dir=Path(work),
            look=snapshot.look,
        )
        container = local.model_copy(update={"browser": "container", "image": image})
        for number in range(rounds):
            for name in BACKENDS if number % 2 == 0 else reversed(BACKENDS):
                setup = local if name == "local" else container
                rows[name] += block(name, setup, jobs, snapshot, runtime)
    local_summary = summary("local", rows["local"], None)
    print(json.dumps(local_summary), flush=True)
    for name in BACKENDS[1:]:
        print(json.dumps(summary(name, rows[name], local_summary)), flush=True)


def build_times(runtime: DockerApiRuntime, image: str, cold: bool) -> None:
    bundle = host_ca_bundle()
    if cold:
        result = build_image(runtime, tag=image, ca_bundle=bundle, no_cache=True)
        print(json.dumps({"build": "cold (no layer cache)", "seconds": round(result.seconds, 1)}), flush=True)
    result = build_image(runtime, tag=image, ca_bundle=bundle)
    print(json.dumps({"build": "cached (nothing changed)", "seconds": round(result.seconds, 1)}), flush=True)
    labels = result.image.labels
    print(
        json.dumps(
            {
                "image": image,
                "size_mb": round(result.image.size / 1e6),
                "chromium": labels.get(LABEL_CHROMIUM),
                "fonts": labels.get(LABEL_FONTS),
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=None)
    parser.add_argument("--tasks", default="voltcart.test,taskflow.test")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--cold", action="store_true", help="also time a build without the layer cache")
    args = parser.parse_args()
    runtime = DockerApiRuntime()
    build_times(runtime, args.image, args.cold)
    snapshot = snapshot_facts(RunOptions(operator="naive", snapshot=args.snapshot, db=Path("unused.duckdb")))
    assert snapshot is not None, "snapshot mode"
    compare(snapshot, args.tasks, args.rounds, args.image, runtime)


if __name__ == "__main__":
    main()
