"""The snapshot format shared by recorder and replayer: WACZ 1.1.1 with a CDXJ index and a manifest."""

from susbench.snapshot.cdxj import IndexEntry, lookup_key, method_query, surt
from susbench.snapshot.importer import import_warc
from susbench.snapshot.reader import RecordedResponse, Snapshot
from susbench.snapshot.records import Damage
from susbench.snapshot.signing import SignatureCheck, generate_key, sign_snapshot
from susbench.snapshot.verify import VerifyReport, verify_snapshot
from susbench.snapshot.wacz import index_warc, write_wacz

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
