"""Why a page did not load while recording, in the user's terms: which URL, which upstream, what to try.

Chromium behind the recording proxy only reports `net::ERR_...`; the upstream it could not reach
is known here (the `--resolve` map, else DNS), so the message names it and probes it once.
"""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

from susbench.browser import browser_failure
from susbench.core.models import HostMap

PROBE_TIMEOUT_S = 2.0
NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")
LOCAL_TLD = ".test"  # reserved (RFC 2606): never on public DNS, so the local web's
WEB_SERVE_HINT = "is `susbench web serve` running there?"


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def _upstream_problem(host: str, port: int, host_map: HostMap) -> str:
    mapped = host_map.lookup(host, port)
    local_web = host.endswith(LOCAL_TLD)
    if mapped is None:
        if local_web:
            return (
                f"{host} is a local-web host (.test), and no --resolve maps it: start `susbench web serve` "
                "and pass the --resolve and --upstream-ca it prints"
            )
        return f"the recording proxy could not connect to {host}:{port} (DNS, or nothing answers there)"
    target = f"{mapped[0]}:{mapped[1]}"
    if not _reachable(*mapped):
        hint = f"; {WEB_SERVE_HINT}" if local_web else ""
        return f"--resolve sends {host} to {target}, and nothing answers there{hint}"
    return (
        f"{target} (for {host}) accepts connections but the proxy could not use it: "
        "if it speaks TLS, pass its CA with --upstream-ca (`susbench web serve` prints the local web's)"
    )


def explain_load_failure(url: str, browser_message: str, host_map: HostMap) -> str:
    """One line: the URL, what went wrong, and what to try; Chromium's own code is kept at the end."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    found = NET_ERROR.search(browser_message)
    code = found.group(1) if found else None
    if code in ("ERR_TUNNEL_CONNECTION_FAILED", "ERR_CONNECTION_REFUSED", "ERR_EMPTY_RESPONSE") or (
        code is not None and code.startswith(("ERR_PROXY", "ERR_NAME", "ERR_ADDRESS"))
    ):
        problem = _upstream_problem(host, port, host_map)
    elif code is not None and code.startswith(("ERR_CERT", "ERR_SSL")):
        problem = "the site's TLS certificate was refused: pass its CA with --upstream-ca"
    elif code == "ERR_TIMED_OUT" or "Timeout" in browser_message:
        problem = "it did not finish loading in time"
    else:
        return f"{url}: the page did not load: {browser_failure(browser_message)}"
    return f"{url}: the page did not load: {problem}" + (f" (Chromium: {code})" if code else "")
