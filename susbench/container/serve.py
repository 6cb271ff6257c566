"""`susbench browser serve`: the one process inside the browser container.

It runs the offline replayer (direct mode) on the container's loopback, and Chromium with the
built-in injection extension in a fresh profile folder, launched exactly as on the host
(`LocalBackend`, so Playwright's own flags and emulation are the same and so are the pixels). The
container has no network; the mounted socket folder holds the only two ways in: `cdp.sock`, piped
to Chromium's DevTools port, and `control.sock`, where the host asks for a fresh browser per
episode, starts the episode's replay of its task's recorded session and reads its replay log.
"""

from __future__ import annotations

import asyncio
import json
import queue
import signal
import threading
import time
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from susbench.browser import BrowserProfile, LocalBackend, chromium_version, find_chromium
from susbench.browser.driver import playwright_driver
from susbench.container.control import (
    CDP_SOCKET,
    CONTROL_SOCKET,
    Began,
    BeginRequest,
    ControlReply,
    EpisodeLog,
    HoldRequest,
    Launched,
    LaunchRequest,
    LogRequest,
    ServeProfile,
    Status,
    parse_request,
)
from susbench.container.relay import IoLoop, piping, serve_unix
from susbench.core.digests import tree_sha256
from susbench.core.models import Frozen
from susbench.replayer.direct import DirectReplayServer

POLL_S = 0.5


@dataclass
class _Job:
    profile: ServeProfile
    done: Future[Launched]


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class BrowserServer:
    """Replayer + one browser at a time, driven through the control socket."""

    def __init__(
        self, snapshot: Path, socket_dir: Path, extension_dir: Path, hold_timeout_s: float | None = None
    ) -> None:
        self.snapshot = snapshot
        self.socket_dir = socket_dir
        self.extension_dir = extension_dir
        self.hold_timeout_s = hold_timeout_s
        self._holders = 0
        self._held = False
        self._stopping = threading.Event()
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self._cdp_port: int | None = None
        self._browser = ExitStack()
        self._chromium = chromium_version(find_chromium())
        self._extension_sha256 = tree_sha256(extension_dir)

    def run(self, launch: bool) -> None:
        """Serve until SIGTERM/SIGINT, or (with a hold timeout) until the host lets go.

        `launch` starts a browser right away, with the snapshot's viewport, locale and time zone.
        With `hold_timeout_s`, a host must hold a control connection within that time, and the server
        stops when the last held connection closes.
        """
        signal.signal(signal.SIGTERM, _stop)
        with ExitStack() as stack:
            self._replay = stack.enter_context(DirectReplayServer(self.snapshot))
            self._backend = LocalBackend(stack.enter_context(playwright_driver()))
            stack.callback(self._browser.close)
            io = IoLoop("susbench-serve-io")
            stack.callback(io.close)
            if launch:
                manifest = self._replay.snapshot.manifest
                self._launch(
                    ServeProfile(
                        viewport=manifest.viewport, locale=manifest.locale, timezone=manifest.timezone
                    )
                )
            io.call(serve_unix(self.socket_dir / CDP_SOCKET, piping(self._open_cdp)))
            io.call(serve_unix(self.socket_dir / CONTROL_SOCKET, self._control))
            print(json.dumps({"ready": self._status().model_dump()}), flush=True)
            started = time.monotonic()
            try:
                while not self._stopping.is_set():
                    if self._unclaimed(started):
                        break
                    try:
                        job = self._jobs.get(timeout=POLL_S)
                    except queue.Empty:
                        continue
                    self._run(job)
            except KeyboardInterrupt:
                pass
            print(json.dumps({"stopped": True}), flush=True)

    def _unclaimed(self, started: float) -> bool:
        """No host came to hold this server within the hold timeout."""
        timeout = self.hold_timeout_s
        return timeout is not None and not self._held and time.monotonic() - started > timeout

    def _run(self, job: _Job) -> None:
        try:
            job.done.set_result(self._launch(job.profile))
        except Exception as exc:  # noqa: BLE001 - the host gets the reason; the server keeps serving
            job.done.set_exception(exc)

    def _launch(self, profile: ServeProfile) -> Launched:
        """Close the running browser and start a fresh one in a new profile folder and episode."""
        started = time.monotonic()
        self._cdp_port = None
        self._browser.close()
        episode_number = self._replay.new_episode()
        session = self._browser.enter_context(
            self._backend.launch(
                BrowserProfile(
                    headless=profile.headless,
                    viewport=profile.viewport,
                    locale=profile.locale,
                    timezone=profile.timezone,
                    host_resolver_rules=self._replay.host_resolver_rules,
                    spki_pins=(self._replay.spki,),
                    extension_dir=self.extension_dir,
                    cdp=True,
                    block_service_workers=profile.block_service_workers,
                    extra_args=profile.extra_args,
                )
            )
        )
        assert session.cdp_endpoint is not None
        self._cdp_port = urlsplit(session.cdp_endpoint).port
        return Launched(
            episode_number=episode_number,
            chromium=self._chromium,
            seconds=round(time.monotonic() - started, 3),
        )

    def _status(self) -> Status:
        return Status(
            chromium=self._chromium,
            snapshot=self.snapshot.name,
            snapshot_sha256=self._replay.snapshot.sha256,
            extension_sha256=self._extension_sha256,
            episode_number=self._replay.episode_number,
            browser=self._cdp_port is not None,
        )

    async def _open_cdp(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._cdp_port is None:
            raise ConnectionRefusedError("no browser is running")
        return await asyncio.open_connection("127.0.0.1", self._cdp_port)

    async def _control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readuntil(b"\n")
            reply = await self._answer(line)
            writer.write(reply.model_dump_json().encode() + b"\n")
            await writer.drain()
            if reply.ok and isinstance(parse_request(line), HoldRequest):
                await self._hold(reader)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        except asyncio.CancelledError:  # shutting down
            pass
        finally:
            writer.close()

    async def _hold(self, reader: asyncio.StreamReader) -> None:
        """Until the host closes the connection (or its process ends); the last one out stops us."""
        self._holders += 1
        self._held = True
        try:
            while await reader.read(4096):
                pass
        finally:
            self._holders -= 1
            if self._holders == 0:
                self._stopping.set()

    async def _answer(self, line: bytes) -> ControlReply:
        try:
            request = parse_request(line)
            result: Frozen
            if isinstance(request, LaunchRequest):
                job = _Job(request.profile, Future())
                self._jobs.put(job)
                result = await asyncio.wrap_future(job.done)
            elif isinstance(request, BeginRequest):
                result = Began(episode_number=self._replay.new_episode(request.session))
            elif isinstance(request, LogRequest):
                entries = self._replay.episode_log(request.episode_number)
                result = EpisodeLog(entries=tuple(entries))
            else:  # status, and the answer to a hold
                result = self._status()
        except Exception as exc:  # noqa: BLE001 - every failure is answered, never crashes the server
            return ControlReply(ok=False, error=f"{type(exc).__name__}: {exc}")
        return ControlReply(ok=True, result=result.model_dump(mode="json"))
