"""mitmproxy addons that record WARC/1.1, usable by mitmdump itself and by `RecordingProxy`.

    mitmdump -s recorder/warc_addon.py --set warc_out=site.warc.gz \\
        --set resolve='*.test=127.0.0.1:8080' --set ssl_verify_upstream_trusted_ca=ca.pem

Every setting is a mitmproxy option declared in `load()` (`--set NAME=VALUE`, or
`options.update(...)` from Python), so mitmdump and the susbench CLI run the same code.
`warc_session` labels every exchange that starts while it is set (a browser session, e.g. one
task's capture plan); it can change while the proxy runs without reopening the WARC. The addons
read the options of the master that loaded them, not mitmproxy's process-wide `ctx`, so several
recording proxies can run in one process. Loaded as a script from a checkout where the project is
not installed, the checkout is put on `sys.path`.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path

if importlib.util.find_spec("susbench") is None:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from mitmproxy import exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.options import Options
from mitmproxy.version import VERSION as MITMPROXY_VERSION
from pydantic import Field

from susbench import __version__
from susbench.core.errors import SusbenchError
from susbench.core.hostmap import HostMapAddon
from susbench.core.models import Frozen
from susbench.recorder.ratelimit import HostRateLimit
from susbench.recorder.redaction import Redactor
from susbench.recorder.warc_writer import RecordedExchange, WarcWriterThread

WARC_OPTIONS = frozenset({"warc_out", "warc_dedup", "warc_info", "warc_keep_secrets"})
SESSION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
SESSION_METADATA = "susbench_session"
logger = logging.getLogger(__name__)


LOOPBACK = "127.0.0.1"


class RequestLogEntry(Frozen):
    """One exchange the proxy saw (a failed one has status 0)."""

    url: str
    method: str
    status: int
    bytes: int = Field(ge=0)
    error: str = ""


def parse_warcinfo(fields: Sequence[str]) -> dict[str, str]:
    """`KEY=VALUE` entries of the `warc_info` option."""
    info: dict[str, str] = {}
    for field in fields:
        key, equals, value = field.partition("=")
        if not equals or not key.strip():
            raise SusbenchError(f"warc_info: {field!r}: expected KEY=VALUE")
        info[key.strip()] = value
    return info


class WarcAddon:
    """Queue every completed exchange for the WARC (`warc_out`); keep a per-request log."""

    def __init__(self) -> None:
        self.writer: WarcWriterThread | None = None
        self.log: list[RequestLogEntry] = []
        self._options = Options()

    def load(self, loader: Loader) -> None:
        self._options = loader.master.options
        loader.add_option("warc_out", str | None, None, "Record every exchange into this .warc.gz file.")
        loader.add_option("warc_dedup", bool, True, "Write revisit records for repeated payloads.")
        loader.add_option("warc_info", Sequence[str], [], "KEY=VALUE fields added to the warcinfo record.")
        loader.add_option(
            "warc_keep_secrets",
            bool,
            False,
            "Write cookies, credentials and token query parameters unmasked (recorder/secrets.yaml).",
        )
        loader.add_option(
            "warc_session",
            str,
            "",
            "Label the records of exchanges that start from now on with this browser session "
            "(WARC-Susbench-Session); empty: no label.",
        )

    def configure(self, updated: set[str]) -> None:
        if "listen_host" in updated and not self._options.listen_host:
            # mitmproxy's default, every interface, becomes loopback: binding elsewhere takes an
            # explicit --listen-host (e.g. 0.0.0.0).
            self._options.update(listen_host=LOOPBACK)
        session = self._options.warc_session
        if "warc_session" in updated and session and not SESSION_LABEL.fullmatch(session):
            raise exceptions.OptionsError(
                f"warc_session: {session!r}: expected letters, digits, '.', '_', ':' or '-' (at most 200)"
            )
        if not updated & WARC_OPTIONS:
            return
        self.close()
        options = self._options
        out = options.warc_out
        if not out:
            return
        if not out.endswith(".warc.gz"):
            raise exceptions.OptionsError(f"warc_out: {out}: expected a .warc.gz path")
        try:
            info = {
                "software": f"susbench-replay/{__version__}",
                "mitmproxy": MITMPROXY_VERSION,
                "format": "WARC File Format 1.1",
                **parse_warcinfo(options.warc_info),
            }
            redactor = None if options.warc_keep_secrets else Redactor.load()
            self.writer = WarcWriterThread(Path(out), info, options.warc_dedup, redactor)
        except SusbenchError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        except OSError as exc:
            raise exceptions.OptionsError(f"warc_out: {out}: cannot write: {exc.strerror}") from None
        if redactor is None:
            logger.warning(
                "warc_keep_secrets: cookies, credentials and tokens are written unmasked to %s", out
            )

    def flush(self) -> None:
        """Block until every exchange seen so far is in the WARC file."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def done(self) -> None:
        self.close()

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """The session is the one current when the request started, not when its response ended."""
        flow.metadata[SESSION_METADATA] = self._options.warc_session

    def response(self, flow: http.HTTPFlow) -> None:
        request, response = flow.request, flow.response
        if response is None:
            return
        body = response.raw_content or b""
        self.log.append(
            RequestLogEntry(
                url=request.url, method=request.method, status=response.status_code, bytes=len(body)
            )
        )
        if self.writer is None:
            return
        peer = flow.server_conn.peername
        self.writer.put(
            RecordedExchange(
                url=request.url,
                method=request.method,
                path=request.path,
                authority=request.pretty_host
                if request.port in (80, 443)
                else f"{request.host}:{request.port}",
                request_headers=tuple(request.headers.fields),
                request_body=request.raw_content or b"",
                status=response.status_code,
                reason=response.reason or "",
                response_headers=tuple(response.headers.fields),
                response_body=body,
                started=request.timestamp_start,
                protocols=_protocols(flow),
                server_ip=str(peer[0]) if peer else "",
                session=flow.metadata.get(SESSION_METADATA, self._options.warc_session),
            )
        )

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and flow.error is not None:
            self.log.append(
                RequestLogEntry(
                    url=flow.request.url, method=flow.request.method, status=0, bytes=0, error=flow.error.msg
                )
            )


def _protocols(flow: http.HTTPFlow) -> tuple[str, ...]:
    server = flow.server_conn
    application = "h2" if flow.response and flow.response.http_version == "HTTP/2.0" else "http/1.1"
    tls = (server.tls_version or "").lower().replace("tlsv", "tls/")
    return (application, tls) if server.tls_established and tls else (application,)


def recording_addons() -> tuple[HostMapAddon, WarcAddon, HostRateLimit]:
    """A fresh set of the recorder's addons (one per proxy)."""
    return HostMapAddon(), WarcAddon(), HostRateLimit()


addons = list(recording_addons())
