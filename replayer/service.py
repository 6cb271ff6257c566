"""What every replay front end shares: the log, coverage, and answering one request from a snapshot.

The mitmproxy-based proxy (`susbench.replayer.proxy`) and the direct server
(`susbench.replayer.direct`) differ only in how requests reach them; matching, determinism rewriting,
the body cache and the log live here once, and `ReplayService` is the surface the controller and
`susbench.replayer.check` rely on.
"""

from __future__ import annotations

import asyncio
import html
import socket
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol, Self

from pydantic import Field

from susbench.core.errors import SnapshotError, SusbenchError
from susbench.core.models import Frozen
from susbench.replayer.background import is_browser_background
from susbench.replayer.determinism import DeterminismConfig, rewrite
from susbench.replayer.matching import Match, ReplayIndex, RuleSet
from susbench.replayer.snapshots import open_snapshot

MatchKindLogged = Literal["exact", "canonical", "fuzzy", "miss", "live", "browser"]
MARKER = "X-Susbench-Replay"
CACHE_BYTES = 32 * 1024 * 1024
CACHE_ITEM_BYTES = 4 * 1024 * 1024
START_TIMEOUT_S = 30.0
LOG_EPISODES = 8
"""Episodes whose request log a replayer keeps: a worker's server lives for thousands of episodes, and
each episode's log is read once, right after it."""
HTML_TYPE = "text/html; charset=utf-8"


class ReplayLogEntry(Frozen):
    """One request the replayer answered, and how it matched."""

    ts: float
    method: str
    url: str
    kind: MatchKindLogged
    rule: str | None = None
    score: float | None = None
    status: int
    episode_number: int
    seq: int | None = Field(default=None, description="capture order of the recorded entry served")
    session: str | None = Field(default=None, description="the recorded browser session that served it")


class Coverage(Frozen):
    """How much of an episode (or the whole session) the snapshot answered.

    Chromium's own background requests (sign-in, updates, time checks: `browser_hosts.yaml`) are
    counted apart in `browser` and left out of `requests` and `matched_ratio`. Each count equals the
    sum over its URL list (`misses`, `browser_requests`: URL -> requests).
    """

    requests: int = Field(description="the pages' requests: exact + canonical + fuzzy + miss + live")
    exact: int
    canonical: int
    fuzzy: int
    miss: int
    live: int
    browser: int = Field(default=0, description="Chromium's own background requests, not the pages'")
    matched_ratio: float = Field(description="(exact + canonical + fuzzy) / requests; 1.0 if none")
    misses: dict[str, int] = Field(default_factory=dict, description="URL -> requests missed or sent live")
    browser_requests: dict[str, int] = Field(default_factory=dict, description="URL -> background requests")

    @classmethod
    def of(cls, entries: list[ReplayLogEntry]) -> Coverage:
        counts = {kind: sum(entry.kind == kind for entry in entries) for kind in MatchKindLogged.__args__}  # type: ignore[attr-defined]
        matched = counts["exact"] + counts["canonical"] + counts["fuzzy"]
        requests = len(entries) - counts["browser"]
        return cls(
            requests=requests,
            matched_ratio=matched / requests if requests else 1.0,
            misses=dict(Counter(entry.url for entry in entries if entry.kind in ("miss", "live"))),
            browser_requests=dict(Counter(entry.url for entry in entries if entry.kind == "browser")),
            **counts,
        )


class ReplayService(Protocol):
    """A running replayer, whichever way the browser reaches it (proxy or direct)."""

    port: int
    snapshot: Any
    damaged: list[Any]

    @property
    def spki(self) -> str: ...
    @property
    def proxy_url(self) -> str | None: ...
    @property
    def host_resolver_rules(self) -> str | None: ...
    @property
    def log(self) -> list[ReplayLogEntry]: ...
    def episode_log(self, episode_number: int) -> list[ReplayLogEntry]: ...
    @property
    def episode_number(self) -> int: ...
    @property
    def alive(self) -> bool: ...
    def new_episode(self, session: str | None = None) -> int: ...
    def coverage(self, episode_number: int | None = None) -> Coverage: ...
    def chromium_flags(self) -> list[str]: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class Reply:
    """A response ready to send: fields for mitmproxy, and the serialised head for a raw socket."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    head: bytes
    kind: str

    @classmethod
    def build(cls, status: int, reason: str, headers: list[tuple[str, str]], body: bytes, kind: str) -> Reply:
        """`head` is the status line and headers, CRLF-terminated, without the closing blank line."""
        fields = (*headers, (MARKER, kind))
        lines = [f"HTTP/1.1 {status} {reason}".encode("latin-1", "replace")]
        lines += [
            name.encode("latin-1", "replace") + b": " + value.encode("utf-8", "surrogateescape")
            for name, value in fields
        ]
        return cls(status, reason, fields, body, b"\r\n".join(lines) + b"\r\n", kind)


def miss_page(url: str) -> bytes:
    shown = html.escape(url)
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Not in snapshot</title></head>"
        f"<body><h1>Not in snapshot</h1><p>This request was never recorded: <code>{shown}</code></p>"
        "</body></html>"
    ).encode()


def _miss_reply(url: str, marker: str, determinism: DeterminismConfig, method: str) -> Reply:
    """The 404 page, with the same frozen clock, time zone and seeds as every recorded page."""
    headers, body = rewrite([("Content-Type", HTML_TYPE)], miss_page(url), url, determinism, method)
    return Reply.build(404, "Not Found", headers, body, marker)


class Responder:
    """Answers requests from the index, caching rewritten bodies in a bounded LRU, and logs them.

    Re-reading and re-decompressing a record (and re-hashing the determinism shim for CSP) per
    request dominated the replay cost; the cache keeps the finished reply per (entry, method), so
    memory is bounded by CACHE_BYTES whatever the snapshot's size. The log keeps the last
    LOG_EPISODES episodes, so it is bounded too, however many episodes a server serves.
    """

    def __init__(self, snapshot: Any, index: ReplayIndex[Any], determinism: DeterminismConfig) -> None:
        self.snapshot = snapshot
        self.index = index
        self.determinism = determinism
        self._logs: OrderedDict[int, list[ReplayLogEntry]] = OrderedDict({0: []})
        self.episode_number = 0
        self.session: str | None = None
        self.lock = threading.Lock()
        self._cache: OrderedDict[tuple[int, str, str], Reply] = OrderedDict()
        self._cached_bytes = 0

    @classmethod
    def open(
        cls, path: Path, workdir: Path, damaged: list[Any], deterministic: bool, rules: RuleSet | None
    ) -> Responder:
        """Open a WACZ (or import a WARC under `workdir`) and index it; damage goes to `damaged`."""
        snapshot = open_snapshot(path, workdir, damaged)
        damaged.extend(getattr(snapshot, "damaged", []))
        determinism = DeterminismConfig.from_manifest(snapshot.manifest).model_copy(
            update={"enabled": deterministic}
        )

        def request_body(entry: Any) -> bytes | None:
            try:
                return snapshot.read_request(entry)
            except SnapshotError:
                return None

        index = ReplayIndex(snapshot.entries(), rules=rules, body_loader=request_body)
        return cls(snapshot, index, determinism)

    @property
    def cached_bytes(self) -> int:
        """Bytes of reply bodies the cache holds (at most CACHE_BYTES)."""
        return self._cached_bytes

    def log(self) -> list[ReplayLogEntry]:
        """The kept episodes' requests, in the order they were answered."""
        with self.lock:
            return [entry for entries in self._logs.values() for entry in entries]

    def episode_log(self, episode_number: int) -> list[ReplayLogEntry]:
        """One episode's requests (empty once it is older than the last LOG_EPISODES)."""
        with self.lock:
            return list(self._logs.get(episode_number, ()))

    def new_episode(self, session: str | None = None) -> int:
        with self.lock:
            self.episode_number += 1
            self.session = session
            self.index.new_episode()
            self._logs[self.episode_number] = []
            while len(self._logs) > LOG_EPISODES:
                self._logs.popitem(last=False)
            return self.episode_number

    def answer(self, method: str, url: str, body: bytes = b"", forward_misses: bool = False) -> Reply | None:
        """The reply for one request; None only for a miss when `forward_misses` (live fallback)."""
        with self.lock:
            match = self.index.lookup(method, url, body, self.session)
            if match is None:
                if forward_misses:
                    return None
                self._log(method, url, "browser" if is_browser_background(url) else "miss", 404, None)
                return _miss_reply(url, "miss", self.determinism, method)
            try:
                reply = self._reply(match, method)
            except SnapshotError as exc:
                self._log(method, url, "miss", 404, match, rule=f"damaged: {exc}")
                return _miss_reply(url, "damaged", self.determinism, method)
            self._log(method, url, match.kind, reply.status, match)
            return reply

    def note_live(self, method: str, url: str, status: int) -> None:
        with self.lock:
            self._log(method, url, "live", status, None)

    def _reply(self, match: Match[Any], method: str) -> Reply:
        entry = match.entry
        key = (entry.seq, method, match.kind)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        recorded = self.snapshot.read_response(entry)
        headers, body = rewrite(list(recorded.headers), recorded.body, entry.url, self.determinism, method)
        reply = Reply.build(recorded.status, recorded.reason or "", headers, body, match.kind)
        if len(body) <= CACHE_ITEM_BYTES:
            self._cache[key] = reply
            self._cached_bytes += len(body)
            while self._cached_bytes > CACHE_BYTES:
                _, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped.body)
        return reply

    def _log(
        self,
        method: str,
        url: str,
        kind: MatchKindLogged,
        status: int,
        match: Match[Any] | None,
        rule: str | None = None,
    ) -> None:
        """`model_construct`: the fields are ours and already typed, validation per request is waste."""
        self._logs[self.episode_number].append(
            ReplayLogEntry.model_construct(
                ts=time.time(),
                method=method,
                url=url,
                kind=kind,
                rule=rule or (match.rule if match else None),
                score=match.score if match else None,
                status=status,
                episode_number=self.episode_number,
                seq=match.entry.seq if match else None,
                session=match.entry.session if match else None,
            )
        )


def check_port(host: str, port: int) -> None:
    if not 0 <= port <= 65535:
        raise SusbenchError(f"port {port}: expected 0..65535")
    if port == 0:
        return
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SusbenchError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


class ThreadedReplayServer(ABC):
    """A replayer serving from its own event loop in a background thread (a context manager).

    Subclasses implement `_main` (listen, set `port`, call `_listening`, serve until stopped) and
    `_stop` (called from the owner's thread); opening, logging and shutdown are shared.
    """

    name = "replay server"

    def __init__(
        self,
        snapshot_path: Path | str,
        port: int = 0,
        host: str = "127.0.0.1",
        deterministic: bool = True,
        rules: RuleSet | None = None,
    ) -> None:
        self.snapshot_path = Path(snapshot_path)
        self.host = host
        self._requested_port = port
        self._deterministic = deterministic
        self._rules = rules
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._responder: Responder | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._failure: BaseException | None = None
        self._started = threading.Event()
        self.port = 0
        self.snapshot: Any = None
        self.damaged: list[Any] = []

    @property
    def log(self) -> list[ReplayLogEntry]:
        """The requests of the last LOG_EPISODES episodes."""
        return self._require().log()

    def episode_log(self, episode_number: int) -> list[ReplayLogEntry]:
        return self._require().episode_log(episode_number)

    @property
    def cached_bytes(self) -> int:
        return self._require().cached_bytes

    @property
    def episode_number(self) -> int:
        return self._require().episode_number

    @property
    def alive(self) -> bool:
        """Still serving: its thread runs (it ends when the server is stopped or its loop fails)."""
        return self._thread is not None and self._thread.is_alive()

    def new_episode(self, session: str | None = None) -> int:
        """Start serving repeated requests in recording order afresh; returns the episode number.

        `session` names the recorded browser session the episode belongs to (its task's capture
        plan): its records answer first, the rest of the snapshot only what the session lacks.
        """
        return self._require().new_episode(session)

    def coverage(self, episode_number: int | None = None) -> Coverage:
        return Coverage.of(self.log if episode_number is None else self.episode_log(episode_number))

    def _require(self) -> Responder:
        if self._responder is None:
            raise SusbenchError(f"the {self.name} is not running (use it as a context manager)")
        return self._responder

    def _listening(self) -> None:
        self._started.set()

    def __enter__(self) -> Self:
        check_port(self.host, self._requested_port)
        self._tmp = tempfile.TemporaryDirectory(prefix="susbench-replay-")
        try:
            self._responder = Responder.open(
                self.snapshot_path, Path(self._tmp.name), self.damaged, self._deterministic, self._rules
            )
            self.snapshot = self._responder.snapshot
            self._thread = threading.Thread(target=self._serve, name="susbench-replay", daemon=True)
            self._thread.start()
            if not self._started.wait(START_TIMEOUT_S) or self._failure is not None or not self.port:
                raise SusbenchError(f"the {self.name} could not listen on {self.host}:{self._requested_port}")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._failure = exc
        finally:
            self._started.set()
            loop.close()

    @abstractmethod
    async def _main(self) -> None: ...

    @abstractmethod
    def _stop(self, loop: asyncio.AbstractEventLoop) -> None: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._stop(self._loop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        close = getattr(self.snapshot, "close", None)
        if callable(close):
            close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
