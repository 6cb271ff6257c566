"""Faults during a run, each inflicted for real on a real run (workers, Chromium, replayer, DuckDB):
a renderer or the browser killed mid-episode, the replay server stopping, a full disk under the
database or a snapshot being written, SIGINT/SIGTERM to `susbench run`, and a second run on the same
database. Nothing stored before is lost, and a resumed run ends with every planned episode once.
docs/results.md ("Faults during a run") and docs/reference/controller.md list the outcome of each.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.browser import LocalBackend
from susbench.controller import (
    EpisodeExecutor,
    EpisodeJob,
    RunOptions,
    RunSummary,
    default_snapshot,
    run_benchmark,
)
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.core.errors import SusbenchError
from susbench.core.paths import REPO_ROOT
from susbench.records.episode import EpisodeRecord
from susbench.results.store import Store
from susbench.web import LocalWeb
from tests.support.fault_operators import ACTING_DIR, wait_for_acting
from tests.support.processes import MARK_VARIABLE, ProcessInfo, Watch, family, marked_env, new_mark

pytestmark = pytest.mark.e2e

TASKS = "voltcart-laptop-cart,threadline-scarf-cart"
WATCHING = "tests.support.fault_operators:Watching"
SERVING_THIS_PROCESS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")
EPISODE_S = 8.0
LEFTOVER_GRACE_S = 20.0


@dataclass
class Marked:
    """The processes this test starts carry `mark`; operators announce they act in `acting`."""

    mark: str
    acting: Path
    watch: Watch = field(init=False)

    def __post_init__(self) -> None:
        self.watch = Watch(self.mark, spare=serves_this_process)


def serves_this_process(info: ProcessInfo) -> bool:
    """Multiprocessing's resource tracker and forkserver: they serve this test process, not the run
    (which may have started them, and so marked them), and end with it."""
    return info.ppid == os.getpid() and any(helper in info.cmdline for helper in SERVING_THIS_PROCESS)


@pytest.fixture
def marked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Marked]:
    acting = tmp_path / "acting"
    acting.mkdir()
    monkeypatch.setenv(MARK_VARIABLE, (mark := new_mark()))
    monkeypatch.setenv(ACTING_DIR, str(acting))
    state = Marked(mark=mark, acting=acting)
    yield state
    survivors = state.watch.stop_all()
    state.watch.stop()
    assert not survivors, f"processes the test could not stop: {survivors}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB tmpfs to fill (needs root, as CI and the dev machines run)."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    if os.geteuid() != 0:
        pytest.skip("filling a disk needs a tmpfs mount, which needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mountpoint)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill(folder: Path) -> Path:
    """Write a file into `folder` until its filesystem has no space left; returns it."""
    filler = folder / "filler"
    with suppress(OSError), filler.open("wb") as handle:
        while True:
            handle.write(b"\0" * (1 << 20))
            handle.flush()
    with suppress(OSError), filler.open("ab") as handle:
        while True:
            handle.write(b"\0" * 512)
            handle.flush()
    return filler


def episodes(db: Path) -> list[tuple[str, str, str | None]]:
    """(episode id, outcome, error) of every stored episode, in the order they started."""
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT episode_id, outcome, error FROM episode_outcomes ORDER BY started_at")
    return [(str(episode_id), str(outcome), error) for episode_id, outcome, error in rows]


def resumes_to_completion(options: RunOptions, planned: int) -> None:
    """Re-running the same run stores nothing twice and ends with every planned episode once."""
    again = run_benchmark(options)
    stored = episodes(options.db)
    assert again.planned == planned
    assert again.skipped + again.stored == planned
    assert len(stored) == len({episode_id for episode_id, _, _ in stored}) == planned


def leftovers(watch: Watch) -> list[ProcessInfo]:
    """What the run started and left running."""
    return watch.wait_until_gone(LEFTOVER_GRACE_S)


def chromium(mark: str, kind: str) -> list[ProcessInfo]:
    """The marked Chromium processes of one kind: the page renderers, or the browser process itself."""
    found = [info for info in family(mark) if "chromium" in info.name]
    if kind == "renderer":
        return [p for p in found if "--type=renderer" in p.cmdline and "--extension-process" not in p.cmdline]
    return [p for p in found if "--type=" not in p.cmdline]


def kill_when_acting(marked: Marked, kind: str, killed: list[ProcessInfo]) -> None:
    wait_for_acting(marked.acting)
    for info in chromium(marked.mark, kind):
        with suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGKILL)
            killed.append(info)


@pytest.mark.parametrize(
    ("kind", "symptom"), [("renderer", "renderer process crashed"), ("browser", "browser closed")]
)
def test_a_killed_chromium_process_costs_its_episode_only(
    marked: Marked, tmp_path: Path, kind: str, symptom: str
) -> None:
    options = RunOptions(
        tasks=TASKS, operator=WATCHING, episode_timeout_s=EPISODE_S, db=tmp_path / "r.duckdb"
    )
    killed: list[ProcessInfo] = []
    killer = threading.Thread(target=kill_when_acting, args=(marked, kind, killed), daemon=True)
    killer.start()
    summary = run_benchmark(options)
    killer.join(timeout=5)
    assert killed, f"no {kind} process was found to kill"
    assert (summary.planned, summary.stored) == (2, 2)
    (_, first, first_error), (_, second, second_error) = episodes(options.db)
    print(f"{kind} killed: {first_error}")
    assert first == "error" and first_error is not None and symptom in first_error.lower(), first_error
    assert second != "error" and second_error is None  # the next episode gets a fresh, working browser
    assert not leftovers(marked.watch)
    resumes_to_completion(options, planned=2)


class StopsTheReplayerOnce:
    """The controller's episode runner in this process, whose replay server is stopped (as its own
    shutdown does: thread ended, socket closed) while the first episode's operator is acting."""

    def __init__(self, setup: WorkerSetup, playwright: Playwright, acting: Path) -> None:
        self._runner = EpisodeRunner(setup, LocalBackend(playwright))
        self._acting = acting
        self.stopped_port = 0

    def __enter__(self) -> StopsTheReplayerOnce:
        self._runner.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._runner.__exit__(*exc_info)

    def _stop_replayer(self) -> None:
        wait_for_acting(self._acting)
        replay = self._runner.traffic.replay
        assert replay is not None
        self.stopped_port = replay.port
        replay.__exit__(None, None, None)

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        stopper = threading.Thread(target=self._stop_replayer, daemon=True)
        stopper.start()
        for job in jobs:
            on_result(self._runner.run(job))
        stopper.join(timeout=5)


def test_a_dead_replayer_costs_one_episode_and_is_replaced(
    marked: Marked, web_playwright: Playwright, tmp_path: Path
) -> None:
    options = RunOptions(
        tasks=TASKS, operator=WATCHING, episode_timeout_s=EPISODE_S, db=tmp_path / "p.duckdb"
    )
    executors: list[StopsTheReplayerOnce] = []

    def executor(setup: WorkerSetup, size: int) -> AbstractContextManager[EpisodeExecutor]:
        executors.append(StopsTheReplayerOnce(setup, web_playwright, marked.acting))
        return executors[-1]

    run_benchmark(options, executor=executor)
    (_, first, first_error), (second_id, second, second_error) = episodes(options.db)
    port = executors[0].stopped_port
    assert (first, first_error) == (
        "error",
        f"SusbenchError: the replay server (port {port}) stopped during the episode",
    )
    assert second != "error" and second_error is None
    with Store(options.db, read_only=True) as store:
        _, served = store.query(
            "SELECT count(*), count(*) FILTER (NOT miss) FROM requests WHERE episode_id = ? "
            "AND url LIKE '%.test/%'",
            [second_id],
        )
    ((requests, answered),) = served
    assert requests > 0 and answered == requests  # the new replay server answered the next episode
    resumes_to_completion(options, planned=2)


class FillsTheDiskAfterFirst:
    """Fills the database's filesystem once the first episode is stored."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.filler: Path | None = None

    def started(self, summary: RunSummary) -> None:
        return None

    def stored(self, record: EpisodeRecord, summary: RunSummary) -> None:
        if self.filler is None:
            self.filler = fill(self.folder)


def test_a_full_disk_under_the_database_stops_the_run_and_keeps_what_was_stored(
    small_disk: Path,
) -> None:
    db = small_disk / "results.duckdb"
    options = RunOptions(
        tasks="voltcart-laptop-cart,threadline-scarf-cart,taskflow-storage-checkout",
        operator="careful",
        db=db,
    )
    observer = FillsTheDiskAfterFirst(small_disk)
    with pytest.raises(SusbenchError) as failure:
        run_benchmark(options, observer)
    message = str(failure.value)
    assert message.startswith(f"{db}: could not store episode ")
    assert "No space left on device" in message and "duckdb.org" not in message
    assert len(episodes(db)) == 1  # readable, with the episode stored before the disk filled
    assert observer.filler is not None
    observer.filler.unlink()
    resumes_to_completion(options, planned=3)


def test_a_full_disk_under_a_recording_gives_one_error_and_keeps_older_files(
    small_disk: Path, local_web: LocalWeb
) -> None:
    older = small_disk / "older.wacz"
    shutil.copy(default_snapshot(), older)
    digest = hashlib.sha256(older.read_bytes()).hexdigest()
    fill(small_disk)
    out = small_disk / "new.wacz"
    command = [sys.executable, "-m", "susbench", "record", "https://pizzapalace.test/", "--out", str(out)]
    for rule in local_web.resolve.as_args():
        command += ["--resolve", rule]
    command += ["--upstream-ca", str(local_web.ca_cert_path)]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 2, result.stderr
    assert f"error: {out}: could not write the snapshot" in " ".join(result.stderr.split())
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr
    assert sorted(path.name for path in small_disk.iterdir()) == ["filler", "older.wacz"]
    assert hashlib.sha256(older.read_bytes()).hexdigest() == digest


def run_command(db: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "susbench", "run", "--operator", WATCHING, "--tasks", TASKS]
    return [*command, "--episode-timeout", f"{EPISODE_S:g}", "--db", str(db), *extra]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_finishes_the_running_episodes_and_exits_cleanly(
    marked: Marked, tmp_path: Path, signum: signal.Signals
) -> None:
    db = tmp_path / "s.duckdb"
    command = run_command(db, "--repeats", "2", "--parallel", "2")
    env = marked_env(marked.mark, **{ACTING_DIR: str(marked.acting)})
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wait_for_acting(marked.acting)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=EPISODE_S + 60)
    assert process.returncode == 128 + signum, output
    assert "Traceback" not in output
    stored = episodes(db)
    assert 1 <= len(stored) < 4
    assert all(error is None for _, _, error in stored)  # finished, not cut short
    assert not leftovers(marked.watch)
    finished = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert f"{4 - len(stored)} episodes stored, {len(stored)} already stored (of 4)" in finished.stdout
    assert len({episode_id for episode_id, _, _ in episodes(db)}) == len(episodes(db)) == 4


def test_a_second_run_on_the_same_database_is_refused_by_name(tmp_path: Path) -> None:
    db = tmp_path / "busy.duckdb"
    with Store(db):
        result = subprocess.run(run_command(db), cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert f"error: {db}: another process (PID {os.getpid()}: " in message
    assert "has this results database open" in message
    assert "Traceback" not in result.stderr and "duckdb.org" not in result.stderr
    assert episodes(db) == []
