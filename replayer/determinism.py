"""Turn a recorded response into what the browser gets: determinism shim in, HSTS out, CSP amended.

The shim (`determinism.js`) must run before any page script, so it is inserted as the first
element of every HTML document. Instead of dropping the page's Content-Security-Policy (which
would change the page's behaviour), the policy is amended with the shim's sha256 hash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from mitmproxy.net import encoding
from pydantic import Field

from susbench.core.models import Frozen, SnapshotManifest

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"}
)
HSTS = "strict-transport-security"
CSP = "content-security-policy"
SNIFF_BYTES = 4096
_HEAD_OPEN = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_HTML_OPEN = re.compile(rb"<html(?:\s[^>]*)?>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!doctype[^>]*>", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_META_CSP = re.compile(
    rb"""(<meta[^>]+http-equiv\s*=\s*["']?content-security-policy["']?[^>]*content\s*=\s*)(["'])(.*?)\2""",
    re.IGNORECASE | re.DOTALL,
)
_DECODABLE = {"gzip", "deflate", "br", "zstd", "identity"}


def _compact(source: str) -> str:
    """The shim as served: without its indentation, blank lines and line comments (it is inlined
    into every HTML document, so each byte is parsed at every page load)."""
    lines = (line.strip() for line in source.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


SHIM_SOURCE = _compact(
    Path(__file__).with_name("determinism.js").read_text(encoding="utf-8").split("*/\n", 1)[1]
)


class DeterminismConfig(Frozen):
    """The frozen world of one snapshot, from its manifest."""

    clock_seed_ms: int
    random_seed: int = 0
    timezone: str = "America/New_York"
    locale: str = "en-US"
    enabled: bool = Field(default=True, description="False serves HTML exactly as recorded")

    @classmethod
    def from_manifest(cls, manifest: SnapshotManifest) -> DeterminismConfig:
        return cls(
            clock_seed_ms=manifest.clock_seed_ms,
            random_seed=manifest.random_seed,
            timezone=manifest.timezone,
            locale=manifest.locale,
        )


def shim_for(config: DeterminismConfig, document_url: str) -> str:
    """The shim's full text for one document; its PRNG seed mixes the snapshot seed and URL."""
    digest = hashlib.sha256(f"{config.random_seed}\n{document_url}".encode()).digest()
    seed = [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4)]
    settings = {
        "clock": config.clock_seed_ms,
        "seed": seed,
        "timezone": config.timezone,
        "locale": config.locale,
    }
    return SHIM_SOURCE.replace("__SUSBENCH_CONFIG__", json.dumps(settings, sort_keys=True))


def script_hash(script: str) -> str:
    """The CSP source expression allowing exactly this inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def amend_csp(policy: str, source: str) -> str:
    """Allow `source` in each policy that governs inline scripts; never loosen anything else.

    Only the directive the browser uses for `<script>` elements is touched (script-src-elem, else
    script-src, else default-src). A directive with 'unsafe-inline' and no nonce/hash already
    allows the shim (adding a hash there would switch 'unsafe-inline' off), so it is left alone.
    """
    amended = []
    for single in policy.split(","):
        directives = [part.strip() for part in single.split(";")]
        names = [part.split(None, 1)[0].lower() if part else "" for part in directives]
        for wanted in ("script-src-elem", "script-src", "default-src"):
            if wanted in names:
                index = names.index(wanted)
                tokens = directives[index].split()
                lowered = [token.lower() for token in tokens[1:]]
                keyed = any(token.startswith(("'nonce-", "'sha")) for token in lowered)
                if "'unsafe-inline'" not in lowered or keyed:
                    kept = [token for token in tokens[1:] if token.lower() != "'none'"]
                    directives[index] = " ".join([tokens[0], *kept, source])
                break
        amended.append("; ".join(part for part in directives if part))
    return ", ".join(amended)


def _charset(headers: list[tuple[str, str]], body: bytes) -> list[tuple[str, str]]:
    """Pin the charset in Content-Type: the shim may push a <meta charset> past the sniff window."""
    for index, (name, value) in enumerate(headers):
        if name.lower() == "content-type":
            if "charset" in value.lower():
                return headers
            found = _META_CHARSET.search(body[:SNIFF_BYTES])
            if found is None:
                return headers
            charset = found.group(1).decode("ascii", "replace")
            return [*headers[:index], (name, f"{value}; charset={charset}"), *headers[index + 1 :]]
    return headers


def insert_shim(body: bytes, script: str) -> bytes:
    """Put `<script>` right after <head>, else <html>, else the doctype, else at the start."""
    tag = b"<script>" + script.encode() + b"</script>"
    window = body[:SNIFF_BYTES]
    for pattern in (_HEAD_OPEN, _HTML_OPEN, _DOCTYPE):
        found = pattern.search(window)
        if found is not None:
            return body[: found.end()] + tag + body[found.end() :]
    return tag + body


def _amend_meta_csp(body: bytes, source: str) -> bytes:
    def replace(found: re.Match[bytes]) -> bytes:
        policy = found.group(3).decode("utf-8", "replace")
        return found.group(1) + found.group(2) + amend_csp(policy, source).encode() + found.group(2)

    return _META_CSP.sub(replace, body)


def is_html(headers: list[tuple[str, str]]) -> bool:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower() in ("text/html", "application/xhtml+xml")
    return False


def rewrite(
    headers: list[tuple[str, str]],
    body: bytes,
    document_url: str,
    config: DeterminismConfig,
    method: str = "GET",
) -> tuple[list[tuple[str, str]], bytes]:
    """Headers and body to serve for a recorded response (body still content-encoded)."""
    served = []
    for name, value in headers:
        lowered = name.lower()
        if lowered in HOP_BY_HOP or lowered == "content-length":
            continue
        if lowered == HSTS:
            served.append(("X-Archive-Orig-Strict-Transport-Security", value))
            continue
        served.append((name, value))
    if config.enabled and method != "HEAD" and is_html(served):
        codings = [value.strip().lower() for name, value in served if name.lower() == "content-encoding"]
        codings = [coding for part in codings for coding in part.split(",") if coding.strip()]
        if all(coding.strip() in _DECODABLE for coding in codings):
            try:
                for coding in reversed(codings):
                    body = encoding.decode(body, coding.strip())
            except ValueError:
                return _with_length(served, body)
            served = [(name, value) for name, value in served if name.lower() != "content-encoding"]
            script = shim_for(config, document_url)
            source = script_hash(script)
            served = [
                (name, amend_csp(value, source) if name.lower() == CSP else value) for name, value in served
            ]
            served = _charset(served, body)
            body = insert_shim(_amend_meta_csp(body, source), script)
    return _with_length(served, body)


def _with_length(headers: list[tuple[str, str]], body: bytes) -> tuple[list[tuple[str, str]], bytes]:
    return [*headers, ("Content-Length", str(len(body)))], body
