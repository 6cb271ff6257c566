"""Airgapped by construction: the container has no route out, and the replayer answers every request."""

from __future__ import annotations

import json

import pytest

from susbench.browser import BrowserProfile
from susbench.container import ContainerBackend
from tests.support.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

OUTSIDE = "https://outside-host.example/probe.js"

# Run inside the container. UDP connect() only looks up a route and sends nothing, so this probe can
# never put a packet on a network even if the container had one; documentation-range addresses.
ROUTE_PROBE = """
import errno, json, os, socket
result = {"interfaces": sorted(os.listdir("/sys/class/net"))}
for family, address in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((address, 9))
            result[address] = "connected"
        except OSError as exc:
            result[address] = errno.errorcode.get(exc.errno, str(exc.errno))
try:
    socket.getaddrinfo("deb.debian.org", 80)
    result["dns"] = "resolved"
except OSError:
    result["dns"] = "failed"
print(json.dumps(result))
"""


def test_outside_host_is_a_replay_miss(container_backend: ContainerBackend) -> None:
    with container_backend.launch(BrowserProfile()) as session:
        page = session.context.pages[0]
        page.goto("https://pizzapalace.test/")
        with page.expect_response(OUTSIDE) as outside:
            page.evaluate("(url) => fetch(url, {mode: 'no-cors'})", OUTSIDE)
        status = outside.value.status
        log = session.replay_log()
    assert status == 404
    assert any(entry.url == OUTSIDE and entry.kind == "miss" for entry in log)
    assert any(entry.url == "https://pizzapalace.test/" and entry.kind == "exact" for entry in log)


def test_container_has_no_route_out(container_backend: ContainerBackend) -> None:
    with container_backend.launch(BrowserProfile()) as session:
        code, output = container_backend.runtime.exec(session.container_id, ["python3", "-c", ROUTE_PROBE])
    assert code == 0, output
    result = json.loads(output.strip().splitlines()[-1])
    assert result["interfaces"] == ["lo"]
    assert result["192.0.2.1"] == "ENETUNREACH"
    assert result["2001:db8::1"] in ("ENETUNREACH", "EADDRNOTAVAIL")
    assert result["dns"] == "failed"
