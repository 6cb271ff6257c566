"""Unit tests of the replayer's index: layers, rules, scores, tie-breaks and serving order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from susbench.core.errors import SusbenchError
from susbench.replayer.matching import ReplayIndex, RuleSet, body_digest, exact_url, overlap_score
from susbench.snapshot import IndexEntry, Snapshot
from tests.support.replay import IndexedEntry, SyntheticExchange, index_of, write_snapshot


def test_exact_normalises_only_what_never_matters() -> None:
    assert exact_url("HTTPS://Shop.TEST:443/a?b=1&a=2#frag") == "https://shop.test/a?b=1&a=2"
    index = index_of(IndexedEntry("https://shop.test/a?b=1&a=2", 0))
    match = index.lookup("GET", "https://shop.test:443/a?b=1&a=2")
    assert match is not None and match.kind == "exact" and match.rule is None


@pytest.mark.parametrize(
    ("recorded", "requested", "rule"),
    [
        (
            "https://s.test/api?x=1&_=1700000000000",
            "https://s.test/api?_=1800000000000&x=1",
            "underscore-cache-buster",
        ),
        ("https://s.test/app.js?cb=123", "https://s.test/app.js?cb=999", "cb-cache-buster"),
        ("https://s.test/app.js?cachebust=ab", "https://s.test/app.js?cachebust=cd", "bust-cache-buster"),
        ("https://s.test/p?ts=1700000000000", "https://s.test/p?ts=1700000009999", "timestamp-param"),
        (
            "https://s.test/j?callback=jQuery1234_1&q=a",
            "https://s.test/j?q=a&callback=jQuery99_2",
            "jsonp-callback",
        ),
        ("https://s.test/?utm_source=a", "https://s.test/?utm_source=b&utm_medium=c", "utm-tracking"),
        ("https://s.test/p;jsessionid=AB?x=1", "https://s.test/p;jsessionid=CD?x=1", "session-id"),
        ("https://s.test/p?PHPSESSID=1&x=1", "https://s.test/p?x=1&PHPSESSID=2", "session-id"),
    ],
)
def test_canonical_rules_strip_volatile_parameters(recorded: str, requested: str, rule: str) -> None:
    match = index_of(IndexedEntry(recorded, 0)).lookup("GET", requested)
    assert match is not None
    assert match.kind == "canonical"
    assert rule in (match.rule or "")


def test_fuzzy_prefers_best_overlap_then_lexicographic_url_then_capture_order() -> None:
    index = index_of(
        IndexedEntry("https://s.test/search?q=shoes&page=2", 0),
        IndexedEntry("https://s.test/search?q=shoes&page=1&sort=price", 1),
        IndexedEntry("https://s.test/search?q=hats", 2),
    )
    match = index.lookup("GET", "https://s.test/search?q=shoes&page=1")
    assert match is not None and match.kind == "fuzzy"
    assert match.entry.seq == 1 and match.score == pytest.approx(0.8)
    tie = index_of(IndexedEntry("https://s.test/p?b=1", 0), IndexedEntry("https://s.test/p?a=1", 1))
    chosen = tie.lookup("GET", "https://s.test/p?c=1")
    assert chosen is not None and chosen.entry.url == "https://s.test/p?a=1" and chosen.score == 0.0
    assert index.lookup("GET", "https://s.test/other") is None
    assert index.lookup("GET", "https://other.test/search?q=shoes") is None


def test_overlap_score_is_two_m_over_t() -> None:
    assert overlap_score("a=1&b=2", "a=1&b=3") == pytest.approx(0.5)
    assert overlap_score("", "") == 1.0
    assert overlap_score("a=1", "") == 0.0


def test_repeated_requests_follow_recording_order_and_reset_per_episode() -> None:
    index = index_of(
        IndexedEntry("https://s.test/counter", 0),
        IndexedEntry("https://s.test/counter", 5),
        IndexedEntry("https://s.test/counter", 9),
    )
    served = [index.lookup("GET", "https://s.test/counter").entry.seq for _ in range(5)]  # type: ignore[union-attr]
    assert served == [0, 5, 9, 9, 9]
    index.new_episode()
    assert index.lookup("GET", "https://s.test/counter").entry.seq == 0  # type: ignore[union-attr]


def test_post_bodies_are_keyed_by_whole_body_digest() -> None:
    big_a = json.dumps({"query": "x" * 5000, "variables": {"id": 1}}).encode()
    big_b = json.dumps({"query": "x" * 5000, "variables": {"id": 2}}).encode()
    bodies = {0: big_a, 1: big_b}
    index = index_of(
        IndexedEntry("https://s.test/graphql", 0, "POST", body_digest(big_a)),
        IndexedEntry("https://s.test/graphql", 1, "POST", body_digest(big_b)),
        loader=lambda entry: bodies[entry.seq],
    )
    assert index.lookup("POST", "https://s.test/graphql", big_b).entry.seq == 1  # type: ignore[union-attr]
    assert index.lookup("POST", "https://s.test/graphql", big_a).entry.seq == 0  # type: ignore[union-attr]
    assert index.lookup("GET", "https://s.test/graphql") is None


def test_post_bodies_canonicalise_volatile_fields() -> None:
    recorded = b"sku=tea&qty=1&_=1700000000000"
    index = index_of(
        IndexedEntry("https://s.test/cart/add", 0, "POST", body_digest(recorded)),
        loader=lambda entry: recorded,
    )
    match = index.lookup("POST", "https://s.test/cart/add", b"qty=1&sku=tea&_=1800000000000")
    assert match is not None and match.kind == "canonical" and "underscore-cache-buster" in (match.rule or "")
    json_index = index_of(
        IndexedEntry("https://s.test/api", 0, "POST", "d"),
        loader=lambda entry: b'{"b": 1, "utm_source": "x", "a": [1, 2]}',
    )
    hit = json_index.lookup("POST", "https://s.test/api", b'{"a":[1,2],"b":1}')
    assert hit is not None and hit.kind == "canonical"


def test_rules_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("rules:\n  - name: x\n    parm: y\n")
    with pytest.raises(SusbenchError, match=re.escape(str(bad))):
        RuleSet.load(bad)
    with pytest.raises(SusbenchError, match="cannot read"):
        RuleSet.load(tmp_path / "missing.yaml")


def test_scheme_upgrade_falls_back_to_the_recorded_scheme() -> None:
    index = index_of(IndexedEntry("http://books.test/", 0))
    match = index.lookup("GET", "https://books.test/")
    assert match is not None and match.kind == "canonical" and match.rule == "scheme"


def test_recorded_post_bodies_are_read_back_and_matched_canonically(tmp_path: Path) -> None:
    """The snapshot reads the request record concurrent to the response, so a POST whose body
    differs only by a cache-buster field matches canonically, not merely by path (fuzzy)."""
    recorded = b"sku=tea&qty=1&_=1700000000000"
    path = write_snapshot(
        tmp_path / "post.wacz",
        [
            SyntheticExchange(
                "https://s.test/cart/add", b"<h1>1 tea</h1>", method="POST", request_body=recorded
            )
        ],
    )
    with Snapshot.open(path) as snapshot:
        [entry] = list(snapshot.entries())
        assert entry.req_offset is not None and snapshot.read_request(entry) == recorded
        legacy = entry.model_copy(update={"req_offset": None, "req_length": None})
        assert snapshot.read_request(legacy) is None
        assert IndexEntry.from_cdxj(legacy.to_cdxj()) == legacy
        request = b"qty=1&sku=tea&_=1800000000000"
        with_bodies = ReplayIndex(snapshot.entries(), body_loader=snapshot.read_request)
        match = with_bodies.lookup("POST", "https://s.test/cart/add", request)
        assert match is not None and match.kind == "canonical"
        assert "underscore-cache-buster" in (match.rule or "")
        without = ReplayIndex([legacy]).lookup("POST", "https://s.test/cart/add", request)
        assert without is not None and without.kind == "fuzzy"
