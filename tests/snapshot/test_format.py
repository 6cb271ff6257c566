"""The snapshot format on real WARCs from other tools and on damaged input (no browser needed)."""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from susbench.core.errors import SnapshotError
from susbench.snapshot import Snapshot, import_warc, lookup_key, method_query, surt, verify_snapshot
from tests.support.cli import run_cli


@pytest.mark.parametrize(
    ("name", "responses", "pages_at_least"),
    [("books.toscrape.warc", 30, 1), ("lil-projects.warc.gz", 27, 1), ("wwwgooglecom.warc.gz", 40, 1)],
)
def test_import_real_warcs(
    realdata: Path, tmp_path: Path, name: str, responses: int, pages_at_least: int
) -> None:
    out = import_warc([realdata / "warc" / name], tmp_path / "s.wacz")
    with Snapshot.open(out) as snapshot:
        entries = list(snapshot.entries())
        assert len(entries) == responses
        assert len(snapshot.manifest.pages) >= pages_at_least
        assert snapshot.manifest.damaged == ()
        for entry in entries:
            response = snapshot.read_response(entry)
            assert 100 <= response.status < 600
        keys = [(entry.surt, entry.timestamp, entry.seq) for entry in entries]
        assert keys == sorted(keys)


def test_chunked_body_is_decoded_on_read(tmp_path: Path) -> None:
    body = b"4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n"
    http = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n" + body
    record = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.test/c\r\n"
        b"WARC-Date: 2020-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
        b"Content-Type: application/http; msgtype=response\r\nContent-Length: "
        + str(len(http)).encode()
        + b"\r\n\r\n"
        + http
        + b"\r\n\r\n"
    )
    source = tmp_path / "chunked.warc"
    source.write_bytes(record)
    with Snapshot.open(import_warc([source], tmp_path / "c.wacz")) as snapshot:
        (entry,) = snapshot.entries()
        response = snapshot.read_response(entry)
    assert response.body == b"Wikipedia"
    assert all(key.lower() != "transfer-encoding" for key, _ in response.headers)


def test_truncated_warc_imports_with_damage_reported(realdata: Path, tmp_path: Path) -> None:
    data = (realdata / "warc" / "books.toscrape.warc").read_bytes()
    cut = tmp_path / "cut.warc"
    cut.write_bytes(data[: len(data) - 5000])
    damaged = []
    out = import_warc([cut], tmp_path / "cut.wacz", on_damage=damaged.append)
    assert len(damaged) == 1 and damaged[0].path == str(cut)
    assert damaged[0].offset > 0 and "truncated" in damaged[0].reason
    with Snapshot.open(out) as snapshot:
        assert len(snapshot) == 29
        assert snapshot.manifest.damaged and str(damaged[0].offset) in snapshot.manifest.damaged[0]


def test_bad_record_in_the_middle_is_skipped(realdata: Path, tmp_path: Path) -> None:
    data = bytearray((realdata / "warc" / "books.toscrape.warc").read_bytes())
    offset = data.index(b"WARC/1.", 446)
    data[offset : offset + 5] = b"XXXX/"
    broken = tmp_path / "broken.warc"
    broken.write_bytes(bytes(data))
    damaged = []
    with Snapshot.open(import_warc([broken], tmp_path / "b.wacz", on_damage=damaged.append)) as snapshot:
        assert [d.offset for d in damaged] == [offset]
        assert len(snapshot) == 29


def test_truncated_gzip_warc_names_file_and_offset(realdata: Path, tmp_path: Path) -> None:
    data = (realdata / "warc" / "lil-projects.warc.gz").read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[:700_000])
    result = run_cli("snapshot", "import", str(cut), "--out", str(tmp_path / "x.wacz"))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert f"{cut}: offset" in result.stdout.replace("\n", "")


def test_not_a_warc_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.warc"
    junk.write_text("hello, not a WARC\n")
    with pytest.raises(SnapshotError, match=r"junk\.warc: no readable WARC record"):
        import_warc([junk], tmp_path / "j.wacz")
    result = run_cli("snapshot", "import", str(junk), "--out", str(tmp_path / "j.wacz"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "junk.warc" in result.stderr


def test_verify_says_a_damaged_gzip_record_in_its_own_lines_only(realdata: Path, tmp_path: Path) -> None:
    """warcio wrote zlib's "Error -3 while decompressing data" to stderr, before verify's own lines."""
    out = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "s.wacz")
    with zipfile.ZipFile(out) as archive:
        info = archive.getinfo("archive/data.warc.gz")
    raw = bytearray(out.read_bytes())
    raw[info.header_offset + 30 + len(info.filename) + len(info.extra) + 9500] ^= 0xFF  # mid-record
    out.write_bytes(bytes(raw))
    result = run_cli("snapshot", "verify", str(out))
    problems = verify_snapshot(out).problems
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {out}: {len(problems)} problem(s) found"]
    assert any("Error -3 while decompressing data" in problem for problem in problems)
    assert "".join(result.stdout.split()) == "".join(f"FAIL {problem}" for problem in problems).replace(
        " ", ""
    )


def test_flipped_byte_fails_open_and_verify_naming_the_member(realdata: Path, tmp_path: Path) -> None:
    out = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "s.wacz")
    with zipfile.ZipFile(out) as archive:
        info = archive.getinfo("archive/data.warc.gz")
    raw = bytearray(out.read_bytes())
    position = info.header_offset + 30 + len(info.filename) + len(info.extra) + 5000
    raw[position] ^= 0xFF
    out.write_bytes(bytes(raw))
    with pytest.raises(SnapshotError, match=r"member archive/data\.warc\.gz: (sha256 mismatch|corrupted)"):
        Snapshot.open(out)
    report = verify_snapshot(out)
    assert not report.ok and "archive/data.warc.gz" in report.problems[0]
    result = run_cli("snapshot", "verify", str(out))
    assert result.returncode == 2 and "archive/data.warc.gz" in result.stdout
    assert "Traceback" not in result.stderr
    with Snapshot.open(out, verify=False) as snapshot:
        served = damaged = 0
        for entry in snapshot.entries():
            try:
                snapshot.read_response(entry)
                served += 1
            except SnapshotError as exc:
                assert "archive/data.warc.gz: offset" in str(exc)
                damaged += 1
        assert damaged == 1 and served == 29


def test_missing_index_is_rebuilt_with_a_warning(realdata: Path, tmp_path: Path) -> None:
    source = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "s.wacz")
    stripped = tmp_path / "noindex.wacz"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(stripped, "w", zipfile.ZIP_STORED) as new:
        package = json.loads(old.read("datapackage.json"))
        package["resources"] = [r for r in package["resources"] if r["path"] != "indexes/index.cdx"]
        for name in old.namelist():
            if name not in ("indexes/index.cdx", "datapackage.json", "datapackage-digest.json"):
                new.writestr(name, old.read(name))
        new.writestr("datapackage.json", json.dumps(package))
    with pytest.warns(UserWarning, match="no index"), Snapshot.open(stripped) as snapshot:
        assert len(snapshot) == 30


def test_wacz_layout_and_hashes(realdata: Path, tmp_path: Path) -> None:
    out = import_warc([realdata / "warc" / "books.toscrape.warc"], tmp_path / "s.wacz")
    with zipfile.ZipFile(out) as archive:
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
        package = json.loads(archive.read("datapackage.json"))
        assert package["profile"] == "data-package" and package["wacz_version"] == "1.1.1"
        for resource in package["resources"]:
            digest = hashlib.sha256(archive.read(resource["path"])).hexdigest()
            assert resource["hash"] == f"sha256:{digest}"
        digest_doc = json.loads(archive.read("datapackage-digest.json"))
        assert digest_doc["hash"] == "sha256:" + hashlib.sha256(archive.read("datapackage.json")).hexdigest()
        first = archive.read("pages/pages.jsonl").decode().splitlines()[0]
        assert json.loads(first) == {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
        member = archive.read("archive/data.warc.gz")
        assert gzip.decompress(member).startswith(b"WARC/1.")


def test_surt_matches_pywb() -> None:
    assert surt("https://www.Example.com/A/b/?z=1&a=2#x") == "com,example)/a/b?a=2&z=1"
    assert surt("http://127.0.0.1:8080/x") == "1,0,0,127:8080)/x"
    assert surt("https://shop.test/") == "test,shop)/"
    assert surt("https://shop.test:8443/cart/") == "test,shop:8443)/cart"


def test_post_keys_carry_body_query_and_whole_body_digest() -> None:
    assert (
        method_query("POST", "application/x-www-form-urlencoded", b"a=1&b=x+y")
        == "__wb_method=post&a=1&b=x y"
    )
    assert method_query("POST", "application/json", b'{"q": {"id": 3}, "v": [1, 2]}') == (
        "__wb_method=post&id=3&v=1&v.2_=2"
    )
    assert method_query("POST", "application/octet-stream", b"\x00\x01").startswith(
        "__wb_method=post&__wb_post_data="
    )
    big = b'{"query": "' + b"x" * 10_000 + b'"}'
    assert len(method_query("POST", "application/json", big)) == 4096
    assert (
        lookup_key("POST", "https://a.test/api", "application/json", b'{"a":1}')
        == "test,a)/api?__wb_method=post&a=1"
    )
