"""Snapshot signatures: Ed25519 over the datapackage digest, in WACZ signing's `signedData` fields.

The WACZ signing spec's anonymous form signs the `hash` string of `datapackage-digest.json` and
carries the signer's public key (`publicKey`, base64 SubjectPublicKeyInfo DER) beside it. We follow
it with an Ed25519 key instead of ECDSA P-384. Since `datapackage.json` holds the hash of every
member, the one signature covers the whole snapshot. Signatures made by ArchiveWeb.page (ECDSA
P-384, anonymous) and by authsign (domain certificate) are checked too, against their own keys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from susbench import __version__
from susbench.core.errors import SnapshotError, SusbenchError
from susbench.core.models import Frozen
from susbench.snapshot.limits import shown
from susbench.snapshot.package import (
    DATAPACKAGE,
    DATAPACKAGE_DIGEST,
    PackageDigest,
    SignedData,
    check_digest,
    load_digest,
    load_package,
    open_zip,
    read_member,
    verify_members,
)
from susbench.snapshot.wacz import digest_json, replace_members

SOFTWARE = f"susbench-replay {__version__}"
PUBLIC_SUFFIX = ".pub"


class SignatureCheck(Frozen):
    """What a snapshot's signature says: who signed (key fingerprint or domain) and whether it holds."""

    signer: str
    algorithm: str
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def _spki(key: Ed25519PublicKey | ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def fingerprint(key: Ed25519PublicKey | ec.EllipticCurvePublicKey) -> str:
    """sha256 of the key's SubjectPublicKeyInfo, as hex: what `keygen`, `sign` and `verify` print."""
    return hashlib.sha256(_spki(key)).hexdigest()


def generate_key(out: Path) -> tuple[Path, Path]:
    """A new Ed25519 key: private PEM at `out` (mode 0600, never overwritten) and public PEM at `out.pub`."""
    public_path = out.with_name(out.name + PUBLIC_SUFFIX)
    for existing in (out, public_path):
        if existing.exists():
            raise SusbenchError(f"{existing}: already exists; not overwriting a key")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(private_pem)
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return out, public_path


def _read_key_file(path: Path, kind: str) -> bytes:
    if not path.is_file():
        raise SusbenchError(f"{path}: no such {kind} key file")
    data = path.read_bytes()
    if len(data) > 64 << 10:
        raise SusbenchError(f"{path}: not a PEM {kind} key (file of {len(data)} bytes)")
    return data


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(_read_key_file(path, "private"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise SusbenchError(f"{path}: expected an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SusbenchError(f"{path}: expected an Ed25519 private key (`susbench snapshot keygen` makes one)")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(_read_key_file(path, "public"))
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SusbenchError(f"{path}: expected a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SusbenchError(f"{path}: expected an Ed25519 public key")
    return key


def sign_snapshot(path: Path, key_path: Path, out: Path | None = None) -> SignatureCheck:
    """Sign `path` (written to `out`, default in place) after checking every member's hash.

    Only `datapackage-digest.json` changes; `signedData.created` is the datapackage's `created`, as
    Webrecorder's validator expects.
    """
    key = load_private_key(key_path)
    with open_zip(path) as archive:
        package = load_package(archive, path)
        check_digest(archive, path, load_digest(archive, path))
        verify_members(archive, path, package)
        package_bytes = read_member(archive, path, DATAPACKAGE)
    digest_hash = f"sha256:{hashlib.sha256(package_bytes).hexdigest()}"
    signed = SignedData(
        hash=digest_hash,
        signature=base64.b64encode(key.sign(digest_hash.encode())).decode(),
        publicKey=base64.b64encode(_spki(key.public_key())).decode(),
        created=package.created or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        software=SOFTWARE,
    )
    replace_members(path, out or path, {DATAPACKAGE_DIGEST: digest_json(package_bytes, signed)})
    return SignatureCheck(signer=fingerprint(key.public_key()), algorithm="Ed25519")


def _b64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SnapshotError(f"{where}: not base64") from None


def check_signature(digest: PackageDigest, where: str, trusted: Ed25519PublicKey | None) -> SignatureCheck:
    """Check `signedData` of a digest whose `hash` already matches datapackage.json.

    With `trusted`, the signature must be by that key; without, it is checked against the key or
    certificate it carries (which proves integrity, not who signed).
    """
    signed = digest.signedData
    if signed is None:
        return SignatureCheck(signer="", algorithm="", problem=f"{where}: not signed (no signedData)")
    if signed.hash != digest.hash:
        return SignatureCheck(
            signer="", algorithm="", problem=f"{where}: signedData.hash is not the hash of {DATAPACKAGE}"
        )
    signature = _b64(signed.signature, f"{where}: signedData.signature")
    message = signed.hash.encode()
    if signed.publicKey is not None:
        return _check_anonymous(signed.publicKey, signature, message, where, trusted)
    if signed.domainCert is not None and trusted is None:
        return _check_domain(signed, signature, message, where)
    problem = f"{where}: signedData has neither publicKey nor domainCert"
    if trusted is not None:
        problem = f"{where}: signed by a domain certificate, not by the given Ed25519 key"
    return SignatureCheck(signer=signed.domain or "", algorithm="", problem=problem)


def _check_anonymous(
    encoded_key: str, signature: bytes, message: bytes, where: str, trusted: Ed25519PublicKey | None
) -> SignatureCheck:
    try:
        carried = serialization.load_der_public_key(_b64(encoded_key, f"{where}: signedData.publicKey"))
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SnapshotError(f"{where}: signedData.publicKey: not a public key ({exc})") from None
    if isinstance(carried, Ed25519PublicKey):
        check = SignatureCheck(signer=fingerprint(carried), algorithm="Ed25519")
        if trusted is not None and _spki(trusted) != _spki(carried):
            expected = fingerprint(trusted)[:16]
            problem = f"{where}: signed by key {check.signer[:16]}..., not by {expected}..."
            return check.model_copy(update={"problem": problem})
        try:
            carried.verify(signature, message)
        except InvalidSignature:
            return check.model_copy(update={"problem": f"{where}: signature does not verify"})
        return check
    if isinstance(carried, ec.EllipticCurvePublicKey):
        check = SignatureCheck(signer=fingerprint(carried), algorithm=f"ECDSA {carried.curve.name}")
        if trusted is not None:
            return check.model_copy(
                update={"problem": f"{where}: signed by an ECDSA key, not by the given Ed25519 key"}
            )
        return _verify_ecdsa(check, carried, _p1363_to_der(signature), message, where)
    raise SnapshotError(f"{where}: signedData.publicKey: expected an Ed25519 or ECDSA key")


def _p1363_to_der(signature: bytes) -> bytes:
    """WebCrypto's ECDSA signature (r || s) as the DER sequence `cryptography` verifies."""
    half = len(signature) // 2
    return utils.encode_dss_signature(int.from_bytes(signature[:half]), int.from_bytes(signature[half:]))


def _verify_ecdsa(
    check: SignatureCheck, key: ec.EllipticCurvePublicKey, signature: bytes, message: bytes, where: str
) -> SignatureCheck:
    try:
        key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return check.model_copy(update={"problem": f"{where}: signature does not verify"})
    return check


def _check_domain(signed: SignedData, signature: bytes, message: bytes, where: str) -> SignatureCheck:
    """authsign's form: signed by the first certificate of `domainCert` (its chain is not checked)."""
    try:
        certificate = x509.load_pem_x509_certificate((signed.domainCert or "").encode())
    except ValueError as exc:
        raise SnapshotError(f"{where}: signedData.domainCert: not a PEM certificate ({exc})") from None
    key = certificate.public_key()
    domain = signed.domain or ""
    names = [
        attribute.value for attribute in certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    ]
    if domain not in names:
        return SignatureCheck(
            signer=domain, algorithm="", problem=f"{where}: domainCert is not for {shown(domain)}"
        )
    if not isinstance(key, ec.EllipticCurvePublicKey):
        return SignatureCheck(signer=domain, algorithm="", problem=f"{where}: domainCert key is not ECDSA")
    check = SignatureCheck(
        signer=domain, algorithm=f"ECDSA {key.curve.name}, domain certificate, chain not checked"
    )
    return _verify_ecdsa(check, key, signature, message, where)
