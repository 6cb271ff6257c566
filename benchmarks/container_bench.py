"""Container vs local browser, side by side in one run (a benchmark, not a test).

Episodes: the controller's own episode code (`EpisodeRunner._drive`: extension handed the episode,
start page loaded, the operator acting, the extension's signed verdict) with the `naive` baseline
on the bundled snapshot, for three backends:

Episodes: the controller's own episode code (`EpisodeRunner._drive`: extension handed the episode,
start page loaded, the operator acting, the extension's signed verdict) with the `naive` baseline
on the bundled snapshot, alternating backends task by task so load drifts hit all of them alike:

- local: Chromium on this machine through the host's direct replayer (what `susbench run` does);
- container-warm: one container kept, a fresh browser and profile per episode, started in the
  background as soon as the previous episode ends (the default);
- container-fresh: a new container per episode.

"ready" is from asking the backend for a browser until the task's start page has loaded; "episode"
is from asking for a browser until it is closed. Also: the image's size, and its build time cold
(`--cold`: no layer cache, Debian and PyPI downloads included) and cached (nothing changed).

    DOCKER_HOST=unix:///run/podman/podman.sock .venv/bin/python benchmarks/container_bench.py \
        [--tasks voltcart.test,taskflow.test] [--rounds 2] [--cold]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

from playwright.sync_api import Playwright, sync_playwright

from replayer.direct import DirectReplayServer
from susbench.browser import BrowserProfile, BrowserSession, LocalBackend
from susbench.container import DEFAULT_IMAGE, ContainerBackend, DockerApiRuntime, build_image
from susbench.container.image import host_ca_bundle
from susbench.controller import (
    EpisodeJob,
    EpisodeRunner,
    RunOptions,
    WorkerSetup,
    default_snapshot,
    load_injection_catalog,
    plan_episodes,
)
from susbench.injection_catalog import build_extension
from susbench.operators import make_operator
from susbench.paths import TASKS_DIR
from susbench.tasks import load_tasks, select_tasks

Launcher = Callable[[], AbstractContextManager[BrowserSession]]


def episode(runner: EpisodeRunner, job: EpisodeJob, launch: Launcher) -> dict[str, Any]:
    """One episode as the controller runs it; seconds to ready and to the end, and the outcome."""
    started = time.monotonic()
    ready: list[float] = []

    def note(source: str, kind: str, detail: dict[str, Any]) -> None:
        if kind == "ready":
            ready.append(time.monotonic() - started)

    with launch() as session:
        operator = make_operator(job.episode.operator, job.episode.seed)
        _, _, report = runner._drive(job, session, operator, note)
    return {"ready": ready[0], "episode": time.monotonic() - started, "outcome": report.outcome.value}


def summary(name: str, rows: list[dict[str, Any]], local: dict[str, float] | None) -> dict[str, Any]:
    ready = statistics.median(row["ready"] for row in rows)
    whole = statistics.median(row["episode"] for row in rows)
    result: dict[str, Any] = {
        "backend": name,
        "episodes": len(rows),
        "ready_median_s": round(ready, 2),
        "episode_median_s": round(whole, 2),
        "episode_total_s": round(sum(row["episode"] for row in rows), 1),
        "outcomes": sorted({row["outcome"] for row in rows}),
    }
    if local is not None:
        result["ready_ratio"] = round(ready / local["ready_median_s"], 2)
        result["episode_ratio"] = round(whole / local["episode_median_s"], 2)
    return result


def compare(
    playwright: Playwright, snapshot: Path, tasks: str, rounds: int, runtime: DockerApiRuntime
) -> None:
    """Each backend runs the tasks as one block (so a warm container's background launch overlaps
    only its own episodes, as in a real run); blocks alternate order round by round."""
    injections = load_injection_catalog()
    chosen = select_tasks(load_tasks(TASKS_DIR, injections), tasks, injections)
    options = RunOptions(tasks=tasks, operator="naive", db=Path("unused.duckdb"))
    jobs = plan_episodes("bench", chosen, injections, options, "snapshot")
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="susbench-bench-")))
        extension = build_extension(list(injections.values()))
        runner = EpisodeRunner(
            WorkerSetup(mode="snapshot", snapshot=snapshot, extension_dir=extension, tmp_dir=work)
        )
        replay = stack.enter_context(DirectReplayServer(snapshot))
        manifest = replay.snapshot.manifest
        look = {"viewport": manifest.viewport, "locale": manifest.locale, "timezone": manifest.timezone}
        local_profile = BrowserProfile(
            host_resolver_rules=replay.host_resolver_rules,
            spki_pins=(replay.spki,),
            extension_dir=extension,
            **look,
        )
        container_profile = BrowserProfile(**look)

        def launcher(name: str, block: ExitStack) -> Launcher:
            if name == "local":
                backend = LocalBackend(playwright)

                def local() -> AbstractContextManager[BrowserSession]:
                    replay.new_episode()
                    return backend.launch(local_profile)

                return local
            container = block.enter_context(
                ContainerBackend(
                    snapshot,
                    runtime=runtime,
                    playwright=playwright,
                    fresh_container=name == "container-fresh",
                )
            )
            return lambda: container.launch(container_profile)

        names = ["local", "container-warm", "container-fresh"]
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for number in range(rounds):
            for name in names if number % 2 == 0 else reversed(names):
                with ExitStack() as block:
                    launch = launcher(name, block)
                    episode(runner, jobs[0], launch)  # warm-up: page cache, container start
                    rows[name] += [episode(runner, job, launch) for job in jobs]
    local_summary = summary("local", rows["local"], None)
    print(json.dumps(local_summary), flush=True)
    for name in names[1:]:
        print(json.dumps(summary(name, rows[name], local_summary)), flush=True)


def build_times(runtime: DockerApiRuntime, cold: bool) -> None:
    bundle = host_ca_bundle()
    if cold:
        result = build_image(runtime, tag=DEFAULT_IMAGE, ca_bundle=bundle, no_cache=True)
        print(json.dumps({"build": "cold (no layer cache)", "seconds": round(result.seconds, 1)}), flush=True)
    result = build_image(runtime, tag=DEFAULT_IMAGE, ca_bundle=bundle)
    print(json.dumps({"build": "cached (nothing changed)", "seconds": round(result.seconds, 1)}), flush=True)
    labels = result.image.labels
    print(
        json.dumps(
            {
                "image": DEFAULT_IMAGE,
                "size_mb": round(result.image.size / 1e6),
                "chromium": labels.get("io.susbench.chromium"),
                "fonts": labels.get("io.susbench.fonts"),
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=None)
    parser.add_argument("--tasks", default="voltcart.test,taskflow.test")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="also time a build without the layer cache")
    args = parser.parse_args()
    runtime = DockerApiRuntime()
    build_times(runtime, args.cold)
    with sync_playwright() as playwright:
        compare(playwright, args.snapshot or default_snapshot(), args.tasks, args.rounds, runtime)


if __name__ == "__main__":
    main()
