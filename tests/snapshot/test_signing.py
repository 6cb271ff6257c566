"""Snapshot signing: Ed25519 over the datapackage digest; anything altered after signing is named."""

from __future__ import annotations

import base64
import json
import stat
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from susbench.core.errors import SusbenchError
from susbench.snapshot import generate_key, import_warc, sign_snapshot, verify_snapshot
from susbench.snapshot.signing import load_public_key
from susbench.snapshot.wacz import INDEX_MEMBER, MANIFEST_MEMBER, digest_json, replace_members
from tests.support.cli import run_cli
from tests.support.wacz_edit import edit_member

DATA = Path(__file__).parents[1] / "data" / "wacz"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return generate_key(tmp_path_factory.mktemp("keys") / "signer.key")


@pytest.fixture
def signed(keys: tuple[Path, Path], tmp_path: Path) -> Path:
    snapshot = import_warc([DATA / "pywacz-multi.wacz"], tmp_path / "signed.wacz")
    sign_snapshot(snapshot, keys[0])
    return snapshot


def _trusted(keys: tuple[Path, Path]) -> Ed25519PublicKey:
    return load_public_key(keys[1])


def test_keygen_writes_a_private_key_only_its_owner_reads(keys: tuple[Path, Path]) -> None:
    private, public = keys
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    with pytest.raises(SusbenchError, match="already exists"):
        generate_key(private)


def test_signature_follows_the_wacz_signing_fields(signed: Path, keys: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(signed) as archive:
        digest = json.loads(archive.read("datapackage-digest.json"))
        package = json.loads(archive.read("datapackage.json"))
    data = digest["signedData"]
    assert data["hash"] == digest["hash"] and digest["path"] == "datapackage.json"
    assert data["created"] == package["created"]
    assert set(data) == {"hash", "signature", "publicKey", "created", "software"}
    trusted = _trusted(keys)
    trusted.verify(base64.b64decode(data["signature"]), data["hash"].encode())
    report = verify_snapshot(signed, trusted)
    assert report.ok, report.problems
    assert report.signature is not None and report.signature.algorithm == "Ed25519"


def test_another_key_and_no_signature_fail_with_pubkey(
    signed: Path, tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    _, other_public = generate_key(tmp_path / "other.key")
    report = verify_snapshot(signed, load_public_key(other_public))
    assert not report.ok and "datapackage-digest.json: signed by key" in report.problems[0]
    unsigned = import_warc([DATA / "pywacz-1.0.wacz"], tmp_path / "unsigned.wacz")
    report = verify_snapshot(unsigned, _trusted(keys))
    assert report.problems == (f"{unsigned}: datapackage-digest.json: not signed (no signedData)",)


@pytest.mark.parametrize(
    "member", ["archive/data.warc.gz", INDEX_MEMBER, MANIFEST_MEMBER, "pages/pages.jsonl"]
)
def test_member_altered_after_signing_is_named(signed: Path, member: str, keys: tuple[Path, Path]) -> None:
    """One byte changed inside a member (the zip itself stays valid): its datapackage hash fails."""
    with zipfile.ZipFile(signed) as archive:
        altered = bytearray(archive.read(member))
    altered[len(altered) // 2] ^= 0x01
    replace_members(signed, signed, {member: bytes(altered)})
    report = verify_snapshot(signed, _trusted(keys))
    assert not report.ok
    assert f"member {member}: sha256 mismatch" in report.problems[0]


def test_rehashed_member_breaks_the_digest(signed: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    """Re-hashing the member into datapackage.json moves the problem to the datapackage itself."""
    with zipfile.ZipFile(signed) as archive:
        digest = archive.read("datapackage-digest.json")
        manifest = archive.read(MANIFEST_MEMBER)
    edited = edit_member(
        signed, tmp_path / "edited.wacz", MANIFEST_MEMBER, manifest.replace(b"pywacz", b"forged")
    )
    replace_members(edited, edited, {"datapackage-digest.json": digest})
    report = verify_snapshot(edited, _trusted(keys))
    assert report.problems == (
        f"{edited}: member datapackage.json: does not match the hash in datapackage-digest.json",
    )


def test_new_digest_without_the_key_fails_the_signature(
    signed: Path, keys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Re-hashing everything (datapackage and digest hash) leaves a signature over the old hash."""
    with zipfile.ZipFile(signed) as archive:
        old = json.loads(archive.read("datapackage-digest.json"))
    edited = edit_member(signed, tmp_path / "edited.wacz", "pages/pages.jsonl", b"")
    with zipfile.ZipFile(edited) as archive:
        package = archive.read("datapackage.json")
    forged = json.loads(digest_json(package)) | {"signedData": old["signedData"]}
    replace_members(edited, edited, {"datapackage-digest.json": json.dumps(forged).encode()})
    report = verify_snapshot(edited, _trusted(keys))
    assert report.problems == (
        f"{edited}: datapackage-digest.json: signedData.hash is not the hash of datapackage.json",
    )
    forged["signedData"] = old["signedData"] | {"hash": forged["hash"]}
    replace_members(edited, edited, {"datapackage-digest.json": json.dumps(forged).encode()})
    report = verify_snapshot(edited, _trusted(keys))
    assert report.problems == (f"{edited}: datapackage-digest.json: signature does not verify",)


def test_member_added_after_signing_is_named(signed: Path, keys: tuple[Path, Path]) -> None:
    replace_members(signed, signed, {"archive/extra.warc": b"WARC/1.1\r\n"})
    report = verify_snapshot(signed, _trusted(keys))
    assert report.problems[0] == f"{signed}: member archive/extra.warc is not listed in datapackage.json"


def test_cli_keygen_sign_verify(tmp_path: Path) -> None:
    snapshot = import_warc([DATA / "browsertrix-signed.wacz"], tmp_path / "s.wacz")
    key = tmp_path / "k" / "signer.key"
    assert run_cli("snapshot", "keygen", "--out", str(key)).returncode == 0
    signed = tmp_path / "signed.wacz"
    made = run_cli("snapshot", "sign", str(snapshot), "--key", str(key), "--out", str(signed))
    assert made.returncode == 0, made.stderr
    checked = run_cli("snapshot", "verify", str(signed), "--pubkey", f"{key}.pub")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "signed (Ed25519)" in checked.stdout and "the key given" in checked.stdout
    unsigned = run_cli("snapshot", "verify", str(snapshot), "--pubkey", f"{key}.pub")
    assert unsigned.returncode == 2 and "not signed" in unsigned.stdout
    wrong = run_cli("snapshot", "sign", str(snapshot), "--key", f"{key}.pub")
    assert wrong.returncode == 2 and "expected an unencrypted PEM private key" in wrong.stderr
    assert "Traceback" not in wrong.stderr
