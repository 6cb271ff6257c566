"""The recording proxy: mitmproxy as a library on its own event loop in a background thread.

mitmproxy's CA lives in a confdir under the user cache (never in a snapshot or the repo).
mitmproxy signs every leaf certificate it forges with the CA's own key pair, so one SPKI pin
(`--ignore-certificate-errors-spki-list`) makes Chromium trust all of them and nothing else.
"""

from __future__ import annotations

import asyncio
import ssl
import tempfile
import threading
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from mitmproxy.exceptions import OptionsError
from mitmproxy.options import Options
from mitmproxy.tools.dump import DumpMaster
from mitmproxy.version import VERSION as MITMPROXY_VERSION

from susbench import __version__
from susbench.core.certs import MITMPROXY_CA_CERT, mitmproxy_ca_pin, private_dir
from susbench.core.errors import SusbenchError
from susbench.core.models import HostMap, SnapshotManifest
from susbench.core.paths import cache_dir
from susbench.recorder.redaction import Redactor
from susbench.recorder.warc_addon import RequestLogEntry, recording_addons
from susbench.snapshot.wacz import WARC_MEMBER, index_warc, write_wacz

START_TIMEOUT_S = 20.0
FETCH_TIMEOUT_S = 30.0
FETCH_MAX_BYTES = 1 << 20


def mitmproxy_confdir() -> Path:
    """`<cache>/mitmproxy`, created private; mitmproxy generates its CA here on first start."""
    return private_dir(cache_dir() / "mitmproxy")


def option_refused(exc: OptionsError, values: dict[str, Any]) -> SusbenchError:
    """mitmproxy's refusal of an option (its own text, or an addon's) as one error naming the option.

    Our addons start their text with the option's name; mitmproxy's own say which option only by its
    value at most ("Client certificate path does not exist: PATH"), so that option is named for them.
    """
    reason = str(exc)
    if any(reason.startswith(f"{name}:") for name in values):
        return SusbenchError(f"recording proxy option {reason}")
    mentioned = [
        name for name, value in values.items() if isinstance(value, str) and value and value in reason
    ]
    if len(mentioned) == 1:
        name = mentioned[0]
        return SusbenchError(f"recording proxy option {name}: {values[name]!r}: {reason}")
    return SusbenchError(f"recording proxy options ({', '.join(sorted(values))}): {reason}")


class RecordingProxy:
    """`with RecordingProxy(host_map=..., upstream_ca=...) as proxy:` records until the block ends.

    It runs the addons of `mitmdump -s recorder/warc_addon.py`, set through the same options
    (`options()`). `record=False` runs the same proxy writing no WARC (the benchmark's baseline);
    `keep_secrets=True` writes cookies, credentials and token parameters unmasked; `session`
    labels the records with a browser session until `begin_session` names the next one; `rate`
    (requests per second per host, 0: none) and `burst` set the per-host rate limit.
    """

    def __init__(
        self,
        host_map: HostMap | None = None,
        upstream_ca: Path | None = None,
        port: int = 0,
        record: bool = True,
        dedup: bool = True,
        warcinfo: dict[str, str] | None = None,
        keep_secrets: bool = False,
        session: str = "",
        rate: float = 0.0,
        burst: int = 1,
    ) -> None:
        self.host_map = host_map or HostMap()
        self.upstream_ca = upstream_ca
        self.requested_port = port
        self.record = record
        self.dedup = dedup
        self.warcinfo = warcinfo or {}
        self.keep_secrets = keep_secrets
        self.session = session
        self.rate = rate
        self.burst = burst
        self.port = 0
        self.started_at = datetime.now(UTC)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._addons = recording_addons()
        self._warc = self._addons[1]
        self._master: DumpMaster | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    @property
    def log(self) -> list[RequestLogEntry]:
        return self._warc.log

    @property
    def spki(self) -> str:
        """SPKI pin of mitmproxy's CA key, which is also the key of every leaf it issues."""
        return mitmproxy_ca_pin(mitmproxy_confdir())

    @property
    def ca_cert_path(self) -> Path:
        return mitmproxy_confdir() / MITMPROXY_CA_CERT

    def options(self) -> dict[str, Any]:
        """The recorder's own options, as `--set NAME=VALUE` would give them to mitmdump."""
        values: dict[str, Any] = {
            "ssl_insecure": False,
            "http2": True,
            "resolve": self.host_map.as_args(),
            "warc_out": str(Path(self._tmp.name) / Path(WARC_MEMBER).name) if self._tmp else None,
            "warc_dedup": self.dedup,
            "warc_info": [f"{key}={value}" for key, value in self.warcinfo.items()],
            "warc_keep_secrets": self.keep_secrets,
            "warc_session": self.session,
            "host_rate": self.rate,
            "host_burst": self.burst,
        }
        if self.upstream_ca is not None:
            values["ssl_verify_upstream_trusted_ca"] = str(self.upstream_ca)
        return values

    def start(self) -> RecordingProxy:
        if self.upstream_ca is not None and not Path(self.upstream_ca).is_file():
            raise SusbenchError(f"{self.upstream_ca}: upstream CA certificate not found")
        if self.record:
            self._tmp = tempfile.TemporaryDirectory(prefix="susbench-record-")
        self._thread = threading.Thread(target=self._serve, name="recording-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._failure is not None:
            self.stop()
            if isinstance(self._failure, SusbenchError):
                raise self._failure
            raise SusbenchError(f"the recording proxy did not start: {self._failure}")
        return self

    def fetch(self, url: str, headers: dict[str, str]) -> tuple[int, bytes]:
        """GET `url` through this proxy, as a client trusting its CA: (status, first MiB of the body);
        status 0 when no answer came. The exchange is recorded like the browser's."""
        proxy = f"http://127.0.0.1:{self.port}"
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"http": proxy, "https": proxy}),
            urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=str(self.ca_cert_path))),
        )
        try:
            with opener.open(urllib.request.Request(url, headers=headers), timeout=FETCH_TIMEOUT_S) as reply:
                return int(reply.status), reply.read(FETCH_MAX_BYTES)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(FETCH_MAX_BYTES)
        except (urllib.error.URLError, OSError):
            return 0, b""

    def begin_session(self, label: str) -> None:
        """Label every exchange that starts from now on with browser session `label`.

        Call it between browser sessions (the previous browser closed, the next not yet started):
        an exchange keeps the label current when its request began.
        """
        master, loop = self._master, self._loop
        if master is None or loop is None or not loop.is_running():
            raise SusbenchError("begin_session() needs a running recording proxy")

        async def relabel() -> None:
            master.options.update(warc_session=label)

        try:
            asyncio.run_coroutine_threadsafe(relabel(), loop).result(START_TIMEOUT_S)
        except OptionsError as exc:
            raise option_refused(exc, {"warc_session": label}) from None
        self.session = label

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._failure = exc
            self._ready.set()
        finally:
            loop.close()

    async def _main(self) -> None:
        options = Options(
            listen_host="127.0.0.1", listen_port=self.requested_port, confdir=str(mitmproxy_confdir())
        )
        master = DumpMaster(options, with_termlog=False, with_dumper=False)
        master.addons.add(*self._addons)
        values = self.options()
        try:
            options.update(**values)
        except OptionsError as exc:
            raise option_refused(exc, values) from None
        self._master = master
        running = asyncio.ensure_future(master.run())
        proxyserver = master.addons.get("proxyserver")
        for _ in range(int(START_TIMEOUT_S * 50)):
            if running.done():
                break
            addresses = proxyserver.listen_addrs()
            if addresses:
                self.port = int(addresses[0][1])
                self._ready.set()
                break
            await asyncio.sleep(0.02)
        await running

    def stop(self) -> None:
        if self._master is not None and self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._master.shutdown)
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._warc.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def write_snapshot(self, out: Path, **manifest_fields: Any) -> Path:
        """Write everything recorded so far as a WACZ; `manifest_fields` fill SnapshotManifest.

        `id`, `created_at`, `targets`, `clock_seed_ms` and `hosts` default from the recording;
        target and page URLs are masked as the WARC is.
        """
        writer = self._warc.writer
        if writer is None:
            raise SusbenchError("this proxy was started with record=False; there is nothing to write")
        writer.flush()
        entries, damaged = index_warc(writer.path, filename=Path(WARC_MEMBER).name)
        hosts = sorted({entry.url.split("/")[2].split(":")[0] for entry in entries if "//" in entry.url})
        versions = {"susbench-replay": __version__, "mitmproxy": MITMPROXY_VERSION}
        fields: dict[str, Any] = {
            "id": Path(out).name.removesuffix(".wacz"),
            "created_at": self.started_at,
            "targets": tuple(entry.url for entry in sorted(entries, key=lambda e: e.seq)[:1]),
            "clock_seed_ms": int(self.started_at.timestamp() * 1000),
            "hosts": tuple(hosts),
            "damaged": tuple(str(item) for item in damaged),
        }
        fields.update(manifest_fields)
        fields["tool_versions"] = {**versions, **dict(fields.get("tool_versions", {}))}
        manifest = SnapshotManifest(**fields)
        if writer.redactor is not None:
            manifest = _masked_manifest(manifest, writer.redactor)
        return write_wacz(Path(out), writer.path, manifest, entries)


def _masked_manifest(manifest: SnapshotManifest, redactor: Redactor) -> SnapshotManifest:
    pages = tuple(page.model_copy(update={"url": redactor.url(page.url)}) for page in manifest.pages)
    targets = tuple(map(redactor.url, manifest.targets))
    return manifest.model_copy(update={"pages": pages, "targets": targets})
