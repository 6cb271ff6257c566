"""A worker's browsers: a fresh one for every episode, on that episode's traffic, and what went over it.

`--browser local` (`HostBrowsers`): Chromium on this machine, routed to the worker's replay server
or to the episode's own recording proxy (`traffic`). `--browser container` (`ContainerBrowsers`):
one warm browser container per worker, opened when the worker starts and closed when it stops;
its replayer answers inside the container (no network there at all), each episode gets a fresh
browser and profile in it, and the episode's requests come from the container's replay log.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from typing import Protocol

from susbench.browser import BrowserBackend, BrowserProfile, BrowserSession, LocalBackend, routed_profile
from susbench.browser.driver import playwright_driver
from susbench.container import ContainerBackend
from susbench.controller.environment import WorkerSetup
from susbench.controller.traffic import TrafficSource, replay_request
from susbench.core.digests import tree_sha256
from susbench.core.errors import BrowserError
from susbench.core.models import Episode
from susbench.records.episode import RequestRecord


@dataclass
class EpisodeBrowser:
    """One episode's browser; its traffic (and a live episode's archive) is filled in once it closed."""

    session: BrowserSession
    requests: tuple[RequestRecord, ...] = ()
    archive: str | None = None


class EpisodeBrowsers(Protocol):
    """Opens a fresh browser for an episode of the recorded browser session `capture_session` (its task's
    capture plan)."""

    def episode(
        self, episode: Episode, capture_session: str, cdp: bool, window: tuple[str, ...] | None = None
    ) -> AbstractContextManager[EpisodeBrowser]:
        """`window`: a person sits at this browser: headed, with these extra Chromium flags."""
        ...


class HostBrowsers:
    """Browsers on this machine, each routed to the episode's traffic."""

    def __init__(self, setup: WorkerSetup, backend: BrowserBackend, traffic: TrafficSource) -> None:
        self._setup = setup
        self._backend = backend
        self.traffic = traffic

    @contextmanager
    def episode(
        self, episode: Episode, capture_session: str, cdp: bool, window: tuple[str, ...] | None = None
    ) -> Iterator[EpisodeBrowser]:
        with self.traffic.episode(episode, capture_session) as traffic:
            profile = routed_profile(
                traffic,
                self._setup.look,
                headless=self._setup.headless and window is None,
                extension_dir=self._setup.extension_dir,
                cdp=cdp,
            )
            if window is not None:
                profile = profile.model_copy(update={"extra_args": window})
            with self._backend.launch(profile) as launched:
                browser = EpisodeBrowser(launched)
                yield browser
            browser.requests, browser.archive = traffic.collect()


class ContainerBrowsers:
    """Browsers in the worker's warm container; the container's replayer is the episode's traffic.

    The container always offers CDP (it is the only way in), so `cdp` changes nothing here.
    """

    def __init__(self, backend: ContainerBackend, profile: BrowserProfile) -> None:
        self._backend = backend
        self._profile = profile

    @contextmanager
    def episode(
        self, episode: Episode, capture_session: str, cdp: bool, window: tuple[str, ...] | None = None
    ) -> Iterator[EpisodeBrowser]:
        if window is not None:
            raise BrowserError(
                "a person's episode needs --browser local: the browser container has no display"
            )
        with self._backend.launch(self._profile, capture_session=capture_session) as launched:
            browser = EpisodeBrowser(launched)
            yield browser
            # Read while the container is still there (a `fresh_container` backend removes it on close).
            browser.requests = tuple(replay_request(entry) for entry in launched.replay_log())


@contextmanager
def worker_browsers(setup: WorkerSetup, backend: BrowserBackend | None = None) -> Iterator[EpisodeBrowsers]:
    """The worker's browsers as `setup.browser` says, until the worker stops.

    `backend` replaces the one made here (tests and benchmarks share a Playwright or a container);
    for `container` it must be a `ContainerBackend`.
    """
    with ExitStack() as stack:
        if setup.browser == "container":
            yield _container_browsers(setup, backend, stack)
            return
        if backend is None:
            backend = LocalBackend(stack.enter_context(playwright_driver()))
        yield HostBrowsers(setup, backend, stack.enter_context(TrafficSource(setup)))


def _container_browsers(
    setup: WorkerSetup, backend: BrowserBackend | None, stack: ExitStack
) -> ContainerBrowsers:
    """The warm container is started now, with its first browser, and checked to carry the extension
    this run was identified with."""
    if setup.snapshot is None or setup.image is None:
        raise ValueError("a container worker needs WorkerSetup.snapshot and WorkerSetup.image")
    if backend is None:
        backend = stack.enter_context(
            ContainerBackend(
                setup.snapshot,
                image=setup.image,
                playwright=stack.enter_context(playwright_driver()),
                extension_sha256=setup.extension_sha256 or tree_sha256(setup.extension_dir),
            )
        )
    elif not isinstance(backend, ContainerBackend):
        raise ValueError(f"a container worker needs a ContainerBackend, not {type(backend).__name__}")
    look = setup.look
    profile = BrowserProfile(
        headless=setup.headless, viewport=look.viewport, locale=look.locale, timezone=look.timezone
    )
    backend.warm(profile)
    return ContainerBrowsers(backend, profile)
