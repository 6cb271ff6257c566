"""A local model server: one loopback HTTP server speaking the vendors' wire protocols, playing a
scripted policy, and keeping every byte it was sent.

Endpoints (base URLs as each SDK takes them):
  POST /v1/chat/completions   OpenAI chat completions (tools, response_format)   base_url http://HOST:PORT/v1
  POST /v1/responses          OpenAI Responses API (computer use)                base_url http://HOST:PORT/v1
  POST /v1/messages           Anthropic Messages API (computer use, beta)         base_url http://HOST:PORT

Requests are checked as the real APIs check them (the API key, required fields, the beta header a
tool version needs) and refused with the vendor's error shape. `fail(status, times)` and
`hang(times)` make the next requests fail or never answer, to test a client's retries.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from susbench.agents.servers.policy import ScriptedPolicy

IMAGE_TOKENS = 800
HANG_S = 120.0


@dataclass(frozen=True)
class Captured:
    """One request as it arrived: every byte of its body, and its headers."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class Refused(Exception):
    """A request the real API would refuse: HTTP status, the vendor's error type, and why."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


class ProtocolHandler(ABC):
    """One endpoint's wire protocol."""

    path: ClassVar[str]

    def __init__(self, policy: ScriptedPolicy) -> None:
        self.policy = policy

    @abstractmethod
    def authorized(self, headers: dict[str, str], api_key: str) -> bool: ...

    @abstractmethod
    def error_body(self, status: int, kind: str, message: str) -> dict[str, Any]: ...

    @abstractmethod
    def answer(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """The reply to a well-formed request (raises `Refused` for a request the API refuses)."""


@dataclass
class HttpFault:
    status: int | None
    times: int


@dataclass
class ServerState:
    requests: list[Captured] = field(default_factory=list)
    faults: list[HttpFault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class ModelServer:
    """The local model server; use as a context manager (it serves on a background thread)."""

    def __init__(
        self,
        handlers: list[ProtocolHandler],
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.handlers = {handler.path: handler for handler in handlers}
        self.api_key = api_key
        self.state = ServerState()
        self._httpd = ThreadingHTTPServer((host, port), self._request_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def host(self) -> str:
        return str(self._httpd.server_address[0])

    @property
    def openai_base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[Captured]:
        with self.state.lock:
            return list(self.state.requests)

    def fail(self, status: int, times: int = 1) -> None:
        """The next `times` requests get HTTP `status` (e.g. 429, 500, 503); `times=-1`: all of them."""
        with self.state.lock:
            self.state.faults.append(HttpFault(status=status, times=times))

    def hang(self, times: int = 1) -> None:
        """The next `times` requests get no answer until the client gives up."""
        with self.state.lock:
            self.state.faults.append(HttpFault(status=None, times=times))

    def __enter__(self) -> ModelServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.state.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _next_fault(self) -> HttpFault | None:
        with self.state.lock:
            if not self.state.faults:
                return None
            fault = self.state.faults[0]
            if fault.times > 0:
                fault.times -= 1
                if fault.times == 0:
                    self.state.faults.pop(0)
            return fault

    def _request_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Request(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with server.state.lock:
                    server.state.requests.append(Captured("POST", self.path, headers, body, time.time()))
                handler = server.handlers.get(self.path.split("?")[0])
                if handler is None:
                    self._send(404, {"error": {"message": f"no endpoint {self.path}", "type": "not_found"}})
                    return
                status, reply, extra = server._respond(handler, headers, body)
                self._send(status, reply, extra)

            def _send(self, status: int, reply: dict[str, Any], extra: dict[str, str] | None = None) -> None:
                data = json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in (extra or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    self.close_connection = True

        return Request

    def _respond(
        self, handler: ProtocolHandler, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        if self.api_key is not None and not handler.authorized(headers, self.api_key):
            return 401, handler.error_body(401, "authentication_error", "invalid API key"), {}
        fault = self._next_fault()
        if fault is not None and fault.status is None:
            self.state.stopping.wait(HANG_S)
            return 503, handler.error_body(503, "overloaded_error", "the server hung"), {}
        if fault is not None and fault.status is not None:
            kind = "rate_limit_error" if fault.status == 429 else "api_error"
            extra = {"retry-after": "0"} if fault.status == 429 else {}
            return (
                fault.status,
                handler.error_body(fault.status, kind, f"scripted HTTP {fault.status}"),
                extra,
            )
        try:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict):
                raise Refused(400, "invalid_request_error", "the body must be a JSON object")
            return 200, handler.answer(request, headers), {}
        except json.JSONDecodeError as exc:
            return 400, handler.error_body(400, "invalid_request_error", f"invalid JSON: {exc.msg}"), {}
        except Refused as exc:
            return exc.status, handler.error_body(exc.status, exc.kind, str(exc)), {}


def estimate_tokens(value: Any) -> int:
    """A rough token count of a request: 4 characters a token, a flat count per image."""
    if isinstance(value, str):
        if value.startswith("data:image/") or (len(value) > 20_000 and " " not in value[:2000]):
            return IMAGE_TOKENS
        return max(1, len(value) // 4)
    if isinstance(value, dict):
        return sum(estimate_tokens(item) for item in value.values())
    if isinstance(value, list):
        return sum(estimate_tokens(item) for item in value)
    return 1


def require(request: dict[str, Any], *names: str) -> None:
    missing = [name for name in names if name not in request]
    if missing:
        raise Refused(400, "invalid_request_error", f"missing required parameter: {', '.join(missing)}")
