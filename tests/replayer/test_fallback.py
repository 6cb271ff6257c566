"""The replay proxy's live fallback: misses reach the web through the host map and are marked live."""

from __future__ import annotations

from pathlib import Path

from susbench.core.certs import MITMPROXY_CA_CERT
from susbench.replayer.proxy import MARKER, ReplayServer, ca_confdir
from susbench.web import LocalWeb
from tests.support.proxy_client import fetch_via_proxy
from tests.support.replay import SyntheticExchange, write_snapshot

SITE = "https://pizzapalace.test"


def test_misses_go_live_through_the_host_map_and_are_marked(local_web: LocalWeb, tmp_path: Path) -> None:
    snapshot = write_snapshot(
        tmp_path / "one-page.wacz", [SyntheticExchange(f"{SITE}/", b"<html><title>recorded</title></html>")]
    )
    with ReplayServer(
        snapshot, fallback="live", resolve=local_web.resolve, upstream_ca=local_web.ca_cert_path
    ) as server:
        ca = ca_confdir() / MITMPROXY_CA_CERT
        recorded = fetch_via_proxy(server.port, ca, f"{SITE}/")
        stylesheet = fetch_via_proxy(server.port, ca, f"{SITE}/static/site.css?v=3")
        cart = fetch_via_proxy(server.port, ca, f"{SITE}/cart")
        kinds = [(entry.url, entry.kind) for entry in server.log]
    assert recorded.header(MARKER) == "exact" and b"<title>recorded</title>" in recorded.body
    assert stylesheet.status == 200 and stylesheet.header(MARKER) == "live"
    assert stylesheet.header("Content-Type") == "text/css; charset=utf-8"
    assert cart.status == 200 and cart.header(MARKER) == "live" and b"Pizza Palace" in cart.body
    assert kinds == [
        (f"{SITE}/", "exact"),
        (f"{SITE}/static/site.css?v=3", "live"),
        (f"{SITE}/cart", "live"),
    ]
