"""`susbench run --backend ray` end to end on real Ray and real Chromium: the local backend's outcomes,
resuming after a killed driver, a killed worker retried once then stored as an error, a stuck episode
cancelled at its timeout, and two nodes started with `ray start` both running episodes.

Every process these tests start carries a mark in its environment or descends from one that does;
each test checks that they end (or are stopped) and that none is left.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest

from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store
from tests.support.processes import ProcessInfo, descendants, marked
from tests.support.ray_cluster import RaySandbox, start_node

pytestmark = pytest.mark.e2e

# Short tasks of four pattern types (each carries only that type's injection).
TASKS = "voltcart-laptop-cart,threadline-scarf-cart,bazaarly-blanket-cart,taskflow-ai-addon-cart"
EPISODE_WORKER = "ray::run_episode"


def reproducible(db: Path) -> dict[str, Any]:
    """Per episode, everything a deterministic operator must reproduce whatever ran it: the plan, the
    outcome, completion and steps, the operator's decisions and the extension's evidence in order.
    (Timestamps, durations and the outcome checksum, which covers the evidence's timestamps, differ
    between any two runs.)"""
    with Store(db, read_only=True) as store:
        _, episodes = store.query(
            "SELECT e.episode_id, e.task_id, e.repeat, e.injection_id, e.seed, e.steps, e.completed, o.kind, "
            "o.reason FROM episodes e JOIN outcomes o USING (episode_id) ORDER BY 1"
        )
        _, events = store.query(
            "SELECT episode_id, source, kind, detail FROM events WHERE source = 'extension' OR "
            "(source = 'operator' AND kind = 'decide') ORDER BY episode_id, source, seq"
        )
    evidence: dict[str, list[tuple[str, str, str]]] = {}
    for episode_id, source, kind, detail in events:
        evidence.setdefault(episode_id, []).append((source, kind, detail))
    return {row[0]: (*row[1:], evidence.get(row[0], [])) for row in episodes}


def controller_events(db: Path, kind: str) -> list[tuple[str, dict[str, Any]]]:
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT episode_id, detail FROM events WHERE source = 'controller' AND kind = ? ORDER BY ALL",
            [kind],
        )
    return [(episode_id, json.loads(detail)) for episode_id, detail in rows]


class Lines:
    """A command's output lines, read on a thread so the test can watch processes meanwhile."""

    def __init__(self, process: Popen[str]) -> None:
        self.process = process
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def drain(self) -> None:
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return
            if line is not None:
                self.seen.append(line)

    def episodes(self) -> int:
        self.drain()
        return sum(line.startswith("episode ") for line in self.seen)

    def text(self) -> str:
        self.drain()
        return "".join(self.seen)


def wait_for(condition: Callable[[], Any], what: str, lines: Lines, timeout: float = 240.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        if lines.process.poll() is not None:
            pytest.fail(f"the run ended while waiting for {what}:\n{lines.text()}")
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}:\n{lines.text()}")


def busy_workers(mark: str) -> list[ProcessInfo]:
    """Ray workers of this sandbox that are running an episode in Chromium right now."""
    return [
        info
        for info in marked(mark)
        if info.cmdline.startswith(EPISODE_WORKER)
        and any(child.name == "chromium" for child in descendants(info.pid))
    ]


def leftovers(sandbox: RaySandbox) -> list[ProcessInfo]:
    """Episode workers and browsers still running (a cluster's own daemons are not counted)."""
    running = sandbox.watch.running()
    return [info for info in running if info.name == "chromium" or info.cmdline.startswith(EPISODE_WORKER)]


def test_ray_reproduces_local_outcomes_and_resumes_after_a_killed_driver(
    ray_sandbox: RaySandbox, tmp_path: Path
) -> None:
    local_db, ray_db = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    run_benchmark(RunOptions(tasks=TASKS, operator="random", parallel=2, db=local_db))
    command = [
        "run",
        "--operator",
        "random",
        "--tasks",
        TASKS,
        "--backend",
        "ray",
        "--browsers-per-node",
        "2",
    ]
    command += ["--db", str(ray_db)]
    lines = Lines(ray_sandbox.susbench(*command))
    wait_for(lambda: lines.episodes() >= 2, "two stored episodes", lines)
    lines.process.send_signal(signal.SIGKILL)
    lines.process.wait(timeout=30)
    with Store(ray_db) as store:
        stored = len(store.query("SELECT * FROM episodes")[1])
    assert 2 <= stored < 4
    # The embedded Ray (its daemons, agents, workers and their browsers) dies with its driver.
    assert ray_sandbox.watch.wait_until_gone(timeout=150) == []

    resumed = ray_sandbox.susbench(*command)
    output, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, output
    assert f"{4 - stored} episodes stored, {stored} already stored (of 4)" in output
    expected = reproducible(local_db)
    assert len(expected) == 4 and all(evidence for *_, evidence in expected.values())
    assert reproducible(ray_db) == expected
    placed = controller_events(ray_db, "placed")
    assert sorted(episode for episode, _ in placed) == sorted(reproducible(local_db))
    # The snapshot reached the one node once, across both driver sessions (the node keeps its copy).
    assert sum("snapshot" in detail["fetched"] for _, detail in placed) <= 1
    assert len(list((ray_sandbox.root / "driver" / "artifacts").glob("*.wacz"))) == 1
    assert ray_sandbox.watch.wait_until_gone(timeout=150) == []


def test_killed_workers_and_a_stuck_episode(ray_sandbox: RaySandbox, tmp_path: Path) -> None:
    """One browser, three episodes in order: the first loses its worker once (retried, stored as
    scored), the second twice (stored as an error naming both deaths), the third hangs (SIGSTOP)
    and is cancelled at its timeout."""
    db = tmp_path / "faults.duckdb"
    tasks = "voltcart-laptop-cart,threadline-scarf-cart,bazaarly-blanket-cart"
    command = [
        "run",
        "--operator",
        "careful",
        "--tasks",
        tasks,
        "--backend",
        "ray",
        "--browsers-per-node",
        "1",
    ]
    command += ["--episode-timeout", "20", "--db", str(db)]
    lines = Lines(ray_sandbox.susbench(*command))

    def busy_worker() -> ProcessInfo:
        """The one worker running an episode (one browser: one at a time)."""
        return wait_for(lambda: busy_workers(ray_sandbox.mark), "an episode running on a Ray worker", lines)[
            0
        ]

    def kill(worker: ProcessInfo) -> None:
        def gone() -> bool:
            return all(info.pid != worker.pid for info in marked(ray_sandbox.mark))

        os.kill(worker.pid, signal.SIGKILL)
        wait_for(gone, "the killed worker to go", lines)

    kill(busy_worker())
    wait_for(lambda: lines.episodes() == 1, "the retried episode to be stored", lines)
    kill(busy_worker())
    kill(busy_worker())
    wait_for(lambda: lines.episodes() == 2, "the twice-killed episode to be stored", lines)
    os.kill(busy_worker().pid, signal.SIGSTOP)
    output, _ = lines.process.communicate(timeout=300)
    assert lines.process.returncode == 0, lines.text() + output

    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT e.task_id, o.kind, e.error FROM episodes e JOIN outcomes o USING (episode_id) "
            "ORDER BY e.started_at"
        )
    assert sorted(task for task, _, _ in rows) == sorted(tasks.split(",")), rows
    retried_ok, killed_twice, stuck = [(outcome, error) for _, outcome, error in rows]
    assert retried_ok == ("avoided", None)
    assert killed_twice[0] == "error"
    assert killed_twice[1].startswith("retried once on another worker: worker died: ")
    assert "; then worker died: " in killed_twice[1]
    assert stuck == ("error", "episode timed out after 20 s")
    retried = controller_events(db, "retried")
    assert [detail["attempt"] for _, detail in retried] == [2, 2]
    assert all(detail["reason"].startswith("worker died: ") for _, detail in retried)
    assert ray_sandbox.watch.wait_until_gone(timeout=150) == []


def test_two_nodes_on_one_machine_both_run_episodes(ray_sandbox: RaySandbox, tmp_path: Path) -> None:
    address = start_node(ray_sandbox, "head", browsers=1)
    start_node(ray_sandbox, "node-2", browsers=1, head_port=int(address.rsplit(":", 1)[1]))
    db = tmp_path / "cluster.duckdb"
    driver = ray_sandbox.susbench(
        "run",
        "--operator",
        "naive",
        "--tasks",
        TASKS,
        "--backend",
        "ray",
        "--ray-address",
        address,
        "--db",
        str(db),
    )
    output, _ = driver.communicate(timeout=600)
    assert driver.returncode == 0, output
    assert "4 episodes stored, 0 already stored (of 4)" in output
    placed = controller_events(db, "placed")
    nodes = {detail["node"] for _, detail in placed}
    assert len(nodes) == 2, placed
    # Each node fetched the snapshot and the extension exactly once, whatever number of episodes it ran.
    for node in nodes:
        fetched = [name for _, detail in placed if detail["node"] == node for name in detail["fetched"]]
        assert sorted(fetched) == ["extension_dir", "snapshot"], (node, placed)
    with Store(db, read_only=True) as store:
        _, outcomes = store.query("SELECT DISTINCT outcome FROM episode_outcomes")
    assert outcomes == [("not_avoided",)]
    # The job's workers and browsers end with the driver; the nodes' daemons stay until stopped.
    deadline = time.monotonic() + 120
    while leftovers(ray_sandbox) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert leftovers(ray_sandbox) == []
