"""The files a worker needs (the snapshot, the built extension, a live upstream's CA certificate),
shipped by content hash instead of by path, because a node of a cluster does not see the driver's disk.

The driver reads each once per run and puts it into Ray's object store in chunks (so a large
snapshot never sits whole in its memory); a node copies it once into its cache, under a file named
by its sha256, and every worker on that node checks the digest of that copy before using it. The
transport is two plain callables, so this module never imports Ray.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from susbench.controller.environment import WorkerSetup
from susbench.core.digests import tree_sha256
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen

CHUNK_BYTES = 32 * 1024 * 1024

Ref = TypeVar("Ref")
ShippedField = Literal["snapshot", "extension_dir", "live_ca_cert"]
DIGEST_FIELDS: dict[ShippedField, str | None] = {
    "snapshot": "snapshot_sha256",
    "extension_dir": "extension_sha256",
    "live_ca_cert": None,
}


class Artifact(Frozen):
    """One file or folder of the setup, named by the sha256 of its content."""

    field: ShippedField
    kind: Literal["file", "tree"]
    sha256: str
    suffix: str = ""
    chunks: int


class Shipment(Frozen):
    """What every worker of a run receives: the driver's setup and the artifacts standing in for its paths."""

    setup: WorkerSetup
    artifacts: tuple[Artifact, ...]
    susbench_version: str


class ArtifactError(SusbenchError):
    """A shipped artifact does not match its digest."""


def pack(
    setup: WorkerSetup, version: str, put: Callable[[bytes], Ref]
) -> tuple[Shipment, dict[str, list[Ref]]]:
    """Put every path of `setup` into the object store (`put`); the chunks' references by field."""
    artifacts: list[Artifact] = []
    refs: dict[str, list[Ref]] = {}
    for field in DIGEST_FIELDS:
        path: Path | None = getattr(setup, field)
        if path is None:
            continue
        if path.is_dir():
            kind: Literal["file", "tree"] = "tree"
            digest, chunks = tree_sha256(path), [put(_tar(path))]
        else:
            kind = "file"
            digest, chunks = _put_file(path, put)
        expected = _expected_digest(setup, field)
        if expected is not None and expected != digest:
            raise ArtifactError(
                f"{path}: changed since the run started (sha256 {digest}); expected {expected}, as in the "
                "run's identity"
            )
        suffix = path.suffix if kind == "file" else ""
        artifacts.append(Artifact(field=field, kind=kind, sha256=digest, suffix=suffix, chunks=len(chunks)))
        refs[field] = chunks
    return Shipment(setup=setup, artifacts=tuple(artifacts), susbench_version=version), refs


def localize(
    shipment: Shipment, refs: Mapping[str, Sequence[Ref]], fetch: Callable[[Ref], bytes], cache: Path
) -> tuple[WorkerSetup, list[str]]:
    """The setup with every artifact's path replaced by this node's verified copy; also the fields
    whose artifact this call had to fetch (a node fetches each artifact once, under a lock)."""
    cache.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    fetched: list[str] = []
    for artifact in shipment.artifacts:
        target = cache / f"{artifact.sha256}{artifact.suffix}"
        with _locked(cache / f"{artifact.sha256}.lock"):
            if not _holds(target, artifact):
                _fetch(artifact, refs[artifact.field], fetch, target)
                fetched.append(artifact.field)
        paths[artifact.field] = target
    return shipment.setup.model_copy(update=paths), fetched


def _expected_digest(setup: WorkerSetup, field: ShippedField) -> str | None:
    name = DIGEST_FIELDS[field]
    return None if name is None else getattr(setup, name)


def _put_file(path: Path, put: Callable[[bytes], Ref]) -> tuple[str, list[Ref]]:
    digest = hashlib.sha256()
    chunks = []
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                chunks.append(put(chunk))
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot be read to ship it to the workers: {exc.strerror}") from None
    return digest.hexdigest(), chunks


def _tar(folder: Path) -> bytes:
    """The folder as an uncompressed tar with fixed owners and times (the same bytes every time)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(item for item in folder.rglob("*") if item.is_file()):
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            data = path.read_bytes()
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _digest(path: Path, kind: Literal["file", "tree"]) -> str:
    if kind == "tree":
        return tree_sha256(path)
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _holds(target: Path, artifact: Artifact) -> bool:
    """Whether the node's copy exists and still has the artifact's digest (a damaged one is dropped)."""
    if not target.exists():
        return False
    if _digest(target, artifact.kind) == artifact.sha256:
        return True
    _remove(target)
    return False


def _fetch(artifact: Artifact, refs: Sequence[Ref], fetch: Callable[[Ref], bytes], target: Path) -> None:
    """Write the chunks beside `target`, check the digest, then move the copy into place."""
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target.parent))
    try:
        if artifact.kind == "tree":
            with tarfile.open(fileobj=io.BytesIO(fetch(refs[0])), mode="r") as archive:
                archive.extractall(staging / "tree", filter="data")
            copy = staging / "tree"
        else:
            copy = staging / "file"
            with open(copy, "wb") as handle:
                for ref in refs:
                    handle.write(fetch(ref))
        got = _digest(copy, artifact.kind)
        if got != artifact.sha256:
            raise ArtifactError(
                f"{artifact.field}: the copy shipped to this node has sha256 {got}; "
                f"expected {artifact.sha256}"
            )
        os.replace(copy, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


@contextmanager
def _locked(lock_file: Path) -> Iterator[None]:
    """One process per node fetches an artifact; the others wait for its copy."""
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
