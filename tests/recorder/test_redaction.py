"""Recordings are masked by default, and masked recordings still replay."""

from __future__ import annotations

import gzip
import re
import secrets
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from susbench.core.certs import MITMPROXY_CA_CERT
from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import PageCapture
from susbench.recorder.proxy import RecordingProxy
from susbench.recorder.redaction import SECRETS_PATH, Redactor, SecretNames
from susbench.replayer.matching import Canonicalizer, ReplayIndex, RuleSet
from susbench.replayer.proxy import ReplayServer, ca_confdir
from susbench.web import LocalWeb
from tests.support.proxy_client import Fetched, fetch_via_proxy
from tests.support.replay import IndexedEntry

SITE = "https://pizzapalace.test"


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor.load()


def test_urls_keep_their_shape_and_lose_only_secret_values(redactor: Redactor) -> None:
    url = "https://s.test/a;jsessionid=XYZ/b?x=1&Access_Token=abc&q=a%20b&api%5Fkey=k&token=&tokens=2#f"
    assert redactor.url(url) == (
        "https://s.test/a;jsessionid=REDACTED/b?x=1&Access_Token=REDACTED&q=a%20b&api%5Fkey=REDACTED"
        "&token=&tokens=2#f"
    )
    assert redactor.url("/cart?sid=1&n=2") == "/cart?sid=REDACTED&n=2"
    assert redactor.url("https://s.test/plain?a=1") == "https://s.test/plain?a=1"


def test_headers_keep_names_schemes_and_attributes(redactor: Redactor) -> None:
    assert redactor.header("Authorization", "Bearer abc.def") == "Bearer REDACTED"
    assert redactor.header("proxy-authorization", "Basic dXNlcjpwYXNz") == "Basic REDACTED"
    assert redactor.header("X-Api-Key", "abc123") == "REDACTED"
    assert redactor.header("Cookie", "a=1; sid=2;theme=dark") == "a=REDACTED; sid=REDACTED; theme=REDACTED"
    assert (
        redactor.header("Set-Cookie", "sid=xyz; Path=/; HttpOnly; SameSite=Lax")
        == "sid=REDACTED; Path=/; HttpOnly; SameSite=Lax"
    )
    assert redactor.header("Referer", "https://s.test/?token=t&p=2") == "https://s.test/?token=REDACTED&p=2"
    assert redactor.header("Content-Type", "text/html; token=1") == "text/html; token=1"
    fields = ((b"Cookie", b"k=v"), (b"Accept", b"*/*"))
    assert redactor.headers(fields) == ((b"Cookie", b"k=REDACTED"), (b"Accept", b"*/*"))


def test_every_masked_parameter_is_dropped_from_the_replayers_canonical_key() -> None:
    """The two data files must agree, or a masked URL would stop matching its live request."""
    names = load_model(SECRETS_PATH, SecretNames)
    rules = RuleSet.load()
    for name in names.query_params:
        for value in (names.mask, secrets.token_hex(8)):
            assert rules.rule_for(name, value, "query") is not None, name
    assert {name.lower() for name in names.path_params} <= {name.lower() for name in rules.path_params}


def test_a_masked_url_matches_the_live_request_whatever_its_secret(redactor: Redactor) -> None:
    recorded = [
        redactor.url("https://s.test/api;jsessionid=A1?x=1&access_token=first"),
        "https://s.test/api?x=2",
    ]
    index = ReplayIndex([IndexedEntry(url, seq) for seq, url in enumerate(recorded)])
    match = index.lookup("GET", "https://s.test/api;jsessionid=B2?access_token=live&x=1")
    assert match is not None and match.entry.seq == 0
    assert match.kind == "canonical" and match.rule is not None and "secret-param" in match.rule


def test_secret_rules_leave_post_bodies_alone() -> None:
    """Bodies are recorded unmasked, so a `key` field still tells two POSTs apart."""
    canonical = Canonicalizer(RuleSet.load())
    assert canonical.body(b"key=a&x=1")[0] != canonical.body(b"key=b&x=1")[0]
    assert canonical.body(b'{"token": "a"}')[0] != canonical.body(b'{"token": "b"}')[0]


def test_a_bad_secrets_file_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    path.write_text("mask: 'not a token'\nquery_params: [token]\n")
    with pytest.raises(InputError, match=r"secrets\.yaml: field 'mask'"):
        Redactor.load(path)


@dataclass(frozen=True)
class SecretRecording:
    path: Path
    secrets: tuple[str, ...]
    stylesheet: Fetched


def _record(web: LocalWeb, out: Path, keep_secrets: bool) -> SecretRecording:
    """A visit with a bearer token and token parameters that gets a session cookie from the cart."""
    token, cart_token, api_key, bearer = (secrets.token_hex(16) for _ in range(4))
    with RecordingProxy(
        host_map=web.resolve, upstream_ca=web.ca_cert_path, keep_secrets=keep_secrets
    ) as proxy:

        def fetch(
            url: str, method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None
        ) -> Fetched:
            return fetch_via_proxy(proxy.port, proxy.ca_cert_path, url, method, headers, body)

        auth = {"Authorization": f"Bearer {bearer}"}
        start = f"{SITE}/?access_token={token}"
        assert fetch(start, headers=auth).status == 200
        added = fetch(
            f"{SITE}/cart/add",
            method="POST",
            headers={**auth, "Content-Type": "application/x-www-form-urlencoded"},
            body=b"slug=margherita&qty=1",
        )
        session = re.search(r"sid=([0-9a-f]+)", added.header("Set-Cookie") or "")
        assert added.status in (302, 303) and session, added.headers
        cart = fetch(
            f"{SITE}/cart?token={cart_token}",
            headers={**auth, "Cookie": f"sid={session.group(1)}", "Referer": start},
        )
        assert cart.status == 200 and b"Margherita" in cart.body, "the session cookie did not reach the site"
        stylesheet = fetch(f"{SITE}/static/site.css?v=3&api_key={api_key}")
        proxy.write_snapshot(
            out, targets=(start,), pages=(PageCapture(url=start, captured_at=datetime.now(UTC)),)
        )
    values = (token, cart_token, api_key, bearer, session.group(1))
    return SecretRecording(out, values, stylesheet)


def _snapshot_bytes(path: Path) -> list[bytes]:
    """The WACZ as stored, each member, and the WARC decompressed."""
    with zipfile.ZipFile(path) as archive:
        members = [archive.read(name) for name in archive.namelist()]
        warc = gzip.decompress(archive.read("archive/data.warc.gz"))
    return [path.read_bytes(), *members, warc]


@pytest.fixture(scope="module")
def masked(local_web: LocalWeb, tmp_path_factory: pytest.TempPathFactory) -> SecretRecording:
    return _record(local_web, tmp_path_factory.mktemp("masked") / "masked.wacz", keep_secrets=False)


@pytest.mark.e2e
def test_no_secret_value_is_anywhere_in_the_snapshot(masked: SecretRecording) -> None:
    blobs = _snapshot_bytes(masked.path)
    for value in masked.secrets:
        assert not any(value.encode() in blob for blob in blobs), value
    warc = blobs[-1]
    markers = (b"access_token=REDACTED", b"Bearer REDACTED", b"sid=REDACTED; Path=/", b"api_key=REDACTED")
    for marker in markers:
        assert marker in warc, marker
    with zipfile.ZipFile(masked.path) as archive:
        assert b"token=REDACTED" in archive.read("indexes/index.cdx")
        assert b"access_token=REDACTED" in archive.read("pages/pages.jsonl")


@pytest.mark.e2e
def test_keep_secrets_writes_them_as_they_were(local_web: LocalWeb, tmp_path: Path) -> None:
    """The same visit with masking off: the check above would see every value."""
    kept = _record(local_web, tmp_path / "kept.wacz", keep_secrets=True)
    warc = _snapshot_bytes(kept.path)[-1]
    for value in kept.secrets:
        assert value.encode() in warc, value
    assert b"REDACTED" not in warc


@pytest.mark.e2e
def test_the_masked_snapshot_replays_live_requests_with_other_secrets(masked: SecretRecording) -> None:
    with ReplayServer(masked.path) as server:
        ca = ca_confdir() / MITMPROXY_CA_CERT
        other = secrets.token_hex(16)
        auth = {"Authorization": f"Bearer {other}", "Cookie": f"sid={other}"}
        home = fetch_via_proxy(server.port, ca, f"{SITE}/?access_token={other}", headers=auth)
        assert home.status == 200 and home.header("X-Susbench-Replay") == "canonical"
        assert server.log[-1].rule is not None and "secret-param" in server.log[-1].rule
        cart = fetch_via_proxy(server.port, ca, f"{SITE}/cart?token={other}", headers=auth)
        assert cart.status == 200 and b"Margherita" in cart.body
        stylesheet = fetch_via_proxy(server.port, ca, f"{SITE}/static/site.css?v=3&api_key={other}")
        assert stylesheet.body == masked.stylesheet.body
