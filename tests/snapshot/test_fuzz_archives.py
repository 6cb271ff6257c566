"""Fuzzing the archive readers: WARC, WACZ (zip, datapackage, digest, pages), CDX/CDXJ/ZipNum, snapshot.json.

Near-valid files are made from real ones (tests/data/wacz) by tests/support/fuzzing.py. Every case
ends in success or in one clean SnapshotError naming the file and where in it.
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from susbench.core.errors import SnapshotError
from susbench.snapshot import Damage, Snapshot, import_warc, verify_snapshot
from susbench.snapshot.indexes import parse_index_text
from susbench.snapshot.wacz import MANIFEST_MEMBER, replace_members
from tests.support.fuzzing import (
    LEAKS,
    check_message,
    mutated_bytes,
    near_valid_json,
    near_valid_warc,
    run_case,
    write_case,
)
from tests.support.wacz_edit import edit_member

DATA = Path(__file__).parents[1] / "data" / "wacz"
WACZ_SEEDS = (
    "archiveweb-page-iframe.wacz",
    "browsertrix-signed.wacz",
    "pywacz-multi.wacz",
    "pywacz-1.0.wacz",
)
CDX11_SEED = (
    " CDX N b a m s k r M S V g\n"
    "com,example)/ 20201007212236 http://www.example.com/ text/html 200 WJM2KPM4GF3QK2BISVUH2ASX64NOUY7L - - "
    "1293 845 example-collection.warc\n"
    "com,example)/index.html 20210520231122 https://example.com/index.html text/html - "
    "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 846 314 example-resource.warc.gz\n"
)
pytestmark = pytest.mark.timeout(600)


def _warc_seeds() -> list[bytes]:
    """The WARCs inside py-wacz's fixture WACZ, uncompressed (response, request, resource, revisit)."""
    seeds = []
    with zipfile.ZipFile(DATA / "pywacz-multi.wacz") as archive:
        for name in sorted(n for n in archive.namelist() if n.startswith("archive/")):
            data = archive.read(name)
            seeds.append(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return seeds


WARC_SEEDS = _warc_seeds()


@pytest.fixture(scope="module")
def wacz_seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Small WACZ of ours and of other tools, as bytes."""
    ours = import_warc([DATA / "pywacz-multi.wacz"], tmp_path_factory.mktemp("seed") / "ours.wacz")
    seeds = {name: (DATA / name).read_bytes() for name in WACZ_SEEDS}
    return seeds | {"ours.wacz": ours.read_bytes()}


def _read_all(path: Path) -> None:
    """Open, then read every record; a damaged record is one clean error naming the snapshot."""
    with Snapshot.open(path) as snapshot:
        for entry in snapshot.entries():
            try:
                snapshot.read_response(entry)
                snapshot.read_request(entry)
            except SnapshotError as exc:
                check_message(str(exc), str(path))


def _verify(path: Path) -> None:
    report = verify_snapshot(path)
    for problem in report.problems:
        assert not any(leak in problem for leak in LEAKS), problem


def _import_and_read(path: Path, folder: Path) -> None:
    out = import_warc([path], folder / "imported.wacz", on_damage=lambda damage: None)
    _read_all(out)


@given(data=st.data())
def test_fuzz_warc_reader(data: st.DataObject, memory_bound: None) -> None:
    raw = data.draw(near_valid_warc(data.draw(st.sampled_from(WARC_SEEDS))))
    name = data.draw(st.sampled_from(["case.warc", "case.warc.gz"]))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_case(Path(tmp), name, raw)
        run_case("WARC", str(path), lambda: _import_and_read(path, Path(tmp)))


@st.composite
def _near_valid_lines(draw: st.DrawFn, content: bytes) -> bytes:
    """A CDX/CDXJ/IDX/JSONL member: one line damaged field-wise (its JSON block or its key/timestamp)."""
    lines = content.split(b"\n")
    number = draw(st.integers(0, max(len(lines) - 1, 0)))
    line = lines[number]
    start = line.find(b"{")
    if start >= 0 and draw(st.booleans()):
        try:
            document = json.loads(line[start:])
        except ValueError:
            document = {}
        line = line[:start] + draw(near_valid_json(document))
    else:
        line = draw(mutated_bytes(line, 2))
    lines[number] = line
    return b"\n".join(lines)


@st.composite
def _near_valid_member(draw: st.DrawFn, member: str, content: bytes) -> bytes:
    if member.endswith(".json"):
        return draw(near_valid_json(json.loads(content)))
    if member.endswith((".jsonl", ".cdx", ".cdxj", ".idx")):
        return draw(_near_valid_lines(content))
    if member.endswith(".cdx.gz"):
        lines = draw(_near_valid_lines(gzip.decompress(content)))
        return gzip.compress(lines, mtime=0) if draw(st.booleans()) else draw(mutated_bytes(content))
    plain = gzip.decompress(content) if content[:2] == b"\x1f\x8b" else content
    return draw(near_valid_warc(plain))


@given(data=st.data())
def test_fuzz_wacz_reader(wacz_seeds: dict[str, bytes], data: st.DataObject, memory_bound: None) -> None:
    """Damage inside a member (re-hashed so the parser is reached, or not), to the zip, or to its listing."""
    seed_name = data.draw(st.sampled_from(sorted(wacz_seeds)))
    damage = data.draw(
        st.sampled_from(["member", "member", "member", "stale member", "zip bytes", "drop", "add"])
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        seed = write_case(folder, "seed.wacz", wacz_seeds[seed_name])
        path = folder / "case.wacz"
        with zipfile.ZipFile(seed) as archive:
            member = data.draw(st.sampled_from(archive.namelist()))
            content = archive.read(member)
        if damage == "zip bytes":
            path.write_bytes(data.draw(mutated_bytes(wacz_seeds[seed_name])))
        elif damage == "drop":
            edit_member(seed, path, member, None)
        elif damage == "add":
            edit_member(
                seed, path, f"indexes/extra{data.draw(st.sampled_from(['.cdx', '.idx', '.cdx.gz']))}", content
            )
        elif damage == "stale member" or member.startswith("datapackage"):
            replace_members(seed, path, {member: data.draw(_near_valid_member(member, content))})
        else:
            edit_member(seed, path, member, data.draw(_near_valid_member(member, content)))
        run_case("WACZ open + read", str(path), lambda: _read_all(path))
        run_case("WACZ verify", str(path), lambda: _verify(path))
        run_case("WACZ import", str(path), lambda: _import_and_read(path, folder))


@given(data=st.data())
def test_fuzz_index_lines(wacz_seeds: dict[str, bytes], data: st.DataObject) -> None:
    """CDXJ (ours, ArchiveWeb.page's, py-wacz's ZipNum blocks) and classic CDX lines, parsed directly."""
    seeds = [CDX11_SEED.encode()]
    for name in ("ours.wacz", "archiveweb-page-iframe.wacz"):
        with (
            tempfile.TemporaryDirectory() as tmp,
            zipfile.ZipFile(write_case(Path(tmp), name, wacz_seeds[name])) as z,
        ):
            seeds.append(z.read("indexes/index.cdx"))
    seed = data.draw(st.sampled_from(seeds))
    text = data.draw(_near_valid_lines(seed)) if data.draw(st.booleans()) else data.draw(mutated_bytes(seed))
    run_case("CDX/CDXJ", "case.cdx", lambda: parse_index_text(text, "case.cdx"))


@given(data=st.data())
def test_fuzz_snapshot_manifest(wacz_seeds: dict[str, bytes], data: st.DataObject) -> None:
    """Our snapshot.json with fields of wrong type, size or encoding (re-hashed, so it is parsed)."""
    with tempfile.TemporaryDirectory() as tmp:
        seed = write_case(Path(tmp), "seed.wacz", wacz_seeds["ours.wacz"])
        with zipfile.ZipFile(seed) as archive:
            manifest = json.loads(archive.read(MANIFEST_MEMBER))
        path = edit_member(
            seed, Path(tmp) / "case.wacz", MANIFEST_MEMBER, data.draw(near_valid_json(manifest))
        )
        run_case("snapshot.json", str(path), lambda: _read_all(path))


def _gzip_bomb_warc(path: Path) -> Path:
    """A good record, one whose gzip member inflates past the 256 MiB record cap, and a good one."""
    good = WARC_SEEDS[0]
    bomb_body = b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 300000000\r\n\r\n"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = compressor.compress(bomb_body) + compressor.compress(bytes(300_000_000)) + compressor.flush()
    path.write_bytes(gzip.compress(good, mtime=0) + bomb + gzip.compress(good, mtime=0))
    return path


def test_gzip_bomb_record_is_skipped_at_the_cap(tmp_path: Path) -> None:
    damaged: list[Damage] = []
    out = import_warc(
        [_gzip_bomb_warc(tmp_path / "bomb.warc.gz")], tmp_path / "o.wacz", on_damage=damaged.append
    )
    assert [d.reason for d in damaged] == ["gzip member decompresses to more than the 256 MiB cap"]
    with Snapshot.open(out) as snapshot:
        assert len(snapshot) == 2


@pytest.mark.parametrize(
    ("member", "data", "expected"),
    [
        ("datapackage.json", b" " * (65 << 20), "datapackage.json: 68157440 bytes is over the 64 MiB cap"),
        (
            "indexes/index.cdx",
            b"a" * (2 << 20),
            "indexes/index.cdx: line 1: line of 2097152 bytes is over the 1 MiB cap",
        ),
    ],
)
def test_oversized_members_are_refused_by_their_cap(
    wacz_seeds: dict[str, bytes], tmp_path: Path, member: str, data: bytes, expected: str
) -> None:
    """Deflated in the zip (a few KB on disk), refused before or while they are inflated."""
    seed = write_case(tmp_path, "seed.wacz", wacz_seeds["ours.wacz"])
    path = tmp_path / "big.wacz"
    with zipfile.ZipFile(seed) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            if name != member:
                new.writestr(name, old.read(name), zipfile.ZIP_STORED)
        new.writestr(member, data)
    with pytest.raises(SnapshotError, match=re.escape(expected)):
        Snapshot.open(path, verify=False)
