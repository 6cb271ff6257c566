"""Bad snapshot metadata ends in one clear message naming file, member, line and field: no pydantic URL.

Also the three findings of issue 15: 17-digit CDXJ timestamps, `snapshot import X.wacz`, and the
pydantic error-page URL in messages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from susbench.core.errors import SnapshotError
from susbench.snapshot import Snapshot, import_warc
from susbench.snapshot.wacz import MANIFEST_MEMBER, digest_json, replace_members
from tests.support.cli import run_cli
from tests.support.wacz_edit import edit_member

DATA = Path(__file__).parents[1] / "data" / "wacz"
LEAKS = ("pydantic", "Traceback", "For further information")


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small snapshot of ours (py-wacz's fixture WARCs imported)."""
    return import_warc([DATA / "pywacz-multi.wacz"], tmp_path_factory.mktemp("ours") / "ours.wacz")


def _refused(path: Path, *expected: str) -> str:
    with pytest.raises(SnapshotError) as caught:
        Snapshot.open(path)
    message = str(caught.value)
    assert str(path) in message
    for part in expected:
        assert part in message, message
    for leak in LEAKS:
        assert leak not in message, message
    return message


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ({"id": 5}, "field 'id': Input should be a valid string (got 5)"),
        ({"clock_seed_ms": "noon"}, "field 'clock_seed_ms': Input should be a valid integer"),
        ({"viewport": {"width": 5, "height": 800}}, "field 'viewport.width': Input should be greater than"),
        ({"colour": "red"}, "field 'colour': Extra inputs are not permitted"),
    ],
)
def test_bad_manifest_names_member_and_field(
    ours: Path, tmp_path: Path, manifest: dict[str, object], expected: str
) -> None:
    with Snapshot.open(ours) as snapshot:
        data = json.loads(snapshot.manifest.model_dump_json()) | manifest
    bad = edit_member(ours, tmp_path / "bad.wacz", MANIFEST_MEMBER, json.dumps(data).encode())
    _refused(bad, f"{MANIFEST_MEMBER}: {expected}")


def test_manifest_that_is_not_json_is_one_red_line_on_the_command_line(ours: Path, tmp_path: Path) -> None:
    bad = edit_member(ours, tmp_path / "bad.wacz", MANIFEST_MEMBER, b'{"id": "x",')
    message = _refused(bad, MANIFEST_MEMBER, "Invalid JSON")
    result = run_cli("snapshot", "info", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"error: {message}\n"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"url": 5, "ts": "2020-10-07T21:22:36Z"}', "line 2: field 'url': Input should be a valid string"),
        (b'{"title": "no url"}', "line 2: field 'url': Field required"),
        (b'{"url": "http://a.test/"', "line 2: invalid JSON"),
        (b'["http://a.test/"]', "line 2: expected a JSON object, got list"),
        (b'{"url": "http://a.test/\xff"}', "line 2: not UTF-8"),
    ],
)
def test_bad_pages_line_names_line_and_field(tmp_path: Path, line: bytes, expected: str) -> None:
    """A WACZ without our manifest takes its pages from pages.jsonl, so that file is parsed."""
    header = b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'
    bad = edit_member(DATA / "pywacz-1.0.wacz", tmp_path / "bad.wacz", "pages/pages.jsonl", header + line)
    _refused(bad, f"pages/pages.jsonl: {expected}")


@pytest.mark.parametrize(
    ("package", "expected"),
    [
        ({"resources": "all"}, "field 'resources': Input should be a valid"),
        ({"resources": [{"hash": "sha256:00"}]}, "field 'resources.0.path': Field required"),
        ({"resources": [{"path": "archive/x", "hash": "crc32:00"}]}, "field 'resources.0': hash algorithm"),
        ({"profile": "data-package"}, "field 'resources': Field required"),
    ],
)
def test_bad_datapackage_names_field(
    ours: Path, tmp_path: Path, package: dict[str, object], expected: str
) -> None:
    raw = json.dumps(package).encode()
    bad = replace_members(
        ours, tmp_path / "bad.wacz", {"datapackage.json": raw, "datapackage-digest.json": digest_json(raw)}
    )
    _refused(bad, f"datapackage.json: {expected}")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'com,example)/ 20201007212236 {"url": "http://www.example.com/", "offset": "abc", "length": "9", '
            '"filename": "data.warc.gz"}',
            "line 1: field 'offset': Input should be a valid integer",
        ),
        (
            'com,example)/ 20201007212236 {"url": ["x"], "offset": 0, "length": 9, "filename": "a.warc"}',
            "line 1: field 'url': Input should be a valid string",
        ),
        (
            'com,example)/ 2020100721 {"url": "http://a.test/", "offset": 0, "length": 9, "filename": "a"}',
            "line 1: timestamp '2020100721': expected 14 to 17 digits",
        ),
        (
            'com,example)/ 20201007212236 {"url": "http://www.example.com/"',
            "line 1: JSON block: invalid JSON",
        ),
        (
            "com,example)/ 20201007212236 text/html 200",
            "line 1: expected a CDXJ line or the 11 CDX fields 'N b a",
        ),
    ],
)
def test_bad_cdxj_line_names_line_and_field(ours: Path, tmp_path: Path, line: str, expected: str) -> None:
    bad = edit_member(ours, tmp_path / "bad.wacz", "indexes/index.cdx", line.encode() + b"\n")
    _refused(bad, f"indexes/index.cdx: {expected}")


def test_a_huge_cdx_legend_is_quoted_short(ours: Path, tmp_path: Path) -> None:
    """Found by tests/snapshot/test_fuzz_archives.py: a legend line of 70,000 characters was quoted whole."""
    legend = " CDX " + "A" * 70_000 + " N b a m s k r M S V g"
    line = "com,example)/ 20201007212236 http://www.example.com/ text/html 200"
    bad = edit_member(ours, tmp_path / "bad.wacz", "indexes/index.cdx", f"{legend}\n{line}\n".encode())
    message = _refused(bad, "indexes/index.cdx: line 2: expected a CDXJ line or the 12 CDX fields 'AAAA")
    assert len(message) < 1000, len(message)


def test_index_pointing_past_the_warc_is_refused_on_read(ours: Path, tmp_path: Path) -> None:
    line = (
        'com,example)/ 20201007212236 {"url": "http://www.example.com/", "offset": 0, "length": 99999999999, '
        '"filename": "data.warc.gz"}'
    )
    bad = edit_member(ours, tmp_path / "bad.wacz", "indexes/index.cdx", line.encode() + b"\n")
    with Snapshot.open(bad) as snapshot:
        (entry,) = snapshot.entries()
        with pytest.raises(
            SnapshotError, match=r"archive/data\.warc\.gz: offset 0: the index says 99999999999 bytes"
        ):
            snapshot.read_response(entry)


def test_finding_17_digit_timestamps_are_read() -> None:
    """ArchiveWeb.page's CDXJ (17-digit timestamps) used to fail on line 1 of indexes/index.cdx."""
    result = run_cli("snapshot", "info", str(DATA / "archiveweb-page.wacz"))
    assert result.returncode == 0, result.stderr
    assert "webrecorder.net" in result.stdout


def test_finding_import_reads_the_archive_inside_a_wacz(tmp_path: Path) -> None:
    """`snapshot import X.wacz` used to say "bad record header" (it read the zip as a WARC)."""
    result = run_cli(
        "snapshot", "import", str(DATA / "browsertrix-signed.wacz"), "--out", str(tmp_path / "o.wacz")
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"2 responses, .*\b1 pages?\b", result.stdout), result.stdout


@pytest.mark.parametrize(
    ("option", "command"),
    [
        ("--resolve", ("replay", "serve", str(DATA / "pywacz-1.0.wacz"))),
        ("--resolve", ("record", "https://a.test/", "--out", "{tmp}/r.wacz")),
        ("--live-resolve", ("run", "--live", "--operator", "careful", "--db", "{tmp}/r.duckdb")),
    ],
)
def test_finding_no_pydantic_url_in_any_message(
    option: str, command: tuple[str, ...], tmp_path: Path
) -> None:
    """Command-line values refused by a model used to print pydantic's error page URL."""
    args = [arg.format(tmp=tmp_path) for arg in command]
    result = run_cli(*args, option, "a.test=127.0.0.1:99999")
    assert result.returncode == 2, result.stderr
    assert f"{option}: field 'target_port': Input should be less than or equal to 65535" in result.stderr
    for leak in LEAKS:
        assert leak not in result.stderr
