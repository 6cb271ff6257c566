"""An app served for a date and seed: started fresh, its content checked, fronted on loopback."""

from __future__ import annotations

import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date as Date
from pathlib import Path

from susbench.apps.base import AppDriver, AppError, Log
from susbench.apps.content import ContentDigest, SiteContent, site_content
from susbench.apps.front import AppFront
from susbench.apps.registry import driver
from susbench.apps.spec import app_cache
from susbench.core.errors import SusbenchError
from susbench.replayer.service import check_port


@dataclass(frozen=True)
class ServedApp:
    """A running app: its driver, the content it was seeded with, and its front."""

    driver: AppDriver
    content: SiteContent
    front: AppFront
    run_dir: Path

    def verify(self) -> ContentDigest:
        """The app's content read back from its database, if it is what the date and seed give;
        else `AppError` naming the first items that differ (a database edited by hand)."""
        found = self.driver.digest()
        expected = self.content.digest(self.driver.content_kinds)
        differences = expected.differences(found)
        if differences:
            shown = "; ".join(differences[:3]) + (
                f"; and {len(differences) - 3} more" if len(differences) > 3 else ""
            )
            raise AppError(
                self.driver.spec.name,
                f"its content differs from date {self.content.date} seed {self.content.seed} "
                f"(expected != found: {shown})",
                "its database was changed; serve it again (each start seeds it afresh)",
            )
        return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def check_free(name: str, host: str, port: int) -> None:
    try:
        check_port(host, port)
    except SusbenchError as exc:
        raise AppError(name, str(exc), "choose another port with --port") from None


def _quiet(message: str) -> None:
    """No progress lines (the default for tests and in-process callers)."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM (a `kill`, a test's timeout) unwinds like Ctrl-C, so the app is stopped and its run
    folder removed; only the main thread may set handlers, elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def serve_app(
    name: str, day: Date, seed: int = 0, port: int = 0, host: str = "127.0.0.1", log: Log = _quiet
) -> Iterator[ServedApp]:
    """The app `name` started in a fresh run folder, seeded for `day` and `seed`, its content
    verified, and fronted on `host`:`port` (0: any free port) until the block ends."""
    app = driver(name)
    if not app.installed():
        raise AppError(name, "not installed here", f"run `make apps` (or `susbench apps install {name}`)")
    check_free(name, host, port)
    runs = app_cache(name) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix=f"{day}-", dir=runs))
    content = site_content(day, seed)
    with _terminated_as_interrupt(), _started(app, run_dir, content, port, host, log) as served:
        yield served


@contextmanager
def _started(
    app: AppDriver, run_dir: Path, content: SiteContent, port: int, host: str, log: Log
) -> Iterator[ServedApp]:
    try:
        backend = free_port()
        app.start(run_dir, backend, content, log)
        try:
            with AppFront(
                app.spec.name, app.spec.hosts, backend, content.date, port=port, host=host
            ) as front:
                served = ServedApp(app, content, front, run_dir)
                served.verify()
                yield served
        finally:
            app.stop()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
