"""Unit tests of response rewriting: shim insertion, CSP hashes, HSTS, content encodings."""

from __future__ import annotations

import gzip

from susbench.replayer.determinism import DeterminismConfig, amend_csp, rewrite, script_hash, shim_for

CONFIG = DeterminismConfig(
    clock_seed_ms=1_764_400_000_000, random_seed=7, timezone="Europe/Berlin", locale="de-DE"
)
HASH = "'sha256-abc='"


def header(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name.lower()]


def test_csp_gets_the_hash_where_inline_scripts_are_governed() -> None:
    assert amend_csp("default-src 'self'", HASH) == f"default-src 'self' {HASH}"
    assert amend_csp("script-src 'self'; img-src *", HASH) == f"script-src 'self' {HASH}; img-src *"
    both = amend_csp("default-src 'none'; script-src-elem https://cdn.test", HASH)
    assert both == f"default-src 'none'; script-src-elem https://cdn.test {HASH}"
    nonce = amend_csp("script-src 'nonce-r4nd' 'unsafe-inline'", HASH)
    assert nonce == f"script-src 'nonce-r4nd' 'unsafe-inline' {HASH}"
    assert amend_csp("script-src 'unsafe-inline'", HASH) == "script-src 'unsafe-inline'"
    assert amend_csp("img-src *", HASH) == "img-src *"
    assert amend_csp("script-src 'none'", HASH) == f"script-src {HASH}"
    assert amend_csp("script-src 'self', default-src 'self'", HASH).count(HASH) == 2


def test_html_is_decoded_injected_and_served_with_fixed_length() -> None:
    page = b"<!doctype html><html><head><meta charset=utf-8><title>t</title></head><body>x</body></html>"
    headers, body = rewrite(
        [
            ("Content-Type", "text/html"),
            ("Content-Encoding", "gzip"),
            ("Transfer-Encoding", "chunked"),
            ("Strict-Transport-Security", "max-age=1"),
            ("Content-Security-Policy", "script-src 'self'"),
            ("Content-Length", "999"),
        ],
        gzip.compress(page),
        "https://s.test/",
        CONFIG,
    )
    script = shim_for(CONFIG, "https://s.test/")
    assert body.startswith(
        b"<!doctype html><html><head><script>" + script.encode() + b"</script><meta charset"
    )
    assert header(headers, "Content-Encoding") == [] and header(headers, "Transfer-Encoding") == []
    assert header(headers, "Content-Length") == [str(len(body))]
    assert header(headers, "Strict-Transport-Security") == []
    assert header(headers, "X-Archive-Orig-Strict-Transport-Security") == ["max-age=1"]
    assert header(headers, "Content-Security-Policy") == [f"script-src 'self' {script_hash(script)}"]
    assert header(headers, "Content-Type") == ["text/html; charset=utf-8"]


def test_meta_csp_is_amended_and_non_html_is_served_as_recorded() -> None:
    page = (
        b"<html><head><meta http-equiv='Content-Security-Policy' content=\"script-src 'self'\"></head></html>"
    )
    _, body = rewrite([("Content-Type", "text/html; charset=utf-8")], page, "https://s.test/a", CONFIG)
    assert script_hash(shim_for(CONFIG, "https://s.test/a")).encode() in body
    packed = gzip.compress(b"body{}")
    headers, served = rewrite(
        [("Content-Type", "text/css"), ("Content-Encoding", "gzip")], packed, "u", CONFIG
    )
    assert served == packed and header(headers, "Content-Encoding") == ["gzip"]


def test_seed_depends_on_snapshot_seed_and_url_only() -> None:
    assert shim_for(CONFIG, "https://s.test/") == shim_for(CONFIG, "https://s.test/")
    assert shim_for(CONFIG, "https://s.test/") != shim_for(CONFIG, "https://s.test/b")
    other = CONFIG.model_copy(update={"random_seed": 8})
    assert shim_for(other, "https://s.test/") != shim_for(CONFIG, "https://s.test/")
