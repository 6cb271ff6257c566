"""Caps on what the snapshot readers accept, so a hostile or broken file ends in one clear error.

Each cap is far above anything a real capture needs (a snapshot of the whole local web holds
records under 1 MB and an index under 1 MB) and low enough that a decompression bomb or a lying
length field cannot exhaust memory. Documented in docs/snapshots.md and docs/reference/snapshot.md.
"""

from __future__ import annotations

MAX_RECORD_BYTES = 256 << 20
"""One WARC record, decompressed (WARC headers + block)."""

MAX_HEADER_BYTES = 1 << 20
"""The WARC or HTTP header block of one record."""

MAX_INDEX_BYTES = 256 << 20
"""All index members of one WACZ together, decompressed (CDX, CDXJ, ZipNum blocks)."""

MAX_INDEX_LINE_BYTES = 1 << 20
"""One CDX/CDXJ/IDX line."""

MAX_NAME_CHARS = 1024
"""A zip member name, an index's WARC file name or digest (all are echoed in error messages)."""

MAX_METADATA_BYTES = 64 << 20
"""Each of datapackage.json, datapackage-digest.json, the manifest and pages/*.jsonl."""


SHOWN_CHARS = 60
"""How much of a bad value an error message quotes."""


def shown(value: object) -> str:
    """`value` quoted for an error message, cut so a huge field never floods the terminal."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"
