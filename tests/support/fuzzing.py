"""Hypothesis profiles, near-valid input generators and the outcome check shared by tests/*/test_fuzz_*.py.

Profiles (choose with HYPOTHESIS_PROFILE): `ci` (the default: the same 200 cases per reader at every
run, under a minute for all of them on 2 cores, so a CI run never fails on a case no run before it
drew) and `release` (thousands of fresh random cases per reader, for a release: what it finds
becomes a test of its own).

Every generated case must end in success or in one SusbenchError whose message names the file and
where in it (line, offset, field or member); any other exception, a pydantic URL, a message that
echoes a huge field, a slow case or a jump in peak memory fails the test.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, currently_in_test_context, event, settings
from hypothesis import strategies as st

from susbench.core.errors import SusbenchError

QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
    HealthCheck.function_scoped_fixture,  # memory_bound is meant to span all cases of a test
]
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=QUIET, derandomize=True
)
settings.register_profile("release", max_examples=2000, deadline=None, suppress_health_check=QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MAX_CASE_SECONDS = 20.0
"""One case (open, read every record, verify, import) of a small file; far beyond any honest run."""
MAX_PEAK_GROWTH_MB = 300
"""How much a whole fuzz test may raise the process's peak memory."""
MAX_MESSAGE_CHARS = 4000
LEAKS = ("errors.pydantic.dev", "pydantic_core", "For further information", "Traceback")
LOCATOR = re.compile(
    r"line \d+|offset \d+|field '|member |block at|record \d+|datapackage|pages/|indexes/|archive/"
    r"|snapshot\.json|no such|not a WACZ|not UTF-8|bytes|nested|values|alias|expected|invalid|neither .* nor"
)

OUTCOMES: Counter[tuple[str, str]] = Counter()
"""(reader, outcome) -> cases, printed at the end of the session."""

SPECIAL_BYTES = (
    b"\x00",
    b"\xff\xfe",
    b"\r\n\r\n",
    b"\n",
    b"\x1f\x8b\x08",
    b"WARC/1.1\r\n",
    b"PK\x03\x04",
    b"-1",
    b"99999999999999999999",
    "²".encode(),
    "é".encode("latin-1"),
    b"\xc3\x28",
    b" {",
    b"A" * 70_000,
)
HEADER_LINE = re.compile(rb"(?m)^([A-Za-z][A-Za-z0-9-]*): ?([^\r\n]*)")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_message(message: str, source: str) -> None:
    """One clean message: names the file, says where, leaks nothing, stays short."""
    assert message.strip(), "empty error message"
    assert source in message, f"message does not name {source}: {message[:300]}"
    for leak in LEAKS:
        assert leak not in message, message[:600]
    assert len(message) <= MAX_MESSAGE_CHARS, f"message of {len(message)} chars: {message[:300]}..."
    assert LOCATOR.search(message.replace(source, "")), f"message says not where: {message[:300]}"


def run_case(reader: str, source: str, call: Callable[[], object]) -> None:
    """Run one case; record its outcome. Anything but success or a clean SusbenchError propagates."""
    started = time.monotonic()
    try:
        call()
        outcome = "ok"
    except SusbenchError as exc:
        check_message(str(exc), source)
        outcome = "clean error"
    elapsed = time.monotonic() - started
    assert elapsed < MAX_CASE_SECONDS, f"{reader}: one case took {elapsed:.1f} s"
    OUTCOMES[(reader, outcome)] += 1
    if currently_in_test_context():
        event(outcome)


@pytest.fixture
def memory_bound() -> Any:
    """Fails the test if it raised the process's peak RSS by more than MAX_PEAK_GROWTH_MB."""
    before = peak_rss_mb()
    yield
    grown = peak_rss_mb() - before
    assert grown < MAX_PEAK_GROWTH_MB, f"peak memory grew by {grown:.0f} MB"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not OUTCOMES:
        return
    terminalreporter.section("fuzz cases per reader")
    for reader in sorted({reader for reader, _ in OUTCOMES}):
        ok, clean = OUTCOMES[(reader, "ok")], OUTCOMES[(reader, "clean error")]
        terminalreporter.write_line(f"{reader}: {ok + clean} cases ({ok} read, {clean} clean errors)")


# --- generators -------------------------------------------------------------------------------


@st.composite
def mutated_bytes(draw: st.DrawFn, seed: bytes, max_ops: int = 4) -> bytes:
    """`seed` after a few byte-level edits: truncation, bit flips, overwrites, inserts, deletes, specials."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, max_ops))):
        where = draw(st.integers(0, len(data)))
        operation = draw(
            st.sampled_from(["truncate", "flip", "overwrite", "insert", "delete", "special", "copy"])
        )
        if operation == "truncate":
            del data[where:]
        elif operation == "flip" and where < len(data):
            data[where] ^= 1 << draw(st.integers(0, 7))
        elif operation == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=16))
            data[where : where + len(chunk)] = chunk
        elif operation == "insert":
            data[where:where] = draw(st.binary(min_size=1, max_size=16))
        elif operation == "delete":
            del data[where : where + draw(st.integers(1, 64))]
        elif operation == "special":
            data[where:where] = draw(st.sampled_from(SPECIAL_BYTES))
        elif operation == "copy" and data:
            start = draw(st.integers(0, len(data) - 1))
            data[where:where] = data[start : start + draw(st.integers(1, 256))]
    return bytes(data)


def weird_values() -> st.SearchStrategy[Any]:
    """Values of the wrong type or size for any field: what a broken or hostile writer puts there."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.just(10**40),
        st.just(-1),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=12),
        st.just("x" * 200_000),
        st.just("\u202e\x00\ufffd"),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
        st.just(nested(300)),
    )


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def mutated_document(draw: st.DrawFn, document: Any, max_ops: int = 3) -> Any:
    """A JSON/YAML document with a few fields replaced by weird values, removed, or added."""
    document = json.loads(json.dumps(document, default=str))
    for _ in range(draw(st.integers(1, max_ops))):
        parent, key = _pick(draw, document)
        operation = draw(st.sampled_from(["replace", "remove", "add"]))
        if parent is None:
            document = draw(weird_values())
            continue
        if operation == "replace" or (operation == "remove" and isinstance(parent, list)):
            parent[key] = draw(weird_values())
        elif operation == "remove":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(weird_values())
    return document


def _pick(draw: st.DrawFn, document: Any) -> tuple[Any, Any]:
    """A random (container, key) inside `document`; (None, None) for the document itself."""
    parent: Any = None
    key: Any = None
    node = document
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)) > 0:
        parent = node
        key = draw(st.sampled_from(sorted(node, key=str) if isinstance(node, dict) else range(len(node))))
        node = node[key]
    return parent, key


@st.composite
def encoded_text(draw: st.DrawFn, text: str) -> bytes:
    """`text` in UTF-8 mostly, else in an encoding the reader does not expect."""
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "latin-1", "cp1252"]))
    return text.encode(encoding, "replace")


@st.composite
def near_valid_json(draw: st.DrawFn, document: Any) -> bytes:
    """A JSON document with structure-aware damage, then maybe a wrong encoding and byte damage."""
    text = json.dumps(draw(mutated_document(document)), ensure_ascii=draw(st.booleans()))
    data = draw(encoded_text(text))
    return draw(mutated_bytes(data, 2)) if draw(st.booleans()) else data


YAML_SPECIALS = (
    b"a: &a [1, 2]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    b"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
    b"&loop [*loop]\n",
    b"[" * 5000 + b"]" * 5000,
    b"id: !!python/object/apply:os.system ['true']\n",
    b"id: a\nid: b\n",
    b"\t- tab indented\n",
    b"big: 1" + b"9" * 6000 + b"\n",
    b"when: 2001-02-30\n",
)


@st.composite
def near_valid_yaml(draw: st.DrawFn, seed_text: str) -> bytes:
    """A YAML file: fields damaged structurally, or its text damaged, or a known-hostile document."""
    kind = draw(st.sampled_from(["structure", "structure", "text", "special"]))
    if kind == "special":
        return draw(st.sampled_from(YAML_SPECIALS))
    if kind == "text":
        return draw(mutated_bytes(draw(encoded_text(seed_text)), 3))
    document = draw(mutated_document(yaml.safe_load(seed_text)))
    return draw(encoded_text(yaml.safe_dump(document, allow_unicode=True)))


@st.composite
def near_valid_warc(draw: st.DrawFn, seed: bytes) -> bytes:
    """A WARC with damaged header values and bytes, stored plain, gzip per record, or gzip whole."""
    data = seed
    for _ in range(draw(st.integers(0, 3))):
        lines = list(HEADER_LINE.finditer(data))
        if not lines:
            break
        match = draw(st.sampled_from(lines))
        value = draw(
            st.sampled_from([b"", b"-5", b"0", b"1" * 25, "²".encode(), b"x" * 5000, b"\xff\xfe", b"abc"])
        )
        data = data[: match.start(2)] + value + data[match.end(2) :]
    if draw(st.booleans()):
        data = draw(mutated_bytes(data))
    packaging = draw(st.sampled_from(["plain", "per-record gzip", "gzip"]))
    if packaging == "gzip":
        data = gzip.compress(data, mtime=0)
    elif packaging == "per-record gzip":
        records = re.split(rb"(?=WARC/1\.[01]\r\n)", data)
        data = b"".join(gzip.compress(record, mtime=0) for record in records if record)
    return draw(mutated_bytes(data, 2)) if packaging != "plain" and draw(st.booleans()) else data


def write_case(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
