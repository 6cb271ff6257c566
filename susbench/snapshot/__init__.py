"""The snapshot format shared by recorder and replayer: WACZ 1.1.1 with a CDXJ index and a manifest.

Each name is imported from its module on first use: reading the format (warcio, cryptography) is
not needed to declare a command's options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.snapshot.cdxj import IndexEntry, lookup_key, method_query, surt
    from susbench.snapshot.importer import import_warc
    from susbench.snapshot.reader import RecordedResponse, Snapshot
    from susbench.snapshot.records import Damage
    from susbench.snapshot.signing import SignatureCheck, generate_key, sign_snapshot
    from susbench.snapshot.verify import VerifyReport, verify_snapshot
    from susbench.snapshot.wacz import index_warc, write_wacz

__getattr__ = lazy_names(
    __name__,
    {
        "cdxj": ("IndexEntry", "lookup_key", "method_query", "surt"),
        "importer": ("import_warc",),
        "reader": ("RecordedResponse", "Snapshot"),
        "records": ("Damage",),
        "signing": ("SignatureCheck", "generate_key", "sign_snapshot"),
        "verify": ("VerifyReport", "verify_snapshot"),
        "wacz": ("index_warc", "write_wacz"),
    },
)

__all__ = [
    "Damage",
    "IndexEntry",
    "RecordedResponse",
    "SignatureCheck",
    "Snapshot",
    "VerifyReport",
    "generate_key",
    "import_warc",
    "index_warc",
    "lookup_key",
    "method_query",
    "sign_snapshot",
    "surt",
    "verify_snapshot",
    "write_wacz",
]
