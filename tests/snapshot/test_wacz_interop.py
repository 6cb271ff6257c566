"""WACZ made by Webrecorder's tools opens, replays and imports; every WACZ we write passes `wacz validate`.

The foreign files are real (tests/data/README.md says where each comes from); py-wacz runs from its
own virtualenv (tests/support/wacz_tools.py) to validate our output and to index real WARCs.
"""

from __future__ import annotations

import ast
import json
import time
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Playwright
from warcio.archiveiterator import ArchiveIterator

from susbench.browser import BrowserProfile, LocalBackend
from susbench.controller.environment import WorkerSetup
from susbench.controller.traffic import TrafficSource
from susbench.core.models import Episode
from susbench.core.paths import REPO_ROOT, SNAPSHOTS_DIR
from susbench.recorder.proxy import mitmproxy_confdir
from susbench.replayer.check import check_snapshot
from susbench.snapshot import Snapshot, generate_key, import_warc, index_warc, sign_snapshot, verify_snapshot
from susbench.snapshot.indexes import parse_index_text
from susbench.snapshot.wacz import MANIFEST_MEMBER, digest_json, upgrade_layout
from susbench.web import LocalWeb
from tests.support.proxy_client import fetch_via_proxy
from tests.support.replaywebpage import replaywebpage_site
from tests.support.wacz_tools import WaczTools

DATA = Path(__file__).parents[1] / "data" / "wacz"
RWP_TIMEOUT_S = 180
FOREIGN = {
    # file: (indexed captures, WARCs in archive/, first page, its title)
    "archiveweb-page.wacz": (14, 1, "https://webrecorder.net/", "Webrecorder"),
    "archiveweb-page-iframe.wacz": (2, 1, "http://localhost:20000/", "http://localhost:20000/"),
    "browsertrix-signed.wacz": (2, 1, "https://example.com/", "Example Domain"),
    "pywacz-1.0.wacz": (1, 1, "http://www.example.com/", "Example Domain"),
    "pywacz-multi.wacz": (4, 3, "http://www.example.com/", "Example Domain"),
}


def _warc_records(wacz: Path) -> list[tuple[str, str]]:
    """(WARC-Type, target URI) of every record of every WARC in the WACZ, read by warcio."""
    records = []
    with zipfile.ZipFile(wacz) as archive:
        for name in sorted(n for n in archive.namelist() if n.startswith("archive/")):
            with archive.open(name) as stream:
                for record in ArchiveIterator(stream):
                    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                    records.append((record.rec_type, uri))
    return records


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_foreign_wacz_opens_and_serves_every_capture(name: str) -> None:
    captures, warcs, first_page, title = FOREIGN[name]
    with Snapshot.open(DATA / name) as snapshot:
        entries = list(snapshot.entries())
        assert len(entries) == captures
        assert len({entry.filename for entry in entries}) == warcs
        assert len({entry.seq for entry in entries}) == captures, "capture order must be unique"
        manifest = snapshot.manifest
        assert manifest.source == "imported"
        assert (manifest.pages[0].url, manifest.pages[0].title) == (first_page, title)
        earliest = min(entry.timestamp[:14] for entry in entries)
        assert manifest.created_at.strftime("%Y%m%d%H%M%S") == earliest
        for entry in entries:
            response = snapshot.read_response(entry)
            assert 200 <= response.status < 600
            assert response.body or response.status in (204, 304) or entry.record_type == "revisit"


def test_archiveweb_page_keeps_millisecond_timestamps() -> None:
    with Snapshot.open(DATA / "archiveweb-page.wacz") as snapshot:
        stamps = [entry.timestamp for entry in snapshot.entries()]
    assert all(len(stamp) == 17 for stamp in stamps)


def test_resource_record_and_its_revisit_are_served() -> None:
    """py-wacz's fixture holds a `resource` record (no HTTP headers) and a revisit pointing at it."""
    with Snapshot.open(DATA / "pywacz-multi.wacz") as snapshot:
        by_url = {(entry.url, entry.record_type): entry for entry in snapshot.entries()}
        resource = snapshot.read_response(by_url[("https://example.com/index.html", "response")])
        revisit = snapshot.read_response(by_url[("https://example.com/", "revisit")])
    assert resource.status == 200 and resource.header("Content-Type") == "text/html"
    assert b"<title>Example Domain</title>" in resource.body
    assert revisit.body == resource.body


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_import_keeps_every_record_and_page(name: str, tmp_path: Path) -> None:
    source = DATA / name
    out = import_warc([source], tmp_path / "imported.wacz")
    assert sorted(_warc_records(out)) == sorted(_warc_records(source))
    with Snapshot.open(source) as original, Snapshot.open(out) as imported:
        theirs = {(entry.url, entry.timestamp[:14], entry.record_type) for entry in original.entries()}
        ours = {(entry.url, entry.timestamp[:14], entry.record_type) for entry in imported.entries()}
        assert ours == theirs
        assert [(p.url, p.title) for p in imported.manifest.pages] == [
            (p.url, p.title) for p in original.manifest.pages
        ]
        for entry in imported.entries():
            assert imported.read_response(entry).status >= 200


def test_several_wacz_and_warc_import_into_one(realdata: Path, tmp_path: Path) -> None:
    sources = [
        DATA / "pywacz-multi.wacz",
        DATA / "browsertrix-signed.wacz",
        realdata / "warc" / "books.toscrape.warc",
    ]
    out = import_warc(sources, tmp_path / "all.wacz")
    expected = len(_warc_records(sources[0])) + len(_warc_records(sources[1]))
    with open(sources[2], "rb") as handle:
        expected += sum(1 for _ in ArchiveIterator(handle))
    assert len(_warc_records(out)) == expected


def test_other_tools_signatures_are_checked() -> None:
    """ArchiveWeb.page signs with an anonymous ECDSA P-384 key, Browsertrix's authsign with a domain cert."""
    anonymous = verify_snapshot(DATA / "archiveweb-page.wacz")
    assert anonymous.ok, anonymous.problems
    assert anonymous.signature is not None and anonymous.signature.algorithm == "ECDSA secp384r1"
    domain = verify_snapshot(DATA / "browsertrix-signed.wacz")
    assert domain.ok, domain.problems
    assert domain.signature is not None and domain.signature.signer == "btrix-sign-test.webrecorder.net"


def test_pywacz_zipnum_index_equals_our_index(wacz_tools: WaczTools, tmp_path: Path) -> None:
    """py-wacz indexes the bundled snapshot's WARC (3,000+ captures: several ZipNum blocks) like we do."""
    warc = tmp_path / "data.warc.gz"
    with zipfile.ZipFile(SNAPSHOTS_DIR / "localweb-2026-11-29.wacz") as archive:
        warc.write_bytes(archive.read("archive/data.warc.gz"))
    made = wacz_tools.run("wacz", "create", "-o", "theirs.wacz", str(warc), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    with zipfile.ZipFile(tmp_path / "theirs.wacz") as archive:
        assert len(archive.read("indexes/index.idx").splitlines()) > 2, "expected several ZipNum blocks"
    ours, _ = index_warc(warc)
    with Snapshot.open(tmp_path / "theirs.wacz") as theirs:
        theirs_keys = {(e.url, e.offset, e.length, e.status, e.record_type) for e in theirs.entries()}
    assert theirs_keys == {(e.url, e.offset, e.length, e.status, e.record_type) for e in ours}


def test_classic_cdx_from_cdxj_indexer_reads_like_cdxj(wacz_tools: WaczTools, realdata: Path) -> None:
    warc = realdata / "warc" / "books.toscrape.warc"
    cdx11 = wacz_tools.run("cdxj-indexer", "-11", str(warc))
    cdxj = wacz_tools.run("cdxj-indexer", str(warc))
    assert cdx11.returncode == 0 and cdx11.stdout.startswith(" CDX N b a m s k r M S V g")
    from_cdx = parse_index_text(cdx11.stdout.encode(), "cdx11")
    from_cdxj = parse_index_text(cdxj.stdout.encode(), "cdxj")
    assert len(from_cdx) == 30
    keys = [(e.surt, e.timestamp, e.url, e.status, e.mime, e.offset, e.length, e.filename) for e in from_cdx]
    assert keys == [
        (e.surt, e.timestamp, e.url, e.status, e.mime, e.offset, e.length, e.filename) for e in from_cdxj
    ]


def _legacy_layout(source: Path, out: Path) -> Path:
    """`source` as snapshots were written before the manifest moved: `snapshot.json` at the root."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as new:
        package = json.loads(old.read("datapackage.json"))
        for resource in package["resources"]:
            if resource["path"] == MANIFEST_MEMBER:
                resource["path"] = "snapshot.json"
        package_bytes = json.dumps(package, indent=2).encode()
        for name in old.namelist():
            if name not in ("datapackage.json", "datapackage-digest.json"):
                new.writestr(name.replace(MANIFEST_MEMBER, "snapshot.json"), old.read(name))
        new.writestr("datapackage.json", package_bytes)
        new.writestr("datapackage-digest.json", digest_json(package_bytes))
    return out


def _live_archive(web: LocalWeb, tmp_path: Path) -> Path:
    """What `susbench run --live` archives per episode, written by the controller's own live traffic."""
    setup = WorkerSetup(
        mode="live",
        snapshot=None,
        extension_dir=tmp_path,
        live_resolve=tuple(web.resolve.as_args()),
        live_ca_cert=web.ca_cert_path,
        archive_dir=tmp_path / "archives",
        tmp_dir=tmp_path,
    )
    episode = Episode(
        id="live-1",
        run_id="run-1",
        task_id="pizzapalace-cart",
        site="pizzapalace.test",
        injection_id=None,
        pattern_type=None,
        condition="control",
        operator="careful",
        mode="live",
        repeat=0,
        seed=0,
    )
    with TrafficSource(setup) as source, source.episode(episode, "pizzapalace-cart") as traffic:
        assert traffic.proxy_url is not None
        port = int(traffic.proxy_url.rsplit(":", 1)[1])
        fetched = fetch_via_proxy(
            port, mitmproxy_confdir() / "mitmproxy-ca-cert.pem", "https://pizzapalace.test/"
        )
        assert fetched.status == 200
        _, archive = traffic.collect()
    assert archive is not None
    return Path(archive)


def _our_writers(realdata: Path, web: LocalWeb, tmp_path: Path) -> dict[str, Path]:
    """One WACZ from each writer but the recorder (tested with Chromium below), and the bundled one
    (`snapshots/rebuild.py`: the recorder's output, one session per task)."""
    warc_import = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "warc-import.wacz")
    wacz_import = import_warc([DATA / "pywacz-multi.wacz"], tmp_path / "wacz-import.wacz")
    legacy = _legacy_layout(warc_import, tmp_path / "legacy.wacz")
    upgraded = upgrade_layout(legacy, tmp_path / "upgraded.wacz")
    key, _ = generate_key(tmp_path / "keys" / "signer.key")
    sign_snapshot(warc_import, key, tmp_path / "signed.wacz")
    return {
        "warc import": warc_import,
        "wacz import": wacz_import,
        "upgrade": upgraded,
        "sign": tmp_path / "signed.wacz",
        "controller live archive": _live_archive(web, tmp_path),
        "bundled": SNAPSHOTS_DIR / "localweb-2026-11-29.wacz",
    }


def test_every_wacz_we_write_passes_wacz_validate(
    wacz_tools: WaczTools, realdata: Path, local_web: LocalWeb, tmp_path: Path
) -> None:
    written = _our_writers(realdata, local_web, tmp_path)
    covered = {"recorder", *written}  # the recorder's output is validated with Chromium below
    assert {label for labels in WRITERS.values() for label in labels} <= covered
    for writer, path in written.items():
        with zipfile.ZipFile(path) as archive:
            assert MANIFEST_MEMBER in archive.namelist(), writer
            assert all(name.count("/") == 1 for name in archive.namelist() if "datapackage" not in name)
        result = wacz_tools.validate(path)
        assert result.returncode == 0 and "Validation succeeded" in result.stdout, (writer, result.stdout)
        assert verify_snapshot(path).ok, writer


PACKERS = {"write_wacz", "replace_members"}
"""The two functions that write a WACZ's zip (susbench/snapshot/wacz.py); every writer calls one."""
WRITERS = {
    # function packing a WACZ -> the validator tests' writers that run it. The recording proxy writes
    # for record_plans (`susbench record`, snapshots/rebuild.py's bundled snapshot, drift's live
    # recordings) and for live runs; the container tests serve the bundled snapshot.
    "recorder/proxy.py:RecordingProxy.write_snapshot": ("recorder", "bundled", "controller live archive"),
    "susbench/snapshot/importer.py:import_warc": ("warc import", "wacz import"),
    "susbench/snapshot/wacz.py:upgrade_layout": ("upgrade",),
    "susbench/snapshot/signing.py:sign_snapshot": ("sign",),
}


def _packs(call: ast.Call) -> bool:
    """A call of a packer, or a zip opened for writing."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    if name in PACKERS:
        return True
    modes = [*call.args[1:2], *(keyword.value for keyword in call.keywords if keyword.arg == "mode")]
    return name == "ZipFile" and any(
        isinstance(mode, ast.Constant) and mode.value in ("w", "a", "x") for mode in modes
    )


def _packer_callers(root: Path) -> set[str]:
    """`file:Class.function` (`file:<module>` for top-level code) of the product's code writing a WACZ."""
    found = set()
    for folder in ("susbench", "recorder", "replayer", "snapshots"):
        for path in sorted((root / folder).rglob("*.py")):
            scopes = [(node, "") for node in ast.parse(path.read_text(encoding="utf-8")).body]
            while scopes:
                node, prefix = scopes.pop()
                if isinstance(node, ast.ClassDef):
                    scopes += [(child, f"{prefix}{node.name}.") for child in node.body]
                    continue
                function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                if function and path.name == "wacz.py" and node.name in PACKERS:
                    continue
                calls = [call for call in ast.walk(node) if isinstance(call, ast.Call)]
                if any(map(_packs, calls)):
                    scope = f"{prefix}{node.name}" if function else f"{prefix}<module>"
                    found.add(f"{path.relative_to(root)}:{scope}")
    return found


def test_the_validator_tests_cover_every_wacz_writer() -> None:
    """A new way of writing a WACZ must join the validator tests above (and WRITERS)."""
    assert _packer_callers(Path(REPO_ROOT)) == set(WRITERS)


def test_old_layout_opens_fails_the_validator_and_upgrades(
    wacz_tools: WaczTools, realdata: Path, tmp_path: Path
) -> None:
    current = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "current.wacz")
    legacy = _legacy_layout(current, tmp_path / "legacy.wacz")
    with Snapshot.open(legacy) as old, Snapshot.open(current) as new:
        assert old.manifest == new.manifest and list(old.entries()) == list(new.entries())
    refused = wacz_tools.validate(legacy)
    assert refused.returncode == 1 and "snapshot.json is not listed in the datapackage" in refused.stdout
    upgrade_layout(legacy, legacy)
    assert wacz_tools.validate(legacy).returncode == 0
    with Snapshot.open(legacy) as upgraded:
        assert upgraded.manifest == new.manifest


@pytest.mark.e2e
def test_recorded_snapshot_passes_wacz_validate(recorded_snapshot: Path, wacz_tools: WaczTools) -> None:
    result = wacz_tools.validate(recorded_snapshot)
    assert result.returncode == 0 and "Validation succeeded" in result.stdout, result.stdout


def _with_zip64_local_headers(source: Path, out: Path) -> Path:
    """`source` as we wrote it before: ZIP64 extra fields in every local header, none in the directory."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            with new.open(zipfile.ZipInfo(info.filename, info.date_time), "w", force_zip64=True) as target:
                target.write(old.read(info))
    return out


SW_ACTIVATED_JS = """async (timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const registration = await navigator.serviceWorker.getRegistration("replay/");
    if (registration?.active?.state === "activated") return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}"""
"""Resolves once wabac.js's service worker controls `replay/` (false after `timeoutMs`)."""


def _replaywebpage_shows(playwright: Playwright, rwp: Path, wacz: Path, url: str, text: str) -> str:
    """Load `wacz` in ReplayWeb.page in Chromium; "replayed" once `text` shows in the archived page.

    ReplayWeb.page 2.4.6 opens its `replay/` iframe as soon as its service worker is registered, not
    activated: on a busy machine the iframe then reaches the plain web server (a directory listing)
    instead of wabac.js. The page is reloaded once the worker is active, as a returning visitor has it.
    """
    profile = BrowserProfile(block_service_workers=False)
    with replaywebpage_site(rwp, wacz, url) as embed, LocalBackend(playwright).launch(profile) as session:
        page = session.context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text[:200]))
        deadline = time.monotonic() + RWP_TIMEOUT_S
        page.goto(embed)
        if not page.evaluate(SW_ACTIVATED_JS, RWP_TIMEOUT_S * 1000):
            return f"the service worker never activated; console: {console[-6:]}"
        page.reload()
        app = page.frame_locator("replay-web-page iframe")
        archived = app.frame_locator("iframe").first.get_by_text(text).first
        failed = app.get_by_text("Loading Error").first
        while time.monotonic() < deadline:
            if archived.is_visible():
                return "replayed"
            if failed.is_visible():
                return failed.inner_text()
            page.wait_for_timeout(500)
        page.screenshot(path=str(wacz.with_suffix(".png")))
        return f"neither page nor error ({wacz.with_suffix('.png')}); console: {console[-6:]}"


@pytest.mark.e2e
def test_replaywebpage_replays_our_signed_wacz(
    recorded_snapshot: Path, replaywebpage: Path, web_playwright: Playwright, tmp_path: Path
) -> None:
    """ReplayWeb.page (wabac.js) loads what our recorder writes, signed with our Ed25519 key."""
    key, _ = generate_key(tmp_path / "signer.key")
    signed = sign_snapshot(recorded_snapshot, key, tmp_path / "signed.wacz")
    assert signed.algorithm == "Ed25519"
    shown = _replaywebpage_shows(
        web_playwright, replaywebpage, tmp_path / "signed.wacz", "https://pizzapalace.test/", "Pizza Palace"
    )
    assert shown == "replayed"
    legacy = _with_zip64_local_headers(tmp_path / "signed.wacz", tmp_path / "zip64.wacz")
    shown = _replaywebpage_shows(
        web_playwright, replaywebpage, legacy, "https://pizzapalace.test/", "Pizza Palace"
    )
    assert "Loading Error" in shown, "the zip64 control should fail: the test would not see a broken WACZ"


@pytest.mark.e2e
def test_archiveweb_page_wacz_replays_in_chromium(web_playwright: Playwright) -> None:
    (page,) = check_snapshot(DATA / "archiveweb-page.wacz", timeout_s=20, playwright=web_playwright)
    assert page.url == "https://webrecorder.net/" and page.error is None
    coverage = page.coverage
    assert coverage.exact >= 10, coverage
    with Snapshot.open(DATA / "archiveweb-page.wacz") as snapshot:
        captured = {entry.url for entry in snapshot.entries()}
    assert not set(coverage.misses) & captured, "a captured URL was reported as a miss"
