// The report's integrity: canonical JSON (sorted keys, no spaces) signed with HMAC-SHA256 under the
// episode's secret; susbench/extension_bridge.py verifies the same bytes.
"use strict";
(() => {
  function hex(bytes) {
    return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  function canonical(value) {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (value && typeof value === "object") {
      return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
    }
    return JSON.stringify(value);
  }

  async function hmacHex(secretHex, text) {
    const raw = new Uint8Array(secretHex.match(/../g).map((h) => parseInt(h, 16)));
    const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return hex(new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text))));
  }

  const helper = (globalThis.pageHelper ||= {});
  helper.signing = { hex, canonical, hmacHex };
})();
