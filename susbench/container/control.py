"""The control channel between the host and `susbench browser serve`: JSON lines on a unix socket.

The host asks for a fresh browser (`launch`), starts the replay episode of the task it hands that
browser (`begin`), reads the replay log of an episode (`log`) and the server's state (`status`);
one request per connection, one JSON line each way. The socket sits in
the folder mounted into the container, beside the CDP socket; pages inside cannot reach either.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from susbench.browser import BrowserProfile
from susbench.container.runtime import ContainerError
from susbench.core.models import Frozen, Viewport
from susbench.replayer.service import ReplayLogEntry

CONTROL_SOCKET = "control.sock"
CDP_SOCKET = "cdp.sock"
MAX_LINE = 64 * 1024 * 1024


class ServeProfile(Frozen):
    """The part of a BrowserProfile that means the same inside the container.

    Executable, extension, replayer address and pins are the container's own.
    """

    headless: bool = True
    viewport: Viewport = Viewport()
    locale: str = "en-US"
    timezone: str = "America/New_York"
    block_service_workers: bool = True
    extra_args: tuple[str, ...] = ()

    @classmethod
    def of(cls, profile: BrowserProfile) -> ServeProfile:
        return cls.model_validate(profile.model_dump(include=set(cls.model_fields)))


class LaunchRequest(Frozen):
    """Close the running browser and start a fresh one (new profile folder, new replay episode)."""

    op: Literal["launch"] = "launch"
    profile: ServeProfile = ServeProfile()


class BeginRequest(Frozen):
    """A new replay episode for the browser just handed over, answered first from `session` (the
    task's recorded browser session); a browser started in the background loads nothing before it."""

    op: Literal["begin"] = "begin"
    session: str | None = None


class LogRequest(Frozen):
    """Every request the replayer answered during one episode."""

    op: Literal["log"] = "log"
    episode_number: int


class StatusRequest(Frozen):
    op: Literal["status"] = "status"


class HoldRequest(Frozen):
    """The host keeps this connection open while it wants the container; the server stops when the
    last one closes (also when the host is killed), so no container outlives its host process."""

    op: Literal["hold"] = "hold"


Request = Annotated[
    LaunchRequest | BeginRequest | LogRequest | StatusRequest | HoldRequest, Field(discriminator="op")
]
REQUEST = TypeAdapter(Request)


class Launched(Frozen):
    """A fresh browser is up: its replay episode and how long it took to start."""

    episode_number: int
    chromium: str
    seconds: float


class Began(Frozen):
    episode_number: int


class Status(Frozen):
    chromium: str
    snapshot: str
    snapshot_sha256: str
    extension_sha256: str = Field(description="digest of the built-in extension (`extension_sha256`)")
    episode_number: int
    browser: bool = Field(description="a browser is running")


class EpisodeLog(Frozen):
    entries: tuple[ReplayLogEntry, ...]


class ControlReply(Frozen):
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None


def parse_request(line: bytes) -> Request:
    """One request line; a malformed one raises ValueError with a short reason."""
    try:
        return REQUEST.validate_json(line)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"bad control request: {problems}") from None


class ControlClient:
    """The host's end of the control socket of one container."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path

    def _ask(self, request: Frozen, timeout: float) -> dict[str, Any]:
        with self._connect(timeout) as connection:
            return self._exchange(connection, request)

    def _connect(self, timeout: float) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX)
        connection.settimeout(timeout)
        try:
            connection.connect(str(self.socket_path))
        except OSError as exc:
            connection.close()
            raise ContainerError(f"{self.socket_path}: the browser server does not answer ({exc})") from None
        return connection

    def _exchange(self, connection: socket.socket, request: Frozen) -> dict[str, Any]:
        try:
            connection.sendall(request.model_dump_json().encode() + b"\n")
            with connection.makefile("rb") as stream:
                line = stream.readline(MAX_LINE)
        except OSError as exc:
            raise ContainerError(f"{self.socket_path}: the browser server does not answer ({exc})") from None
        if not line:
            raise ContainerError(f"{self.socket_path}: the browser server closed the connection")
        reply = ControlReply.model_validate(json.loads(line))
        if not reply.ok or reply.result is None:
            raise ContainerError(f"the browser server refused {request!r}: {reply.error}")
        return reply.result

    def launch(self, profile: ServeProfile, timeout: float = 60.0) -> Launched:
        return Launched.model_validate(self._ask(LaunchRequest(profile=profile), timeout))

    def begin(self, session: str | None, timeout: float = 10.0) -> int:
        return Began.model_validate(self._ask(BeginRequest(session=session), timeout)).episode_number

    def log(self, episode_number: int, timeout: float = 30.0) -> tuple[ReplayLogEntry, ...]:
        return EpisodeLog.model_validate(
            self._ask(LogRequest(episode_number=episode_number), timeout)
        ).entries

    def status(self, timeout: float = 10.0) -> Status:
        return Status.model_validate(self._ask(StatusRequest(), timeout))

    def hold(self, timeout: float = 10.0) -> socket.socket:
        """A held connection: close it (or exit) and the container's server stops."""
        connection = self._connect(timeout)
        try:
            self._exchange(connection, HoldRequest())
        except ContainerError:
            connection.close()
            raise
        return connection
