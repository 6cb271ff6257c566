"""A small client of Ghost's Admin API: the staff session, JSON calls and image uploads.

Ghost's own way in for scripts is an integration's API key; a staff session (cookie) does the same
without leaving a key in the database. Every call goes to the app's own loopback port with the
public Host and `X-Forwarded-Proto: https`, as the front would send it, so Ghost builds its URLs for
https://<host>/ and its CSRF check (the `Origin` of a session call) sees its own origin.
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from http.cookies import SimpleCookie
from typing import Any

from susbench.apps.base import AppError

TIMEOUT_S = 60.0


class GhostAdmin:
    """Admin API calls on a Ghost at 127.0.0.1:`port`, served as https://`host`/.

    The session cookie is kept by hand: Ghost marks it `Secure` for its https URL, and the calls
    go to its plain-HTTP loopback port, where a cookie jar would not send it."""

    def __init__(self, port: int, host: str) -> None:
        self.base = f"http://127.0.0.1:{port}/ghost/api/admin"
        self.host = host
        self._cookies: dict[str, str] = {}

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {
            "Host": self.host,
            "X-Forwarded-Proto": "https",
            "Origin": f"https://{self.host}",
            "Accept-Version": "v5.0",
        }
        if content_type is not None:
            headers["Content-Type"] = content_type
        if self._cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self._cookies.items())
        return headers

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One JSON call; an error answer raises `AppError` naming the call and Ghost's message."""
        data = json.dumps(body).encode() if body is not None else None
        return self._send(method, path, data, "application/json" if data is not None else None)

    def upload_image(self, name: str, png: bytes) -> str:
        """Upload a PNG; its URL as Ghost serves it (under /content/images/)."""
        boundary = secrets.token_hex(12)
        data = b"".join(
            [
                f"--{boundary}\r\n".encode(),
                f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'.encode(),
                b"Content-Type: image/png\r\n\r\n",
                png,
                f"\r\n--{boundary}\r\n".encode(),
                b'Content-Disposition: form-data; name="purpose"\r\n\r\nimage\r\n',
                f"--{boundary}--\r\n".encode(),
            ]
        )
        answer = self._send("POST", "/images/upload/", data, f"multipart/form-data; boundary={boundary}")
        return str(answer["images"][0]["url"])

    def _send(self, method: str, path: str, data: bytes | None, content_type: str | None) -> dict[str, Any]:
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers=self._headers(content_type)
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                text = answer.read()
                for header in answer.headers.get_all("Set-Cookie") or ():
                    cookie = SimpleCookie(header)
                    self._cookies.update({name: morsel.value for name, morsel in cookie.items()})
                is_json = "json" in answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise AppError(
                "ghost", f"Admin API {method} {path} answered {exc.code}: {detail}", "see the run's ghost.log"
            ) from None
        except OSError as exc:
            raise AppError(
                "ghost", f"Admin API {method} {path} failed: {exc}", "see the run's ghost.log"
            ) from None
        return json.loads(text) if is_json and text.strip() else {}

    def set_up(self, name: str, email: str, password: str, title: str) -> None:
        """Create the owner (a fresh database's first step)."""
        self.call(
            "POST",
            "/authentication/setup/",
            {"setup": [{"name": name, "email": email, "password": password, "blogTitle": title}]},
        )

    def sign_in(self, email: str, password: str) -> None:
        """A staff session (its cookie stays in this client; device verification is off in config)."""
        self.call("POST", "/session/", {"username": email, "password": password})

    def browse(self, resource: str, query: str = "limit=all") -> list[dict[str, Any]]:
        return list(self.call("GET", f"/{resource}/?{query}")[resource])
