"""The container backend: the episode's browser runs in an airgapped container, driven over CDP.

Same `BrowserBackend` Protocol as `LocalBackend`: `launch(profile)` yields a `BrowserSession`
whose `context` is the browser's default context (the only one where the extension runs), reached
with Playwright's `connect_over_cdp` through a loopback relay to the container's CDP socket.

The container replays the snapshot it was started with (mounted read-only) with its own
replayer: `launch(profile, capture_session=...)` starts the episode's replay of its task's recorded
browser session, and the launched session carries that episode's replay log (`ContainerSession.replay_log`).
By default one container stays warm across launches: each episode gets a fresh browser with a
fresh profile folder in it, started in the background as soon as the previous episode ends
(`benchmarks/container_bench.py` measured this against a new container per episode);
`fresh_container=True` gives every episode its own container instead.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from susbench.browser import BrowserProfile, BrowserSession, playwright_driver
from susbench.container.control import (
    CDP_SOCKET,
    CONTROL_SOCKET,
    ControlClient,
    Launched,
    ServeProfile,
    Status,
)
from susbench.container.image import DEFAULT_IMAGE, SNAPSHOT_MOUNT, SOCKET_MOUNT
from susbench.container.relay import TcpToUnixRelay
from susbench.container.runtime import (
    ContainerError,
    ContainerRuntime,
    ContainerSpec,
    DockerApiRuntime,
    Mount,
)
from susbench.core.errors import BrowserError, SnapshotError
from susbench.replayer.service import Coverage, ReplayLogEntry

if TYPE_CHECKING:
    from playwright.sync_api import Playwright

READY_TIMEOUT_S = 60.0
HOLD_TIMEOUT_S = 60
POLL_S = 0.05
ROLE_LABEL = "io.susbench.role"


@dataclass(frozen=True)
class ContainerSession(BrowserSession):
    """A BrowserSession whose browser and replayer live in a container."""

    container_id: str
    episode_number: int
    chromium: str
    control: ControlClient

    def replay_log(self) -> tuple[ReplayLogEntry, ...]:
        """Every request the container's replayer answered for this session's browser."""
        return self.control.log(self.episode_number)

    def coverage(self) -> Coverage:
        return Coverage.of(list(self.replay_log()))


class BrowserContainer:
    """One running browser container and the host's ends of its two sockets.

    The sockets live in a folder that only this user can reach (0700), inside which the folder
    mounted into the container is writable by the container's own (non-root) user.
    """

    def __init__(
        self,
        runtime: ContainerRuntime,
        image: str,
        snapshot: Path,
        ready_timeout_s: float,
        extension_sha256: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.image = image
        self.snapshot = snapshot
        self.ready_timeout_s = ready_timeout_s
        self.extension_sha256 = extension_sha256
        self.id = ""
        self._stack = ExitStack()
        self._launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="susbench-prewarm")
        self._prepared: tuple[ServeProfile, Future[Launched]] | None = None

    def __enter__(self) -> BrowserContainer:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def _start(self) -> None:
        private = Path(tempfile.mkdtemp(prefix="susbench-container-"))
        self._stack.callback(shutil.rmtree, private, ignore_errors=True)
        sockets = private / "sockets"
        sockets.mkdir()
        sockets.chmod(0o777)
        self.id = self.runtime.start(
            ContainerSpec(
                image=self.image,
                command=(
                    "susbench",
                    "browser",
                    "serve",
                    "--no-launch",
                    "--hold-timeout",
                    str(HOLD_TIMEOUT_S),
                ),
                mounts=(
                    Mount(source=self.snapshot, target=SNAPSHOT_MOUNT, read_only=True),
                    Mount(source=sockets, target=SOCKET_MOUNT, read_only=False),
                ),
                labels={ROLE_LABEL: "browser"},
            )
        )
        self._stack.callback(self.runtime.remove, self.id)
        self.control = ControlClient(sockets / CONTROL_SOCKET)
        self._check(self._wait_ready())
        self._stack.callback(self.control.hold().close)
        self.relay = self._stack.enter_context(TcpToUnixRelay(sockets / CDP_SOCKET))

    def _wait_ready(self) -> Status:
        """Until the control socket answers; a container that exits first is reported with its log."""
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            if self.control.socket_path.exists():
                try:
                    return self.control.status()
                except ContainerError:
                    pass  # an image older than its rename-on-listen: the socket exists, not yet listening
            if self.runtime.state(self.id) not in ("created", "running", "configured"):
                raise ContainerError(self._died("exited while starting"))
            if time.monotonic() > deadline:
                raise ContainerError(self._died(f"not ready within {self.ready_timeout_s:.0f} s"))
            time.sleep(POLL_S)

    def _check(self, status: Status) -> None:
        """The image's built-in extension is the one expected (built from the same catalogs)."""
        if self.extension_sha256 is None or status.extension_sha256 == self.extension_sha256:
            return
        raise ContainerError(
            f"image {self.image} carries an injection extension built from other catalogs than this "
            f"checkout's (sha256 {status.extension_sha256[:12]}, expected {self.extension_sha256[:12]}): "
            f"rebuild it with `susbench image build --tag {self.image}`"
        )

    def _died(self, what: str) -> str:
        log = "\n".join(self.runtime.logs(self.id).strip().splitlines()[-20:])
        return f"browser container {self.id[:12]} of {self.image} {what}:\n{log}"

    def alive(self) -> bool:
        return self.runtime.state(self.id) == "running"

    def prepare(self, profile: ServeProfile) -> None:
        """Start the next episode's fresh browser now, in the background."""
        self._prepared = (profile, self._launcher.submit(self.control.launch, profile, self.ready_timeout_s))

    def take(self, profile: ServeProfile) -> Launched:
        """A fresh browser for `profile`: the prepared one if it matches, else a new launch."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            prepared_profile, future = prepared
            launched = future.result()
            if prepared_profile == profile:
                return launched
        return self.control.launch(profile, timeout=self.ready_timeout_s)

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()
        self._launcher.shutdown(wait=True, cancel_futures=True)


class ContainerBackend:
    """BrowserBackend running each episode's browser in a container with the snapshot mounted.

    Use it as a context manager (or call `close`) so the warm container is removed at the end.
    """

    def __init__(
        self,
        snapshot: Path,
        image: str = DEFAULT_IMAGE,
        runtime: ContainerRuntime | None = None,
        playwright: Playwright | None = None,
        fresh_container: bool = False,
        ready_timeout_s: float = READY_TIMEOUT_S,
        extension_sha256: str | None = None,
    ) -> None:
        if not snapshot.is_file():
            raise SnapshotError(f"{snapshot}: no such snapshot file to mount into the browser container")
        self.snapshot = snapshot.resolve()
        self.image = image
        self.runtime = runtime or DockerApiRuntime()
        if self.runtime.image(image) is None:
            raise ContainerError(
                f"image {image} not found: build it with `susbench image build --tag {image}`"
            )
        self._playwright = playwright
        self.fresh_container = fresh_container
        self.ready_timeout_s = ready_timeout_s
        self.extension_sha256 = extension_sha256
        self._warm: BrowserContainer | None = None

    def __enter__(self) -> ContainerBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._warm is not None:
            warm, self._warm = self._warm, None
            warm.__exit__(None, None, None)

    def _container(self) -> BrowserContainer:
        return BrowserContainer(
            self.runtime, self.image, self.snapshot, self.ready_timeout_s, self.extension_sha256
        )

    def _warm_container(self) -> BrowserContainer:
        """The kept container, replaced if it died since the last episode."""
        if self._warm is not None and not self._warm.alive():
            self.close()
        if self._warm is None:
            self._warm = self._container().__enter__()
        return self._warm

    def warm(self, profile: BrowserProfile) -> None:
        """Start the kept container now, not at the first launch, and its first browser for `profile`
        in the background (a worker does this when it starts); nothing with `fresh_container`."""
        if self.fresh_container:
            return
        self._warm_container().prepare(self._serve_profile(profile))

    @staticmethod
    def _serve_profile(profile: BrowserProfile) -> ServeProfile:
        if profile.proxy or profile.host_resolver_rules:
            raise BrowserError(
                "the container's browser reaches only its own replayer (the snapshot mounted into it): "
                "launch it with a profile without proxy and host_resolver_rules"
            )
        return ServeProfile.of(profile)

    @contextmanager
    def launch(
        self, profile: BrowserProfile, capture_session: str | None = None
    ) -> Iterator[ContainerSession]:
        """A fresh browser and profile; its replay episode answers first from `capture_session` (a
        task's recorded browser session, as `ReplayService.new_episode(session)`)."""
        serve_profile = self._serve_profile(profile)
        with ExitStack() as stack:
            if self.fresh_container:
                container = stack.enter_context(self._container())
            else:
                container = self._warm_container()
                stack.callback(container.prepare, serve_profile)
            launched = container.take(serve_profile)
            episode_number = container.control.begin(capture_session)
            driver = stack.enter_context(playwright_driver(self._playwright))
            try:
                browser = driver.chromium.connect_over_cdp(container.relay.endpoint)
            except Exception as exc:  # noqa: BLE001 - Playwright raises plain Error types
                raise BrowserError(f"cannot reach the container's Chromium over CDP: {exc}") from None
            stack.callback(browser.close)
            yield ContainerSession(
                context=browser.contexts[0],
                profile=profile,
                cdp_endpoint=container.relay.endpoint,
                container_id=container.id,
                episode_number=episode_number,
                chromium=launched.chromium,
                control=container.control,
            )
