"""Episode records signed by the worker that made them and checked by the driver before it stores them.

A record travels from the node that ran the episode through the cluster's network and object store
to the driver, the only writer of DuckDB. An HMAC-SHA256 under a key made fresh for every run lets
the driver store only what a worker of this run wrote, for the episode it was asked to run.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from pydantic import ValidationError

from susbench.core.digests import canonical_json
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.records.episode import EpisodeRecord


class SignedRecord(Frozen):
    """An episode record as canonical JSON, and its HMAC-SHA256 (hex)."""

    payload: str
    signature: str


class UnverifiedRecord(SusbenchError):
    """A record whose signature, or whose episode, is not the one the driver expects."""


def new_run_key() -> bytes:
    return secrets.token_bytes(32)


def sign_record(record: EpisodeRecord, key: bytes) -> SignedRecord:
    payload = canonical_json(record.model_dump(mode="json"))
    return SignedRecord(payload=payload, signature=_mac(payload, key))


def open_record(signed: SignedRecord, key: bytes, episode_id: str) -> EpisodeRecord:
    """The record, once its signature and its episode check out."""
    if not hmac.compare_digest(_mac(signed.payload, key), signed.signature):
        raise UnverifiedRecord(f"episode {episode_id}: the worker's record failed its signature check")
    try:
        record = EpisodeRecord.model_validate_json(signed.payload)
    except ValidationError as exc:
        raise UnverifiedRecord(
            f"episode {episode_id}: the worker's record is malformed ({exc.error_count()} errors)"
        ) from None
    if record.episode.id != episode_id:
        raise UnverifiedRecord(f"episode {episode_id}: the worker returned the record of {record.episode.id}")
    return record


def _mac(payload: str, key: bytes) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
