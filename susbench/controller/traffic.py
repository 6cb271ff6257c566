"""An episode's way to the web: the worker's shared replay server, or a fresh recording proxy (live).

Either way the browser gets a `Route` and the episode gets its request log afterwards; a live
episode is also archived as a WACZ that can be replayed later. An episode belongs to its task's
browser session (the capture plan's id): replay answers from that session's records first, and a
live archive labels its records with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from susbench.browser import Route
from susbench.controller.environment import WorkerSetup
from susbench.controller.options import RunOptions
from susbench.core.errors import SusbenchError
from susbench.core.models import Episode, HostMap
from susbench.records.episode import RequestRecord
from susbench.replayer.factory import replay_server
from susbench.replayer.service import ReplayLogEntry, ReplayService
from susbench.web import LocalWeb
from susbench.web.tls import ca_dir as local_web_ca

if TYPE_CHECKING:
    from susbench.recorder.proxy import RecordingProxy


class Traffic(Route, Protocol):
    """One episode's route, and what went over it once the episode is over."""

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]: ...


def replay_request(entry: ReplayLogEntry) -> RequestRecord:
    return RequestRecord(
        url=entry.url,
        method=entry.method,
        match_kind=entry.kind,
        rule=entry.rule,
        score=entry.score,
        status=entry.status,
        miss=entry.kind in ("miss", "live"),
        session=entry.session,
    )


class ReplayTraffic:
    """One episode on the worker's replay server: its own episode number and capture session, its slice of
    the log."""

    def __init__(self, server: ReplayService, capture_session: str) -> None:
        self._server = server
        self._episode_number = server.new_episode(capture_session)
        self.proxy_url: str | None = server.proxy_url
        self.host_resolver_rules: str | None = server.host_resolver_rules
        self.spki: str = server.spki

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]:
        if not self._server.alive:
            raise SusbenchError(f"the replay server (port {self._server.port}) stopped during the episode")
        entries = self._server.episode_log(self._episode_number)
        return tuple(replay_request(entry) for entry in entries), None


class LiveTraffic:
    """One live episode through its own recording proxy, archived as a WACZ for later replay."""

    def __init__(self, proxy: RecordingProxy, archive: Path) -> None:
        self._proxy = proxy
        self._archive = archive
        self.proxy_url: str | None = f"http://127.0.0.1:{proxy.port}"
        self.host_resolver_rules: str | None = None
        self.spki: str = proxy.spki

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]:
        requests = tuple(
            RequestRecord(
                url=entry.url,
                method=entry.method,
                match_kind="live",
                status=entry.status,
                miss=entry.status == 0,
            )
            for entry in self._proxy.log
        )
        self._proxy.write_snapshot(self._archive)
        return requests, str(self._archive)


class TrafficSource:
    """A worker's traffic for all its episodes: one replay server kept open, or a proxy per live episode."""

    def __init__(self, setup: WorkerSetup) -> None:
        self._setup = setup
        self._stack = ExitStack()
        self._replay: ReplayService | None = None

    def __enter__(self) -> TrafficSource:
        if self._setup.mode == "snapshot":
            self._replay = self._open_replay()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @property
    def replay(self) -> ReplayService | None:
        """The replay server the next episode uses (None in live mode)."""
        return self._replay

    def episode(self, episode: Episode, capture_session: str) -> AbstractContextManager[Traffic]:
        """The route of one episode of the recorded browser session `capture_session` (its task's capture
        plan id)."""
        if self._replay is not None:
            if not self._replay.alive:
                self._replay = self._open_replay()
            return _replayed(self._replay, capture_session)
        return _recorded(self._setup, episode, capture_session)

    def _open_replay(self) -> ReplayService:
        """A replay server on the snapshot; a new one replaces a server that stopped, so one failure
        costs one episode, not the rest of the worker's."""
        if self._setup.snapshot is None:
            raise ValueError("a snapshot worker needs WorkerSetup.snapshot")
        return self._stack.enter_context(replay_server(self._setup.snapshot, self._setup.replay_mode))


@contextmanager
def _replayed(server: ReplayService, capture_session: str) -> Iterator[Traffic]:
    yield ReplayTraffic(server, capture_session)


@contextmanager
def _recorded(setup: WorkerSetup, episode: Episode, capture_session: str) -> Iterator[Traffic]:
    if setup.archive_dir is None:
        raise ValueError("a live worker needs WorkerSetup.archive_dir")
    # Imported here: mitmproxy is half of a replaying worker's imports, and only live episodes use it.
    from susbench.recorder.proxy import RecordingProxy

    host_map = HostMap.parse(list(setup.live_resolve))
    with RecordingProxy(host_map=host_map, upstream_ca=setup.live_ca_cert, session=capture_session) as proxy:
        yield LiveTraffic(proxy, setup.archive_dir / f"{episode.id}.wacz")


@contextmanager
def live_upstream(options: RunOptions) -> Iterator[tuple[tuple[str, ...], Path | None]]:
    """The upstream of live mode: the local web in-process, unless --live-resolve points elsewhere.
    Upstreams under .test (an app's front, `susbench apps serve`) answer with the local web's CA."""
    if options.live_resolve:
        local = all(HostMap.parse([rule]).rules[0].host.endswith(".test") for rule in options.live_resolve)
        yield options.live_resolve, (local_web_ca() / "ca.pem" if local else None)
        return
    with LocalWeb(port=0, date=options.live_date) as web:
        yield tuple(web.resolve.as_args()), web.ca_cert_path
